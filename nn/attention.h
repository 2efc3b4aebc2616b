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
  // Tile sizes of the fused kernel (64 x 64: bench/attention_bench on the llama-small shape).
  int64_t block_q = 64;  // query rows per tile (each covers G = heads / kv_heads heads)
  int64_t block_k = 64;  // keys per tile
};

// The production path: the fused flash_attention primitive (core/ops.h), whose CPU kernel
// computes each (batch, kv head, query tile) in cache with an online softmax over
// [block_q x block_k] score tiles (tiles past the causal diagonal skipped), so neither pass
// keeps a (T x S) matrix. Reverse mode keeps only q, k, v, o (f32) and the per-row
// logsumexp, and the backward pass recomputes each probability tile from them
// (FlashAttention-2). Works under grad, vjp, jvp, vmap, jit, scan and checkpoint, and its
// derivative is differentiable again (through a reference decomposition, at naive speed).
Array causal_attention(const Array& q, const Array& k, const Array& v,
                       const AttentionOptions& options = {});

// The textbook version (materializes softmax(q k^T) per head): the reference in tests.
Array naive_causal_attention(const Array& q, const Array& k, const Array& v,
                             const AttentionOptions& options = {});

}  // namespace graft::nn
