// Internals of nn::causal_attention (nn/attention.h): the tiled forward and backward passes.
//
// Both work in the "rows" layout: q-like arrays [B, T, H, D] become [B, KV, T*G, D] (G =
// H / KV), so that query row r of kv head h is (t = r / G, head h * G + r % G). A query tile
// of the rows layout is then one dense slice whose G heads share the same k / v tile, and a
// GEMM over [B, KV] batches does all of them at once: GQA never repeats k or v. k / v-like
// arrays become [B, KV, S, D]. Everything is in the compute dtype (f64 for f64 inputs, else
// f32).
#pragma once

#include <cstdint>

#include "core/array.h"
#include "nn/attention.h"

namespace graft::nn::detail {

struct AttentionGeometry {
  int64_t B, T, H, D, S, KV, G;
  double scale;
  int64_t block_q, block_k;
  DType compute;
};

// Checks the shapes (throws "[op] ...") and fills in the sizes, scale and blocks.
AttentionGeometry attention_geometry(const char* op, const Array& q, const Array& k, const Array& v,
                                     const AttentionOptions& options);

Array to_rows(const Array& x, const AttentionGeometry& g);        // [B,T,H,D] -> [B,KV,T*G,D]
Array from_rows(const Array& x, const AttentionGeometry& g);      // the inverse
Array kv_to_heads(const Array& x, const AttentionGeometry& g);    // [B,S,KV,D] -> [B,KV,S,D]
Array kv_from_heads(const Array& x, const AttentionGeometry& g);  // the inverse

struct FlashForward {
  Array o;    // [B, KV, T*G, D], rows layout
  Array lse;  // [B, KV, T*G, 1]: log sum_s exp(scores) per query row (scores include scale)
};

// q in rows layout, k, v in heads layout (all in the compute dtype).
FlashForward flash_forward(const Array& q, const Array& k, const Array& v,
                           const AttentionGeometry& g);

struct FlashGrads {
  Array dq, dk, dv;  // rows / heads / heads layouts
};

// FlashAttention-2's backward: tile probabilities recomputed from lse. do_ (rows layout) is
// the cotangent of o.
FlashGrads flash_backward(const Array& q, const Array& k, const Array& v, const Array& o,
                          const Array& lse, const Array& do_, const AttentionGeometry& g);

}  // namespace graft::nn::detail
