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
  double scale = 0;  // 0 means 1 / sqrt(head_dim)
  // Tile sizes of the tiled implementation (64 x 64 was fastest for the llama-small shape
  // on this machine's CPU: bench/attention_bench).
  int64_t block_q = 64;  // query rows per tile (each covers G = heads / kv_heads heads)
  int64_t block_k = 64;  // keys per tile
};

// The production path: computed in tiles, flash-attention style, so neither the forward
// nor the backward pass keeps a (T x S) matrix. The forward pass is an online softmax over
// [block_q x block_k] score tiles (tiles past the causal diagonal skipped, only diagonal tiles
// masked), batched over [batch, kv_heads, G query heads]; a custom_vjp keeps only q, k, v, o
// (f32) and the per-row logsumexp, and the backward pass recomputes each probability tile
// from them (FlashAttention-2). Written with graft ops: works under grad, vjp, vmap, jit, scan
// and checkpoint. Not under jvp / jacfwd (a custom_vjp function, as in JAX), and its
// derivative is not differentiable again (use naive_causal_attention for second order).
Array causal_attention(const Array& q, const Array& k, const Array& v,
                       const AttentionOptions& options = {});

// The textbook version (materializes softmax(q k^T) per head): the reference in tests.
Array naive_causal_attention(const Array& q, const Array& k, const Array& v,
                             const AttentionOptions& options = {});

}  // namespace graft::nn
