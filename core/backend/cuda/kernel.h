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

#include "core/backend/kernel_call.h"

namespace graft::cuda {

// A CUDA kernel's call (core/backend/kernel_call.h): device pointers, outputs in the device's
// memory, the device's compute stream.
class Call : public KernelCall {
 public:
  Call(const Primitive& p, std::shared_ptr<Buffer>* const* inputs, const Aval* const* in_avals,
       int num_inputs, const Aval* const* out_avals, std::shared_ptr<Buffer>* outputs,
       int num_outputs, int device, cudaStream_t stream)
      : KernelCall(p, inputs, in_avals, num_inputs, out_avals, outputs, num_outputs),
        device_(device),
        stream_(stream) {}

  // Output i's device buffer (out_aval(i)'s bytes), allocated on first use.
  void* out_raw(int i = 0);
  template <typename T>
  T* out(int i = 0) {
    return static_cast<T*>(out_raw(i));
  }
  // Scratch device memory for this kernel's work (several blocks may be asked for), released
  // in stream order when the call ends.
  void* scratch(size_t bytes);

  int device() const { return device_; }
  cudaStream_t stream() const { return stream_; }

 private:
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
GRAFT_CUDA_FAMILY_REGISTRAR(conv)    // conv_general_dilated through cuDNN (conv/)
GRAFT_CUDA_FAMILY_REGISTRAR(decomp)  // the factorizations through cuSOLVER / cuBLAS (decomp/)
GRAFT_CUDA_FAMILY_REGISTRAR(eig)     // eig through cuSOLVER's Xgeev (decomp/eig_kernels.cc)
GRAFT_CUDA_FAMILY_REGISTRAR(fft)     // lax.fft through cuFFT (fft/)
GRAFT_CUDA_FAMILY_REGISTRAR(complex) // real, imag, complex, conj (kernels/complex_kernels.cc)
GRAFT_CUDA_FAMILY_REGISTRAR(random)
GRAFT_CUDA_FAMILY_REGISTRAR(fusion)
GRAFT_CUDA_FAMILY_REGISTRAR(
    control)  // control flow, calls, debug_print, pure_callback (control_kernels.cc)
// Collectives and shard_map over NCCL (collective_kernels.cc, shard_map_kernel.cc).
GRAFT_CUDA_FAMILY_REGISTRAR(collective)
#undef GRAFT_CUDA_FAMILY_REGISTRAR

// The table, filled once. A null entry: the primitive has no CUDA kernel (running it is a
// graft::Error naming the primitive).
const KernelTable& kernels();

}  // namespace graft::cuda
