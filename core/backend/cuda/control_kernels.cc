// CUDA kernels of the control-flow and call primitives: as the CPU's (control_kernels.cc,
// call_kernels.cc), the bodies run through the executor with the plan kept with the
// primitive, here on the call's device (execute.h). scan hands its body each x slice as a
// view of its stacked input when the slice keeps 64-byte alignment, else a device copy, and
// copies each y into the stacked output on the stream. cond's index and while_loop's
// predicate are read on the host (a synchronizing copy of one element), as XLA's GPU backend
// does for data-dependent control flow. debug_print formats host copies of its values.
#include <algorithm>
#include <iterator>
#include <utility>

#include "core/backend/cuda/execute.h"
#include "core/backend/cuda/kernel.h"
#include "core/backend/cuda/runtime/allocator.h"
#include "core/backend/cuda/runtime/check.h"
#include "core/error.h"
#include "core/primitives/call.h"
#include "core/primitives/control.h"
#include "core/primitives/debug.h"

namespace graft::cuda {
namespace {

Buffers inputs(const Call& c, int begin, int end) {
  Buffers out;
  out.reserve(static_cast<size_t>(end - begin));
  for (int i = begin; i < end; ++i) out.push_back(c.in_buffer(i));
  return out;
}

void check_count(const Primitive& p, const Buffers& outs, size_t n) {
  if (outs.size() != n)
    graft::fail(p.name(), "body returned ", outs.size(), " arrays, expected ", n);
}

size_t row_bytes(const Aval& a, int64_t length) {
  return length ? static_cast<size_t>(numel(a.shape) / length * dtype_size(a.dtype)) : 0;
}

void copy_on_device(Call& c, void* dst, const void* src, size_t bytes) {
  if (bytes) {
    check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, c.stream()),
          "cudaMemcpyAsync (scan slice)");
  }
}

void scan_kernel(Call& c) {
  const auto& p = c.params<ScanPrimitive>();
  const int nc = p.num_consts(), nk = p.num_carry(), nx = p.num_xs(), ny = p.num_ys();
  const Buffers consts = inputs(c, 0, nc);
  Buffers carry = inputs(c, nc, nc + nk);
  std::vector<size_t> x_bytes(nx), y_bytes(ny);
  for (int j = 0; j < nx; ++j) x_bytes[j] = row_bytes(c.in_aval(nc + nk + j), p.length());
  for (int j = 0; j < ny; ++j) y_bytes[j] = row_bytes(c.out_aval(nk + j), p.length());
  for (int64_t step = 0; step < p.length(); ++step) {
    const int64_t i = p.reverse() ? p.length() - 1 - step : step;
    Buffers args(consts.begin(), consts.end());
    args.insert(args.end(), std::make_move_iterator(carry.begin()),
                std::make_move_iterator(carry.end()));
    for (int j = 0; j < nx; ++j) {
      const size_t offset = static_cast<size_t>(i) * x_bytes[j];
      if (x_bytes[j] % 64 == 0) {
        args.push_back(Buffer::view(c.in_buffer(nc + nk + j), offset, x_bytes[j]));
        continue;
      }
      std::shared_ptr<Buffer> slice = allocate_buffer(c.device(), x_bytes[j], "scan x slice");
      copy_on_device(c, slice->data(), c.in<char>(nc + nk + j) + offset, x_bytes[j]);
      args.push_back(std::move(slice));
    }
    Buffers outs = run_body_on(c.device(), p, 0, std::move(args), static_cast<size_t>(nc));
    check_count(p, outs, static_cast<size_t>(nk + ny));
    carry.assign(std::make_move_iterator(outs.begin()), std::make_move_iterator(outs.begin() + nk));
    for (int j = 0; j < ny; ++j) {
      copy_on_device(c, c.out<char>(nk + j) + i * y_bytes[j], outs[nk + j]->data(), y_bytes[j]);
    }
  }
  for (int k = 0; k < nk; ++k) c.set_output(k, std::move(carry[k]));
}

// A device scalar's value on the host (waits for the stream).
template <typename T>
T read_scalar(const std::shared_ptr<Buffer>& b, DType dtype) {
  return Array::from_buffer(b, {}, dtype).item<T>();
}

