// Public ops of the fused attention primitives (core/primitives/attention.h).
#include <cmath>

#include "core/error.h"
#include "core/lax/lax.h"
#include "core/lax/util.h"
#include "core/primitives/attention.h"

namespace graft {
namespace {

// The dtype the primitive computes floating q, k, v (and o, do) in: their own when they share
// one, else f64 if any is f64, else f32.
DType compute_dtype(std::string_view op, const std::vector<Array>& xs) {
  bool f64 = false, same = true;
  for (const Array& x : xs) {
    detail::check_valid(op, x);
    if (!is_floating(x.dtype())) {
      fail(op, "inputs must be floating, got ", x.aval().str());
    }
    f64 = f64 || x.dtype() == DType::kF64;
    same = same && x.dtype() == xs[0].dtype();
  }
  const DType d = xs[0].dtype();
  if (same && (d == DType::kF64 || d == DType::kF32 || d == DType::kBF16 || d == DType::kF16)) {
    return d;
  }
  return f64 ? DType::kF64 : DType::kF32;
}

FlashParams params_of(std::string_view op, const Array& q, const FlashAttentionOptions& o) {
  if (q.ndim() != 4) fail(op, "q must be [batch, seq, heads, head_dim], got ", q.aval().str());
  if (o.scale < 0 || !std::isfinite(o.scale)) fail(op, "scale must be positive, got ", o.scale);
  const double scale = o.scale != 0 ? o.scale : 1.0 / std::sqrt(double(q.shape()[3]));
  return FlashParams{scale, o.block_q, o.block_k};
}

}  // namespace

FlashAttentionOut flash_attention(const Array& q, const Array& k, const Array& v,
                                  const FlashAttentionOptions& options) {
  const DType dt = compute_dtype("flash_attention", {q, k, v});
  const FlashParams p = params_of("flash_attention", q, options);
  Array cq = astype(q, dt), ck = astype(k, dt), cv = astype(v, dt);
  check_flash_attention("flash_attention", cq.aval(), ck.aval(), cv.aval(), p);
  std::vector<Array> out = graft::bind(std::make_shared<const FlashAttention>(p), {cq, ck, cv});
  return {out[0], out[1]};
}

std::vector<Array> flash_attention_grad(const Array& q, const Array& k, const Array& v,
                                        const Array& o, const Array& lse, const Array& d_o,
                                        const Array& d_lse, const FlashAttentionOptions& options) {
  const DType dt = compute_dtype("flash_attention_grad", {q, k, v, o, d_o});
  const DType rows = flash_lse_dtype(dt);
  detail::check_valid("flash_attention_grad", lse);
  detail::check_valid("flash_attention_grad", d_lse);
  const FlashParams p = params_of("flash_attention_grad", q, options);
  return graft::bind(std::make_shared<const FlashAttentionGrad>(p),
                     {astype(q, dt), astype(k, dt), astype(v, dt), astype(o, dt), astype(lse, rows),
                      astype(d_o, dt), astype(d_lse, rows)});
}

}  // namespace graft
