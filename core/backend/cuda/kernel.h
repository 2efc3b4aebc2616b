// The CUDA kernel table: one kernel per primitive in core/primitives/list.h, as the CPU's
// (core/backend/cpu/kernel.h). A kernel enqueues its work on the call's stream and returns;
// buffers are device memory (Buffer::DeviceMemory), freed in the stream's order, so a kernel
// never synchronizes unless it must read a value on the host (a data-dependent shape, which
// graft's primitives do not have).
//
// Built only with --config=cuda.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <memory>
#include <vector>

#include "core/array.h"
#include "core/primitive.h"

namespace graft::cuda {

class Call {
 public:
  Call(const Primitive& p, std::shared_ptr<Buffer>* const* inputs, const Aval* const* in_avals,
       int num_inputs, const Aval* const* out_avals, std::shared_ptr<Buffer>* outputs,
       int num_outputs, int device, cudaStream_t stream)
      : prim(p),
        inputs_(inputs),
        in_avals_(in_avals),
        out_avals_(out_avals),
        num_inputs_(num_inputs),
        num_outputs_(num_outputs),
        outputs_(outputs),
        device_(device),
        stream_(stream) {}

  const Primitive& prim;
  template <typename P>
  const P& params() const {
    return static_cast<const P&>(prim);
  }

  int num_inputs() const { return num_inputs_; }
  const Aval& in_aval(int i) const { return *in_avals_[i]; }
  const Aval& out_aval(int i = 0) const { return *out_avals_[i]; }
  const std::shared_ptr<Buffer>& in_buffer(int i) const { return *inputs_[i]; }
  // Device address of input i.
  const void* in_raw(int i) const { return (*inputs_[i])->data(); }
  template <typename T>
  const T* in(int i) const {
    return static_cast<const T*>(in_raw(i));
  }
  // Output i's device buffer (out_aval(i)'s bytes), allocated on first use.
  void* out_raw(int i = 0);
  template <typename T>
  T* out(int i = 0) {
    return static_cast<T*>(out_raw(i));
  }
  int num_outputs() const { return num_outputs_; }
  void set_output(int o, std::shared_ptr<Buffer> buffer) { outputs_[o] = std::move(buffer); }
  // Output `o` shares input `i`'s buffer (reshape, stop_gradient).
  void alias(int o, int i) { outputs_[o] = *inputs_[i]; }
  // Scratch device memory for this kernel's work (several blocks may be asked for), released
  // in stream order when the call ends.
  void* scratch(size_t bytes);

  int device() const { return device_; }
  cudaStream_t stream() const { return stream_; }

 private:
  std::shared_ptr<Buffer>* const* inputs_;
  const Aval* const* in_avals_;
  const Aval* const* out_avals_;
  int num_inputs_;
  int num_outputs_;
  std::shared_ptr<Buffer>* outputs_;
  int device_;
  cudaStream_t stream_;
  std::vector<std::shared_ptr<Buffer>> scratch_;  // released when the call ends
};

using Kernel = void (*)(Call& call);
using KernelTable = Kernel[kNumPrimitives];

// Each family registers its kernels (core/backend/cuda/kernels/<family>_kernels.cc).
#define GRAFT_CUDA_FAMILY_REGISTRAR(family) void register_##family##_kernels(KernelTable& table);
GRAFT_CUDA_FAMILY_REGISTRAR(elementwise)
GRAFT_CUDA_FAMILY_REGISTRAR(reduce)
GRAFT_CUDA_FAMILY_REGISTRAR(shape)
GRAFT_CUDA_FAMILY_REGISTRAR(index)
GRAFT_CUDA_FAMILY_REGISTRAR(linalg)
GRAFT_CUDA_FAMILY_REGISTRAR(attention)
GRAFT_CUDA_FAMILY_REGISTRAR(random)
GRAFT_CUDA_FAMILY_REGISTRAR(fusion)
GRAFT_CUDA_FAMILY_REGISTRAR(control)  // control flow, calls, debug_print (control_kernels.cc)
#undef GRAFT_CUDA_FAMILY_REGISTRAR

// The table, filled once. A null entry: the primitive has no CUDA kernel (running it is a
// graft::Error naming the primitive).
const KernelTable& kernels();

}  // namespace graft::cuda
