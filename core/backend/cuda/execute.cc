#include "core/backend/cuda/execute.h"

#include <iterator>
#include <map>
#include <mutex>
#include <utility>
#include <vector>

#include "core/backend/cpu/run_body.h"
#include "core/backend/cuda/kernel.h"
#include "core/backend/cuda/runtime/allocator.h"
#include "core/backend/cuda/runtime/stream.h"
#include "core/error.h"

namespace graft::cuda {

std::shared_ptr<Buffer> upload(int device, const Buffer& host) {
  std::shared_ptr<Buffer> b = allocate_buffer(device, host.bytes(), "a host operand");
  // Synchronous: the host buffer may die right after (pageable memory).
  if (host.bytes())
    copy_to_device_sync(device, b->data(), host.data(), host.bytes(), compute_stream(device));
  return b;
}

namespace {

bool is_constant(const Program& p, const std::shared_ptr<Buffer>& b) {
  for (const Array& c : p.constant_values) {
    if (c.node()->evaluated() && c.node()->buffers[c.output_index()] == b) return true;
  }
  return false;
}

// A program constant's copy on each device, kept while the host buffer lives (a dead host
// buffer's address may come back for another constant: the weak pointer tells). Copies of
// constants whose host buffer died are dropped whenever a new one is made, so programs
// compiled and discarded over a long run do not pin device memory.
std::shared_ptr<Buffer> constant_on(int device, const std::shared_ptr<Buffer>& host) {
  struct Kept {
    std::weak_ptr<Buffer> host;
    std::shared_ptr<Buffer> device;
  };
  static std::mutex mu;
  static auto* kept = new std::map<std::pair<const Buffer*, int>, Kept>();
  std::lock_guard<std::mutex> lock(mu);
  auto it = kept->find({host.get(), device});
  if (it != kept->end() && it->second.host.lock() == host) return it->second.device;
  for (auto e = kept->begin(); e != kept->end();) {
    e = e->second.host.expired() ? kept->erase(e) : std::next(e);
  }
  Kept& k = (*kept)[{host.get(), device}];
  k = {host, upload(device, *host)};
  return k.device;
}

void run_instr(const void* ctx, const Program& p, const Instr& instr, uint64_t,
               std::shared_ptr<Buffer>* const* in, std::shared_ptr<Buffer>* outs) {
  const int device = *static_cast<const int*>(ctx);
  Kernel k = kernels()[static_cast<int>(instr.prim->id())];
  if (k == nullptr)
    graft::fail("cuda", "no CUDA kernel for ", instr.prim->name(), " (not written yet)");
  const size_t n = instr.in.size();
  std::vector<std::shared_ptr<Buffer>> moved(n);
  std::vector<std::shared_ptr<Buffer>*> slots(n);
  std::vector<const Aval*> in_avals(n), out_avals(instr.out.size());
  for (size_t i = 0; i < n; ++i) {
    slots[i] = in[i];
    const std::shared_ptr<Buffer>& b = *in[i];
    if (b && b->on_host()) {
      moved[i] = is_constant(p, b) ? constant_on(device, b) : upload(device, *b);
      slots[i] = &moved[i];
    } else if (b && b->device() != device) {
      graft::fail(instr.prim->name(), "an operand lives on cuda:", b->device(),
                  ", the run on cuda:", device, ": device_put it there first");
    }
    in_avals[i] = &p.avals[instr.in[i]];
  }
  for (size_t o = 0; o < instr.out.size(); ++o) out_avals[o] = &p.avals[instr.out[o]];
  DeviceGuard guard(device);
  Call call(*instr.prim, slots.data(), in_avals.data(), static_cast<int>(n), out_avals.data(), outs,
            static_cast<int>(instr.out.size()), device, compute_stream(device));
  k(call);
  for (size_t o = 0; o < instr.out.size(); ++o) {
    if (!outs[o]) call.out_raw(static_cast<int>(o));  // e.g. a zero-sized output left alone
  }
}

}  // namespace

Buffers execute_on(int device, const Program& p, const BufferPlan& plan, Buffers& args) {
  return execute(p, plan, args, &run_instr, &device);
}

Buffers run_body_on(int device, const ControlPrimitive& p, size_t i, Buffers args,
                    size_t first_donated) {
  return cpu::run_body(p, i, std::move(args), first_donated, &run_instr, &device);
}

}  // namespace graft::cuda
