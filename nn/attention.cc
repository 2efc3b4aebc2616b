#include "nn/attention.h"

#include <cmath>
#include <tuple>
#include <utility>

#include "core/ops.h"
#include "nn/attention_tiles.h"
#include "transforms/autodiff.h"
#include "transforms/custom_derivatives.h"

namespace graft::nn {

using detail::AttentionGeometry;

Array naive_causal_attention(const Array& q, const Array& k, const Array& v,
                             const AttentionOptions& options) {
  AttentionGeometry g = detail::attention_geometry("naive_causal_attention", q, k, v, options);
  const int64_t B = g.B, T = g.T, H = g.H, D = g.D, S = g.S, KV = g.KV, G = g.G;
  // [B, T, KV, G, D] -> [B, KV, G, T, D]; k, v -> [B, KV, S, D]
  Array qg =
      transpose(reshape(astype(q, g.compute), {B, T, KV, G, D}), std::vector<int>{0, 2, 3, 1, 4});
  Array kt = transpose(astype(k, g.compute), std::vector<int>{0, 2, 1, 3});
  Array vt = transpose(astype(v, g.compute), std::vector<int>{0, 2, 1, 3});
  // scores [B, KV, G, T, S]
  Array s = dot_general(qg, kt, {{4}, {3}, {0, 1}, {0, 1}}) * g.scale;
  Array qpos = reshape(arange(double(S - T), double(S), 1.0, DType::kI32), {T, 1});
  Array kpos = reshape(arange(S), {1, S});
  Array mask = greater_equal(qpos, kpos);
  s = where(mask, s, full({}, -INFINITY, g.compute));
  Array p = softmax(s, -1);
  Array o = dot_general(p, vt, {{4}, {2}, {0, 1}, {0, 1}});  // [B, KV, G, T, D]
  o = reshape(transpose(o, std::vector<int>{0, 3, 1, 2, 4}), {B, T, H, D});
  return astype(o, q.dtype());
}

// A custom_vjp whose fwd runs the tiled forward once and keeps q, k, v, o and lse as its
// residuals (without differentiation, f runs the same forward and keeps nothing); bwd runs the
// tiled backward on them.
Array causal_attention(const Array& q, const Array& k, const Array& v,
                       const AttentionOptions& options) {
  const AttentionGeometry g = detail::attention_geometry("causal_attention", q, k, v, options);
  if (g.T == 0) return zeros(q.shape(), q.dtype());
  const DType out_dtype = q.dtype();
  auto forward = [g](const Array& q, const Array& k, const Array& v) {
    return detail::flash_forward(detail::to_rows(q, g), detail::kv_to_heads(k, g),
                                 detail::kv_to_heads(v, g), g);
  };
  auto out = [g, out_dtype](const Array& o) { return astype(detail::from_rows(o, g), out_dtype); };
  using Residuals = std::tuple<Array, Array, Array, Array, Array>;
  auto attention =
      custom_vjp([forward, out](const Array& q, const Array& k,
                                const Array& v) { return out(forward(q, k, v).o); },
                 [forward, out](const Array& q, const Array& k, const Array& v) {
                   detail::FlashForward f = forward(q, k, v);
                   return std::pair{out(f.o), Residuals{q, k, v, f.o, f.lse}};
                 },
                 [g](const Residuals& res, const Array& ct) {
                   const auto& [q, k, v, o, lse] = res;
                   detail::FlashGrads d = detail::flash_backward(
                       detail::to_rows(q, g), detail::kv_to_heads(k, g), detail::kv_to_heads(v, g),
                       o, lse, detail::to_rows(ct, g), g);
                   return std::tuple{astype(detail::from_rows(d.dq, g), q.dtype()),
                                     astype(detail::kv_from_heads(d.dk, g), k.dtype()),
                                     astype(detail::kv_from_heads(d.dv, g), v.dtype())};
                 },
                 "causal_attention");
  return attention(q, k, v);
}

}  // namespace graft::nn
