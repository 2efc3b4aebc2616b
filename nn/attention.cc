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

// The forward pass runs once, as plain tiled ops; its results o and lse enter a custom_vjp
// function (behind stop_gradient) that only changes o's layout, so the pullback keeps q, k,
// v, o and lse and runs the tiled backward. (A custom_vjp whose fwd computed o would run the
// forward a second time in graft: its vjp rule calls fwd when the pullback runs.)
Array causal_attention(const Array& q, const Array& k, const Array& v,
                       const AttentionOptions& options) {
  const AttentionGeometry g = detail::attention_geometry("causal_attention", q, k, v, options);
  if (g.T == 0) return zeros(q.shape(), q.dtype());
  const DType out_dtype = q.dtype();
  detail::FlashForward f = detail::flash_forward(detail::to_rows(q, g), detail::kv_to_heads(k, g),
                                                 detail::kv_to_heads(v, g), g);
  using Residuals = std::tuple<Array, Array, Array, Array, Array>;
  auto out = [g, out_dtype](const Array& o) { return astype(detail::from_rows(o, g), out_dtype); };
  auto attach = custom_vjp(
      [out](const Array&, const Array&, const Array&, const Array& o, const Array&) {
        return out(o);
      },
      [out](const Array& q, const Array& k, const Array& v, const Array& o, const Array& lse) {
        return std::pair{out(o), Residuals{q, k, v, o, lse}};
      },
      [g](const Residuals& res, const Array& ct) {
        const auto& [q, k, v, o, lse] = res;
        detail::FlashGrads d =
            detail::flash_backward(detail::to_rows(q, g), detail::kv_to_heads(k, g),
                                   detail::kv_to_heads(v, g), o, lse, detail::to_rows(ct, g), g);
        // o and lse come through stop_gradient: their (zero) cotangents go nowhere.
        return std::tuple{astype(detail::from_rows(d.dq, g), q.dtype()),
                          astype(detail::kv_from_heads(d.dk, g), k.dtype()),
                          astype(detail::kv_from_heads(d.dv, g), v.dtype()), zeros_like(o),
                          zeros_like(lse)};
      },
      "causal_attention");
  return attach(q, k, v, stop_gradient(f.o), stop_gradient(f.lse));
}

}  // namespace graft::nn
