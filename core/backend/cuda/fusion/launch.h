// fused_elementwise kernels on a GPU: a group's source (cuda_source.h) compiled for the
// device's architecture (nvrtc_compile.h), loaded with the runtime's library API
// (cudaLibraryLoadData / cudaLibraryGetKernel; never libcuda) and launched with
// cudaLaunchKernel. Built only with --config=cuda.
//
// Loaded kernels live as long as the process, one per group structure and architecture (a
// kernel is no resource worth unloading, and unloading at exit would race the runtime's own
// teardown). Thread-safe. Errors: graft::Error "[cuda] ...".
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "core/backend/cuda/fusion/cuda_source.h"
#include "core/primitives/fusion.h"

namespace graft::cuda::fusion {

struct LoadedKernel {
  cudaKernel_t kernel = nullptr;
  int num_inputs = 0;
  int num_outputs = 0;
  int arch = 0;  // what it was compiled for
};

// Compute capability of `device` as major * 10 + minor (asked once per device).
int device_arch(int device);

// The group's kernel for `device`: emitted, compiled and loaded on the first request for its
// structure (structure_key) and the device's architecture.
const LoadedKernel& kernel_for(const GroupSpec& g, int device);
const LoadedKernel& kernel_for(const FusedElementwise& f, int device);

// Enqueues k over n elements on `stream` (device `device`, which the caller has made current):
// ins[i] is input i's device data (a broadcast scalar's one value), outs[o] output o's buffer.
// Nothing is enqueued for n == 0.
void launch(const LoadedKernel& k, int64_t n, const void* const* ins, void* const* outs, int device,
            cudaStream_t stream);

}  // namespace graft::cuda::fusion
