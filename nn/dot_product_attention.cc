// jax.nn.dot_product_attention as JAX's XLA implementation computes it (einsum logits, masks by
// `where` with a large negative, f32 softmax), with kv heads repeated for grouped queries.
#include "nn/dot_product_attention.h"

#include <cmath>
#include <limits>

#include "core/error.h"
#include "core/ops.h"
#include "nn/attention.h"

namespace graft::nn {
namespace {

constexpr const char* kOp = "dot_product_attention";

void check_lengths(const std::optional<Array>& len, int64_t batch, const char* name) {
  if (!len) return;
  if (len->dtype() != DType::kI32 || len->ndim() != 1 || len->shape()[0] != batch) {
    fail(kOp, name, " must be i32 [", batch, "], got ", len->aval().str());
  }
}

// [B, T, N, H] inputs checked: value like key, query's batch and H like key's, N % K == 0.
void check_shapes(const Array& q, const Array& k, const Array& v) {
  for (const Array* x : {&q, &k, &v}) {
    if (!x->valid()) fail(kOp, "empty Array handle");
    if (!is_floating(x->dtype())) fail(kOp, "inputs must be floating, got ", x->aval().str());
  }
  if (q.ndim() != 4 || k.ndim() != 4 || v.ndim() != 4) {
    fail(kOp, "query, key, value must all be [B, T, N, H] (or all [T, N, H]), got ",
         q.aval().str(), ", ", k.aval().str(), ", ", v.aval().str());
  }
  if (v.shape() != k.shape() || v.dtype() != k.dtype()) {
    fail(kOp, "value must match key: ", k.aval().str(), " vs ", v.aval().str());
  }
  if (q.dtype() != k.dtype() || q.shape()[0] != k.shape()[0] || q.shape()[3] != k.shape()[3]) {
    fail(kOp, "query must be [", k.shape()[0], ", T, N, ", k.shape()[3], "] of ",
         dtype_name(k.dtype()), ", got ", q.aval().str());
  }
  if (q.shape()[2] % k.shape()[2] != 0) {
    fail(kOp, "the number of query heads must be a multiple of key/value heads, got ",
         q.shape()[2], " vs ", k.shape()[2]);
  }
}

Array attention_4d(const Array& q, const Array& k, const Array& v,
                   const std::optional<Array>& bias, const std::optional<Array>& mask,
                   const DotProductAttentionOptions& o) {
  check_shapes(q, k, v);
  const int64_t B = q.shape()[0], T = q.shape()[1], N = q.shape()[2], H = q.shape()[3];
  const int64_t S = k.shape()[1], K = k.shape()[2];
  check_lengths(o.query_seq_lengths, B, "query_seq_lengths");
  check_lengths(o.key_value_seq_lengths, B, "key_value_seq_lengths");
  if (bias && bias->ndim() != 4) fail(kOp, "bias must be 4-D, got ", bias->aval().str());
  if (mask && (mask->ndim() != 4 || mask->dtype() != DType::kBool)) {
    fail(kOp, "mask must be a 4-D bool array, got ", mask->aval().str());
  }
  const double scale = o.scale.value_or(1.0 / std::sqrt(static_cast<double>(H)));
  if (!std::isfinite(scale)) fail(kOp, "scale must be finite, got ", scale);

  // The fused kernel covers exactly JAX's causal case when T == S and nothing else is set.
  if (o.is_causal && T == S && !bias && !mask && !o.query_seq_lengths &&
      !o.key_value_seq_lengths && scale > 0) {
    return astype(causal_attention(q, k, v, {.scale = scale}), k.dtype());
  }

  const DType logits_dtype = q.dtype() == DType::kF64 ? DType::kF64 : DType::kF32;
  Array kr = K == N ? k : repeat(k, N / K, 2);
  Array vr = K == N ? v : repeat(v, N / K, 2);
  Array logits = einsum("BTNH,BSNH->BNTS", astype(q, logits_dtype), astype(kr, logits_dtype));
  logits = logits * full({}, scale, logits_dtype);
  const Shape full_shape{B, N, T, S};
  if (bias) logits = astype(logits + broadcast_to(*bias, full_shape), logits_dtype);

  std::optional<Array> keep;
  auto also = [&keep](const Array& m) { keep = keep ? logical_and(*keep, m) : m; };
  if (mask) also(*mask);
  if (o.is_causal) also(reshape(tril(full({T, S}, 1, DType::kBool)), {1, 1, T, S}));
  if (o.query_seq_lengths) {
    also(less(reshape(arange(T, DType::kI32), {1, 1, T, 1}),
              reshape(*o.query_seq_lengths, {B, 1, 1, 1})));
  }
  if (o.key_value_seq_lengths) {
    also(less(reshape(arange(S, DType::kI32), {1, 1, 1, S}),
              reshape(*o.key_value_seq_lengths, {B, 1, 1, 1})));
  }
  if (keep) {
    const double big = -0.7 * static_cast<double>(std::numeric_limits<float>::max());
    logits = where(broadcast_to(*keep, full_shape), logits, full({}, big, logits_dtype));
  }
  Array probs = astype(softmax(logits, -1), k.dtype());
  Array encoded = einsum("BNTS,BSNH->BTNH", probs, vr);
  if (o.query_seq_lengths) {
    Array rows = less(reshape(arange(T, DType::kI32), {1, T, 1, 1}),
                      reshape(*o.query_seq_lengths, {B, 1, 1, 1}));
    encoded = encoded * astype(rows, encoded.dtype());
  }
  return encoded;
}

}  // namespace

Array dot_product_attention(const Array& query, const Array& key, const Array& value,
                            const std::optional<Array>& bias, const std::optional<Array>& mask,
                            const DotProductAttentionOptions& options) {
  if (query.valid() && key.valid() && value.valid() && query.ndim() == 3 && key.ndim() == 3 &&
      value.ndim() == 3) {
    // Unbatched: a batch of one (bias / mask keep their 4-D leading 1 as in JAX).
    Array out = attention_4d(expand_dims(query, {0}), expand_dims(key, {0}),
                             expand_dims(value, {0}), bias, mask, options);
    return reshape(out, query.shape());
  }
  return attention_4d(query, key, value, bias, mask, options);
}

}  // namespace graft::nn