void cond_kernel(Call& c) {
  const auto& p = c.params<CondPrimitive>();
  const auto n = static_cast<int64_t>(p.num_branches());
  const int64_t index =
      std::clamp<int64_t>(read_scalar<int64_t>(c.in_buffer(0), c.in_aval(0).dtype), 0, n - 1);
  Buffers outs =
      run_body_on(c.device(), p, static_cast<size_t>(index), inputs(c, 1, c.num_inputs()));
  check_count(p, outs, p.out_avals().size());
  for (size_t o = 0; o < outs.size(); ++o) c.set_output(static_cast<int>(o), std::move(outs[o]));
}

void while_kernel(Call& c) {
  const auto& p = c.params<WhilePrimitive>();
  const int ncc = p.num_cond_consts(), nbc = p.num_body_consts();
  const Buffers cc = inputs(c, 0, ncc), bc = inputs(c, ncc, ncc + nbc);
  Buffers carry = inputs(c, ncc + nbc, c.num_inputs());
  for (;;) {
    Buffers args = cc;
    args.insert(args.end(), carry.begin(), carry.end());
    Buffers pred = run_body_on(c.device(), p, 0, std::move(args));
    check_count(p, pred, 1);
    if (!read_scalar<bool>(pred[0], DType::kBool)) break;
    args = bc;
    args.insert(args.end(), std::make_move_iterator(carry.begin()),
                std::make_move_iterator(carry.end()));
    Buffers next = run_body_on(c.device(), p, 1, std::move(args), static_cast<size_t>(nbc));
    check_count(p, next, static_cast<size_t>(c.num_inputs() - ncc - nbc));
    carry = std::move(next);
  }
  for (size_t k = 0; k < carry.size(); ++k) c.set_output(static_cast<int>(k), std::move(carry[k]));
}

void run_call(Call& c, size_t body) {
  const auto& p = c.params<CallPrimitive>();
  Buffers outs = run_body_on(c.device(), p, body, inputs(c, 0, c.num_inputs()));
  if (outs.size() != p.out_avals().size()) {
    graft::fail(p.name(), p.fn_name(), " returned ", outs.size(), " arrays, expected ",
                p.out_avals().size());
  }
  for (size_t o = 0; o < outs.size(); ++o) c.set_output(static_cast<int>(o), std::move(outs[o]));
}

void custom_jvp_kernel(Call& c) { run_call(c, 0); }
void custom_vjp_kernel(Call& c) {
  run_call(c, c.params<CustomVjpCall>().residual_outputs() ? 1 : 0);
}
void remat_kernel(Call& c) { run_call(c, 0); }
void checkpoint_name_kernel(Call& c) { c.alias(0, 0); }

// Formats the values (read through host copies, which wait for the stream), then passes every
// input through.
void debug_print_kernel(Call& c) {
  std::vector<Array> ins;
  for (int i = 0; i < c.num_inputs(); ++i) {
    const Aval& a = c.in_aval(i);
    ins.push_back(Array::from_buffer(c.in_buffer(i), a.shape, a.dtype, a.weak));
  }
  debug_print_emit(c.params<DebugPrint>().format(ins));
  for (int i = 0; i < c.num_inputs(); ++i) c.alias(i, i);
}

}  // namespace

void register_control_kernels(KernelTable& table) {
  table[static_cast<int>(PrimitiveId::kScan)] = &scan_kernel;
  table[static_cast<int>(PrimitiveId::kCond)] = &cond_kernel;
  table[static_cast<int>(PrimitiveId::kWhileLoop)] = &while_kernel;
  table[static_cast<int>(PrimitiveId::kCustomJvpCall)] = &custom_jvp_kernel;
  table[static_cast<int>(PrimitiveId::kCustomVjpCall)] = &custom_vjp_kernel;
  table[static_cast<int>(PrimitiveId::kRemat)] = &remat_kernel;
  table[static_cast<int>(PrimitiveId::kCheckpointName)] = &checkpoint_name_kernel;
  table[static_cast<int>(PrimitiveId::kDebugPrint)] = &debug_print_kernel;
}

}  // namespace graft::cuda
