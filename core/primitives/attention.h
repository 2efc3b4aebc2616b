// Fused causal attention (flash attention) as primitives, so that a backend runs the whole
// score / softmax / weighted-sum chain of one (batch, kv head, query tile) in one kernel with
// the tile in cache, instead of a graph of tile-sized dots, reductions and elementwise ops.
//
//   flash_attention       q [B, T, H, D], k, v [B, S, KV, D] -> o [B, T, H, D], lse [B, T, H]
//   flash_attention_grad  q, k, v, o, lse, do [B, T, H, D], dlse [B, T, H] -> dq, dk, dv
//
// q, k, v (and o, do) share one float dtype: f64, f32, bf16 or f16. Half-precision values are
// computed in f32 (the kernels may round the probability tiles to the input's precision before
// their products, as FlashAttention does on GPUs) and lse / dlse are f32 for them
// (flash_lse_dtype): a bf16 lse would move exp(s - lse) by up to 2^-8 * |lse| in the backward
// pass. Mixed dtypes are computed in f32 (f64 if any is f64) by the public op. H is a
// multiple of KV: query head h reads kv head h / (H / KV) (grouped-query attention).
// Causality is aligned to the end: query t sits at position S - T + t and sees keys
// 0 .. S - T + t (T <= S). lse is log sum_s exp(scale * q.k_s) over the keys a row sees.
// block_q / block_k are the kernel's tile sizes (query positions, keys): they change the
// order of the sums, not the math.
//
// Rules: flash_attention's vjp is flash_attention_grad (FlashAttention-2's backward, which
// recomputes each probability tile from lse); everything else (both jvps, the grad's vjp, so
// second order) goes through a reference decomposition into dot_general, exp and reductions
// that materializes the [T, S] scores: exact, but only as fast as the graph it builds.
// vmap folds the batch axis into B. Under SPMD partitioning, splits of the batch dimension and
// of the head dimensions (H with KV alike, when they divide KV) pass through; T, S and D are
// computed whole.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/ir/primitive.h"

namespace graft {

struct FlashParams {
  double scale = 0;  // > 0
  int64_t block_q = 64, block_k = 64;
  bool operator==(const FlashParams&) const = default;
};

// What both primitives share: the parameters, their text and equality.
class FlashPrimitive : public Primitive {
 public:
  FlashPrimitive(PrimitiveId id, FlashParams p) : Primitive(id), p_(p) {}
  std::string params() const override;
  bool same_params(const Primitive& o) const override;
  const FlashParams& flash() const { return p_; }

 protected:
  FlashParams p_;
};

class FlashAttention : public FlashPrimitive {
 public:
  explicit FlashAttention(FlashParams p) : FlashPrimitive(PrimitiveId::kFlashAttention, p) {}
  std::vector<Aval> infer(const std::vector<Aval>& in) const override;
  Cost cost(const std::vector<Aval>& in, const std::vector<Aval>& out) const override;
  GRAFT_TRANSFORM_RULES;
  GRAFT_SHARDING_RULE;
};

class FlashAttentionGrad : public FlashPrimitive {
 public:
  explicit FlashAttentionGrad(FlashParams p)
      : FlashPrimitive(PrimitiveId::kFlashAttentionGrad, p) {}
  std::vector<Aval> infer(const std::vector<Aval>& in) const override;
  Cost cost(const std::vector<Aval>& in, const std::vector<Aval>& out) const override;
  GRAFT_TRANSFORM_RULES;
  GRAFT_SHARDING_RULE;
};

// The dtype of lse and dlse for q, k, v of dtype `d`: f32 for f16 / bf16, else `d`.
DType flash_lse_dtype(DType d);

// Checks q, k, v (ranks, sizes, one float dtype) and the parameters; errors name `op`.
void check_flash_attention(std::string_view op, const Aval& q, const Aval& k, const Aval& v,
                           const FlashParams& p);

// The multiply-adds of the causal score and weighted-sum products (per pass over q, k).
double flash_attention_macs(const Shape& q, const Shape& k);

}  // namespace graft
