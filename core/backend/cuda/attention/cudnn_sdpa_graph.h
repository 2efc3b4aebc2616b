// The operation graphs of cuDNN's fused flash attention, as cudnn-frontend's composite
// "sdpa" and "sdpa_backward" nodes lower them for cuDNN 9 (matmul, pointwise, reduction and
// reshape operations that cuDNN's runtime-fusion engines recognize as one attention kernel),
// specialized to graft's flash_attention (core/primitives/attention.h):
//
//   layouts   q, o, do, dq [B, T, H, D] and k, v, dk, dv [B, S, KV, D] row-major, seen by
//             cuDNN as [B, H, T, D] / [B, KV, S, D] through strides (k and v transposed to
//             [B, KV, D, S] where a product needs them so); GQA by broadcasting KV to H heads
//             (the backward sums dk, dv over each kv head's H / KV query heads).
//   scores    s = scale * q.k (scale a by-value f32), causal with the diagonal at the bottom
//             right: query t sees key s iff t + S - T >= s.
//   stats     f32 [B, H, T] (contiguous, cuDNN's layout): max + log(sum exp(s - max)), the
//             natural-log log-sum-exp of the scaled scores, i.e. exactly graft's lse.
//   backward  delta = rowsum(do * o) - dlse, an f32 [B, H, T] intermediate in the workspace
//             (cudnn-frontend's "softmax_sum" node multiplies by a by-value 1 instead; with
//             `dlse` false this builds that graph). dq is accumulated in f32 in the workspace
//             ([B, H, T, D] contiguous), then converted.
//
// Builds descriptors only: no device, handle or memory is touched. Errors as GraphBuilder's.
#pragma once

#include <cstdint>

#include "core/backend/cuda/attention/cudnn_graph_builder.h"

namespace graft::cuda::cudnn {

struct SdpaDims {
  int64_t B, T, H, S, KV, D;
  cudnnDataType_t io;  // CUDNN_DATA_HALF or CUDNN_DATA_BFLOAT16
  bool dlse = true;    // backward: subtract dlse from the softmax sum
};

// The uids a plan binds at execution.
namespace sdpa_uid {
inline constexpr int64_t kQ = 1, kK = 2, kV = 3, kO = 4, kStats = 5, kDO = 6, kDQ = 7, kDK = 8,
                         kDV = 9, kDlse = 10, kDelta = 11, kDqAccum = 12, kScale = 20, kNegInf = 21,
                         kSeqQ = 22, kSeqKV = 23, kOne = 24;
}

void build_sdpa_forward(GraphBuilder& g, const SdpaDims& d);
void build_sdpa_backward(GraphBuilder& g, const SdpaDims& d);

}  // namespace graft::cuda::cudnn
