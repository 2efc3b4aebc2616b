// cuDNN's softmax statistics are f32 [B, H, T] (one row per head); graft's lse and dlse are
// [B, T, H] in the primitive's float type. These kernels convert between the two on the
// stream (no synchronization); they return the launch's status. Built only with
// --config=cuda.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "core/backend/cuda/attention/flash_attention.h"

namespace graft::cuda::attention {

// lse[b, t, h] (element type e) = stats[b, h, t].
cudaError_t stats_to_lse(Elem e, int64_t B, int64_t T, int64_t H, const float* stats, void* lse,
                         cudaStream_t stream);
// stats[b, h, t] = lse[b, t, h] (element type e), as f32.
cudaError_t lse_to_stats(Elem e, int64_t B, int64_t T, int64_t H, const void* lse, float* stats,
                         cudaStream_t stream);

}  // namespace graft::cuda::attention
