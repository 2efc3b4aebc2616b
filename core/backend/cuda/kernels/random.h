// Launcher of the CUDA kernel of the random family: threefry2x32 (core/primitives/random.h),
// the Threefry-2x32 block cipher with 20 rounds that jax.random is built on. It computes the
// CPU kernel's bits exactly (core/backend/cpu/random_kernels.cc, which matches JAX), so random
// draws are the same on either device. Enqueues on `stream` and returns; errors (a failed
// launch) throw graft::Error. Built only with --config=cuda.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace graft::cuda {

// (y1[i], y2[i]) = threefry2x32((k1, k2), (x1[i], x2[i])) for i < n. A key word that is a
// scalar (rank 0) is one u32 read for every i (k1_scalar / k2_scalar); otherwise it has n
// elements. All pointers are device memory.
void launch_threefry2x32(const uint32_t* k1, bool k1_scalar, const uint32_t* k2, bool k2_scalar,
                         const uint32_t* x1, const uint32_t* x2, uint32_t* y1, uint32_t* y2,
                         int64_t n, cudaStream_t stream);

}  // namespace graft::cuda
