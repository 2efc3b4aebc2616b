#include "core/backend/cuda/attention/cudnn_sdpa_graph.h"

namespace graft::cuda::cudnn {
namespace {

using Dims = GraphBuilder::Dims;
namespace u = sdpa_uid;
constexpr cudnnDataType_t kF32 = CUDNN_DATA_FLOAT, kI32 = CUDNN_DATA_INT32,
                          kBool = CUDNN_DATA_BOOLEAN;

// graft's row-major [B, T, H, D] as cuDNN's [B, H, T, D].
Dims q_dims(const SdpaDims& d) { return {d.B, d.H, d.T, d.D}; }
Dims q_strides(const SdpaDims& d) { return {d.T * d.H * d.D, d.D, d.H * d.D, 1}; }
// [B, S, KV, D] as [B, KV, S, D], and transposed as [B, KV, D, S].
Dims kv_dims(const SdpaDims& d) { return {d.B, d.KV, d.S, d.D}; }
Dims kv_strides(const SdpaDims& d) { return {d.S * d.KV * d.D, d.D, d.KV * d.D, 1}; }
Dims kvt_dims(const SdpaDims& d) { return {d.B, d.KV, d.D, d.S}; }
Dims kvt_strides(const SdpaDims& d) { return {d.S * d.KV * d.D, d.D, 1, d.KV * d.D}; }
// Per-row statistics [B, H, T, 1], contiguous.
Dims row_dims(const SdpaDims& d) { return {d.B, d.H, d.T, 1}; }
Dims row_strides(const SdpaDims& d) { return {d.H * d.T, d.T, 1, 1}; }
// Scores [B, H, T, S] and their transposed view [B, H, S, T] (virtual).
Dims score_dims(const SdpaDims& d) { return {d.B, d.H, d.T, d.S}; }
Dims score_strides(const SdpaDims& d) { return {d.H * d.T * d.S, d.T * d.S, d.S, 1}; }
Dims score_t_dims(const SdpaDims& d) { return {d.B, d.H, d.S, d.T}; }
Dims score_t_strides(const SdpaDims& d) { return {d.H * d.T * d.S, d.T * d.S, 1, d.S}; }

int64_t pw(GraphBuilder& g, cudnnPointwiseMode_t mode, int64_t x, int64_t b, cudnnDataType_t out,
           cudnnDataType_t compute = kF32) {
  int64_t y = g.virt_like(x, out);
  g.pointwise(mode, x, b, -1, y, compute);
  return y;
}

// The bottom-right causal mask as cudnn-frontend's composite diagonal band mask builds it
// (right bound 0): keep s where row + S - T >= col, else -inf (by-value scalars S, T, -inf).
int64_t causal_mask(GraphBuilder& g, int64_t scores) {
  int64_t row = g.virt_like(scores, kI32), col = g.virt_like(scores, kI32);
  g.pointwise(CUDNN_POINTWISE_GEN_INDEX, scores, -1, -1, row, kF32, 2);
  g.pointwise(CUDNN_POINTWISE_GEN_INDEX, scores, -1, -1, col, kF32, 3);
  int64_t s_kv = g.scalar(u::kSeqKV, kI32), s_q = g.scalar(u::kSeqQ, kI32);
  int64_t shifted = pw(g, CUDNN_POINTWISE_ADD, row, s_kv, kI32, kI32);
  shifted = pw(g, CUDNN_POINTWISE_SUB, shifted, s_q, kI32, kI32);
  int64_t keep = pw(g, CUDNN_POINTWISE_CMP_GE, shifted, col, kBool, kBool);
  int64_t out = g.virt_like(scores, kF32);
  g.pointwise(CUDNN_POINTWISE_BINARY_SELECT, scores, g.scalar(u::kNegInf, kF32), keep, out, kF32);
  return out;
}

// dX = sum over the query heads of each kv head of p^T y: one matmul into dX when H == KV,
// else into a virtual per-query-head [B, H, S, D] summed down by a reduction.
void head_summed_matmul(GraphBuilder& g, const SdpaDims& d, int64_t pt, int64_t y, int64_t dx) {
  if (d.H == d.KV) {
    g.matmul(pt, y, dx);
    return;
  }
  int64_t full = g.virt({d.B, d.H, d.S, d.D}, {d.H * d.S * d.D, d.S * d.D, d.D, 1}, d.io);
  g.matmul(pt, y, full);
  g.reduction(CUDNN_REDUCE_TENSOR_ADD, full, dx);
}

}  // namespace

void build_sdpa_forward(GraphBuilder& g, const SdpaDims& d) {
  int64_t q = g.tensor(u::kQ, q_dims(d), q_strides(d), d.io);
  int64_t kt = g.tensor(u::kK, kvt_dims(d), kvt_strides(d), d.io);
  int64_t v = g.tensor(u::kV, kv_dims(d), kv_strides(d), d.io);
  int64_t o = g.tensor(u::kO, q_dims(d), q_strides(d), d.io);
  int64_t stats = g.tensor(u::kStats, row_dims(d), row_strides(d), kF32);
  int64_t scale = g.scalar(u::kScale, kF32);

  int64_t s = g.virt(score_dims(d), score_strides(d), kF32);
  g.matmul(q, kt, s);
  s = pw(g, CUDNN_POINTWISE_MUL, s, scale, kF32);
  s = causal_mask(g, s);
  // Softmax with its statistics, as cudnn-frontend's composite softmax node.
  int64_t max = g.virt(row_dims(d), row_strides(d), kF32);
  g.reduction(CUDNN_REDUCE_TENSOR_MAX, s, max);
  int64_t e = pw(g, CUDNN_POINTWISE_EXP, pw(g, CUDNN_POINTWISE_SUB, s, max, kF32), -1, kF32);
  int64_t sum = g.virt(row_dims(d), row_strides(d), kF32);
  g.reduction(CUDNN_REDUCE_TENSOR_ADD, e, sum);
  int64_t log_sum = pw(g, CUDNN_POINTWISE_LOG, sum, -1, kF32);
  g.pointwise(CUDNN_POINTWISE_ADD, max, log_sum, -1, stats, kF32);
  // The probabilities enter the second product in the io type (cuDNN requires it).
  int64_t p = pw(g, CUDNN_POINTWISE_DIV, e, sum, d.io);
  g.matmul(p, v, o);
}

void build_sdpa_backward(GraphBuilder& g, const SdpaDims& d) {
  int64_t q = g.tensor(u::kQ, q_dims(d), q_strides(d), d.io);
  int64_t kt = g.tensor(u::kK, kvt_dims(d), kvt_strides(d), d.io);
  int64_t vt = g.tensor(u::kV, kvt_dims(d), kvt_strides(d), d.io);
  int64_t o = g.tensor(u::kO, q_dims(d), q_strides(d), d.io);
  int64_t d_o = g.tensor(u::kDO, q_dims(d), q_strides(d), d.io);
  int64_t stats = g.tensor(u::kStats, row_dims(d), row_strides(d), kF32);
  int64_t dq = g.tensor(u::kDQ, q_dims(d), q_strides(d), d.io);
  int64_t dk = g.tensor(u::kDK, kv_dims(d), kv_strides(d), d.io);
  int64_t dv = g.tensor(u::kDV, kv_dims(d), kv_strides(d), d.io);
  int64_t delta = g.tensor(u::kDelta, row_dims(d), row_strides(d), kF32);
  int64_t dq_acc = g.tensor(u::kDqAccum, q_dims(d), {d.H * d.T * d.D, d.T * d.D, d.D, 1}, kF32);
  int64_t scale = g.scalar(u::kScale, kF32);

  // delta = rowsum(do * o) - dlse (cudnn-frontend: * 1). The product's virtual strides are
  // cudnn-frontend's (immaterial for a virtual tensor).
  int64_t prod = g.virt(q_dims(d), {d.H * d.T * d.D, d.T * d.D, d.H * d.D, 1}, kF32);
  g.pointwise(CUDNN_POINTWISE_MUL, d_o, o, -1, prod, kF32);
  int64_t rowsum = g.virt(row_dims(d), row_strides(d), kF32);
  g.reduction(CUDNN_REDUCE_TENSOR_ADD, prod, rowsum);
  if (d.dlse) {
    int64_t dlse = g.tensor(u::kDlse, row_dims(d), row_strides(d), kF32);
    g.pointwise(CUDNN_POINTWISE_SUB, rowsum, dlse, -1, delta, kF32);
  } else {
    g.pointwise(CUDNN_POINTWISE_MUL, rowsum, g.scalar(u::kOne, kF32), -1, delta, kF32);
  }

  // p = exp(scale * q.k - lse), causal.
  int64_t s = g.virt(score_dims(d), score_strides(d), kF32);
  g.matmul(q, kt, s);
  s = pw(g, CUDNN_POINTWISE_MUL, s, scale, kF32);
  s = pw(g, CUDNN_POINTWISE_SUB, s, stats, kF32);
  s = causal_mask(g, s);
  int64_t p = pw(g, CUDNN_POINTWISE_EXP, s, -1, kF32);

  // dv = p^T do.
  int64_t pt = g.virt(score_t_dims(d), score_t_strides(d), d.io);
  g.reshape(p, pt);
  head_summed_matmul(g, d, pt, d_o, dv);

  // ds = scale * p * (do.v - delta); dk = ds^T q.
  int64_t dp = g.virt(score_dims(d), score_strides(d), kF32);
  g.matmul(d_o, vt, dp);
  int64_t ds = pw(g, CUDNN_POINTWISE_SUB, dp, delta, kF32);
  ds = pw(g, CUDNN_POINTWISE_MUL, ds, p, kF32);
  ds = pw(g, CUDNN_POINTWISE_MUL, ds, scale, kF32);
  int64_t dst = g.virt(score_t_dims(d), score_t_strides(d), d.io);
  g.reshape(ds, dst);
  head_summed_matmul(g, d, dst, q, dk);

  // dq = ds k, accumulated in f32 then converted (cudnn-frontend's virtual reshape of k is f32).
  int64_t k = g.virt(kv_dims(d), kv_strides(d), kF32);
  g.reshape(kt, k);
  g.matmul(ds, k, dq_acc);
  g.pointwise(CUDNN_POINTWISE_IDENTITY, dq_acc, -1, -1, dq, kF32);
}

}  // namespace graft::cuda::cudnn
