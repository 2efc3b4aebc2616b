// Causal self-attention with grouped-query heads.
//
// Shapes: q [batch, T, heads, head_dim]; k, v [batch, S, kv_heads, head_dim] with
// heads % kv_heads == 0 (query head h reads kv head h / (heads / kv_heads)). Causality is
// aligned to the end: query t sits at position S - T + t and sees keys 0 .. S - T + t, so
// T == S is training and T < S is decoding against a cache. Result: [batch, T, heads,
// head_dim], in q's dtype (scores and softmax accumulate in f32; in f64 for f64 inputs).
#pragma once

#include <cstdint>

#include "core/array.h"

namespace graft::nn {

struct AttentionOptions {
  double scale = 0;      // 0 means 1 / sqrt(head_dim)
  int64_t block_q = 64;  // query tile (tiled implementation)
  int64_t block_k = 64;  // key tile (tiled implementation)
};

// The production path: computed in tiles, flash-attention style, so neither the forward
// nor the backward pass keeps a (T x S) matrix.
Array causal_attention(const Array& q, const Array& k, const Array& v,
                       const AttentionOptions& options = {});

// The textbook version (materializes softmax(q k^T) per head): the reference in tests.
Array naive_causal_attention(const Array& q, const Array& k, const Array& v,
                             const AttentionOptions& options = {});

}  // namespace graft::nn
