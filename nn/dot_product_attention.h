// jax.nn.dot_product_attention: softmax(q k^T * scale + bias, masked) v, per head.
//
// Shapes as JAX's (BTNH): query [B, T, N, H], key and value [B, S, K, H] with N % K == 0 (query
// head n reads kv head n / (N / K), grouped-query attention); [T, N, H] / [S, K, H] without the
// batch dim also work. bias (any float dtype) and mask (bool, true = attend) are 4-D and
// broadcast to [B, N, T, S]. is_causal keeps key s <= query t (aligned to the start, as JAX:
// tril of a T x S matrix). query_seq_lengths / key_value_seq_lengths (i32 [B]) mask padded
// query rows and keys; padded query rows of the result are 0. Masked logits become
// -0.7 * f32 max, as JAX's, so a row with every key masked averages the values.
// Logits and softmax in f32 (f64 for f64 inputs); the result has the key's dtype.
// When only is_causal is set and T == S it runs the fused causal_attention (nn/attention.h).
// Errors: graft::Error("[dot_product_attention] ...") for shapes, dtypes and heads.
#pragma once

#include <optional>

#include "core/array.h"

namespace graft::nn {

struct DotProductAttentionOptions {
  std::optional<double> scale;  // none: 1 / sqrt(H)
  bool is_causal = false;
  std::optional<Array> query_seq_lengths;      // i32 [B]
  std::optional<Array> key_value_seq_lengths;  // i32 [B]
};

Array dot_product_attention(const Array& query, const Array& key, const Array& value,
                            const std::optional<Array>& bias = std::nullopt,
                            const std::optional<Array>& mask = std::nullopt,
                            const DotProductAttentionOptions& options = {});

}  // namespace graft::nn
