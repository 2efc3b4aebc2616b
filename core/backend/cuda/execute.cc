#include "core/backend/cuda/execute.h"

#include <iterator>
#include <map>
#include <mutex>
#include <utility>
#include <vector>

#include "core/backend/cpu/run_body.h"
#include "core/backend/cuda/kernel.h"
#include "core/backend/cuda/linalg/dot_epilogue.h"
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

// What run_instr gets: the device, and for a top-level program its epilogue chains.
struct RunContext {
  int device;
  const EpiloguePlan* epilogues = nullptr;
  EpilogueStash* stash = nullptr;
};

// An instruction's part in an epilogue chain (epilogue_run.h), given its operands in device
// memory. False: not part of one, run its kernel.
bool run_epilogue_part(const RunContext& r, const Program& p, const Instr& instr,
                       std::shared_ptr<Buffer>* const* in, std::shared_ptr<Buffer>* outs) {
  if (r.epilogues == nullptr || r.epilogues->matches.empty()) return false;
  const EpiloguePlan::Part part = r.epilogues->parts[&instr - p.instrs.data()];
  if (part.role == EpiloguePlan::Role::kNone) return false;
  EpilogueStash::Operands& stash = r.stash->of[part.match];
  switch (part.role) {
    case EpiloguePlan::Role::kDot:
      stash.a = *in[0];
      stash.b = *in[1];
      break;
    case EpiloguePlan::Role::kBias:
      stash.bias = *in[0];
      break;
    case EpiloguePlan::Role::kResult: {
      const Instr& dot = p.instrs[r.epilogues->matches[part.match].dot];
      std::shared_ptr<Buffer>* operands[2] = {&stash.a, &stash.b};
      const Aval* in_avals[2] = {&p.avals[dot.in[0]], &p.avals[dot.in[1]]};
      const Aval* out_aval = &p.avals[instr.out[0]];
      DeviceGuard guard(r.device);
      Call call(*dot.prim, operands, in_avals, 2, &out_aval, outs, 1, r.device,
                compute_stream(r.device));
      dot_general_epilogue(call, stash.bias ? stash.bias->data() : nullptr,
                           r.epilogues->matches[part.match].activation);
      stash = {};
      return true;
    }
    case EpiloguePlan::Role::kAbsorbed:  // a step of the chain the GEMM's epilogue computes
    case EpiloguePlan::Role::kNone:
      break;
  }
  // Values of the chain nobody reads: allocated, never written.
  for (size_t o = 0; o < instr.out.size(); ++o) {
    const Aval& a = p.avals[instr.out[o]];
    outs[o] = allocate_buffer(r.device, numel(a.shape) * dtype_size(a.dtype), "epilogue chain");
  }
  return true;
}

void run_instr(const void* ctx, const Program& p, const Instr& instr, uint64_t,
               std::shared_ptr<Buffer>* const* in, std::shared_ptr<Buffer>* outs) {
  const RunContext& r = *static_cast<const RunContext*>(ctx);
  const int device = r.device;
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
  if (run_epilogue_part(r, p, instr, slots.data(), outs)) return;
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

EpiloguePlan plan_epilogues(const Program& p) {
  EpiloguePlan plan;
  plan.parts.resize(p.instrs.size());
  for (MatmulEpilogue& m : match_matmul_epilogues(p)) {
    const Instr& dot = p.instrs[m.dot];
    const DType dt = p.avals[dot.out[0]].dtype;
    const bool blaslt = dt == DType::kF32 || dt == DType::kF16 || dt == DType::kBF16;
    if (!blaslt || numel(p.avals[dot.in[0]].shape) == 0 || numel(p.avals[dot.in[1]].shape) == 0)
      continue;
    const int j = static_cast<int>(plan.matches.size());
    plan.parts[m.dot] = {EpiloguePlan::Role::kDot, j};
    for (int i : m.absorbed) {
      const bool bias = m.bias >= 0 && p.instrs[i].prim->id() == PrimitiveId::kBroadcastInDim &&
                        p.instrs[i].in[0] == m.bias;
      plan.parts[i] = {i == m.result ? EpiloguePlan::Role::kResult
                       : bias        ? EpiloguePlan::Role::kBias
                                     : EpiloguePlan::Role::kAbsorbed,
                       j};
    }
    plan.matches.push_back(std::move(m));
  }
  return plan;
}

Buffers execute_on(int device, const Program& p, const BufferPlan& plan, Buffers& args,
                   const EpiloguePlan* epilogues) {
  EpilogueStash stash;
  if (epilogues != nullptr) stash.of.resize(epilogues->matches.size());
  const RunContext ctx{device, epilogues, &stash};
  return execute(p, plan, args, &run_instr, &ctx);
}

Buffers run_body_on(int device, const ControlPrimitive& p, size_t i, Buffers args,
                    size_t first_donated) {
  const RunContext ctx{device};
  return cpu::run_body(p, i, std::move(args), first_donated, &run_instr, &ctx);
}

}  // namespace graft::cuda
