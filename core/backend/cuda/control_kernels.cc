// CUDA kernels of the control-flow and call primitives (core/backend/control_kernels.h), and
// fused_reduce's (its body run as it is):
// bodies run through the executor on the call's device (execute.h); scan's x slices that
// would break 64-byte alignment and its stacked ys are copied on the device's stream.
// debug_print formats host copies of its values; pure_callback calls its host function on
// host copies and copies the results to the device.
#include "core/backend/control_kernels.h"

#include "core/backend/cuda/execute.h"
#include "core/backend/cuda/kernel.h"
#include "core/backend/cuda/runtime/allocator.h"
#include "core/backend/cuda/runtime/check.h"
#include "core/primitives/callback.h"
#include "core/primitives/debug.h"

namespace graft::cuda {
namespace {

struct DeviceControl {
  const Call& call;
  // dests unused: device bodies compute their outputs into their own buffers, which scan
  // then copies.
  Buffers run_body(const ControlPrimitive& p, size_t i, Buffers args, size_t first_donated,
                   const Buffers* /*dests*/ = nullptr) const {
    return run_body_on(call.device(), p, i, std::move(args), first_donated);
  }
  std::shared_ptr<Buffer> allocate(size_t bytes) const {
    return allocate_buffer(call.device(), bytes, "scan x slice");
  }
  void copy(void* dst, const void* src, size_t n) const {
    check(cudaMemcpyAsync(dst, src, n, cudaMemcpyDeviceToDevice, call.stream()),
          "cudaMemcpyAsync (scan)");
  }
};

void scan_kernel(Call& c) { control::scan(c, DeviceControl{c}); }
void cond_kernel(Call& c) { control::cond(c, DeviceControl{c}); }
void while_kernel(Call& c) { control::while_loop(c, DeviceControl{c}); }
void call_kernel(Call& c) { control::call(c, DeviceControl{c}); }
// fused_reduce runs its body: the group's fused kernel, then the reduction's kernel (no
// single-pass CUDA kernel yet).
void fused_reduce_kernel(Call& c) { control::run_whole_body(c, DeviceControl{c}); }
void checkpoint_name_kernel(Call& c) { c.alias(0, 0); }

// Formats the values (read through host copies, which wait for the stream), then passes every
// input through.
void debug_print_kernel(Call& c) {
  debug_print_emit(c.params<DebugPrint>().format(c.input_arrays()));
  for (int i = 0; i < c.num_inputs(); ++i) c.alias(i, i);
}

// The results' host buffers must live until the copies have run: the kernel waits for them.
void pure_callback_kernel(Call& c) {
  std::vector<std::shared_ptr<const Buffer>> outs = c.params<PureCallback>().run(c.input_arrays());
  for (int o = 0; o < c.num_outputs(); ++o) {
    const size_t bytes = outs[o]->bytes();
    if (bytes == 0) continue;
    check(cudaMemcpyAsync(c.out_raw(o), outs[o]->data(), bytes, cudaMemcpyHostToDevice, c.stream()),
          "cudaMemcpyAsync (pure_callback)");
  }
  check(cudaStreamSynchronize(c.stream()), "cudaStreamSynchronize (pure_callback)");
}

}  // namespace

void register_control_kernels(KernelTable& table) {
  table[static_cast<int>(PrimitiveId::kScan)] = &scan_kernel;
  table[static_cast<int>(PrimitiveId::kCond)] = &cond_kernel;
  table[static_cast<int>(PrimitiveId::kWhileLoop)] = &while_kernel;
  table[static_cast<int>(PrimitiveId::kCustomJvpCall)] = &call_kernel;
  table[static_cast<int>(PrimitiveId::kCustomVjpCall)] = &call_kernel;
  table[static_cast<int>(PrimitiveId::kRemat)] = &call_kernel;
  table[static_cast<int>(PrimitiveId::kFusedReduce)] = &fused_reduce_kernel;
  table[static_cast<int>(PrimitiveId::kCheckpointName)] = &checkpoint_name_kernel;
  table[static_cast<int>(PrimitiveId::kDebugPrint)] = &debug_print_kernel;
  table[static_cast<int>(PrimitiveId::kPureCallback)] = &pure_callback_kernel;
}

}  // namespace graft::cuda
