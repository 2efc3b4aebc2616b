#include "nn/attention.h"

#include <cmath>

#include "core/error.h"
#include "core/ops.h"
#include "core/primitives/attention.h"

namespace graft::nn {
namespace {

struct Geometry {
  int64_t B, T, H, D, S, KV, G;
  double scale;
  DType compute;  // f64 for f64 inputs, else f32
};

// Checks the shapes and options (throws "[op] ...", the checks of the flash_attention
// primitive) and fills in the sizes and scale.
Geometry geometry(const char* op, const Array& q, const Array& k, const Array& v,
                  const AttentionOptions& options) {
  for (const Array* x : {&q, &k, &v}) {
    if (!is_floating(x->dtype()))
      fail(op, "q, k, v must be floating, got ", dtype_name(x->dtype()));
  }
  if (q.ndim() != 4) fail(op, "q must be [batch, seq, heads, head_dim], got ", q.aval().str());
  bool f64 = q.dtype() == DType::kF64 || k.dtype() == DType::kF64 || v.dtype() == DType::kF64;
  const DType compute = f64 ? DType::kF64 : DType::kF32;
  const double scale =
      options.scale != 0 ? options.scale : 1.0 / std::sqrt(double(q.shape()[3]));
  check_flash_attention(op, Aval{q.shape(), compute}, Aval{k.shape(), compute},
                        Aval{v.shape(), compute}, {scale, options.block_q, options.block_k});
  Geometry g{q.shape()[0], q.shape()[1], q.shape()[2], q.shape()[3], k.shape()[1], k.shape()[2],
             0,           scale,       compute};
  g.G = g.H / g.KV;
  return g;
}

}  // namespace

Array naive_causal_attention(const Array& q, const Array& k, const Array& v,
                             const AttentionOptions& options) {
  Geometry g = geometry("naive_causal_attention", q, k, v, options);
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

Array causal_attention(const Array& q, const Array& k, const Array& v,
                       const AttentionOptions& options) {
  const Geometry g = geometry("causal_attention", q, k, v, options);
  if (g.T == 0) return zeros(q.shape(), q.dtype());
  FlashAttentionOut r =
      flash_attention(q, k, v, {.scale = g.scale, .block_q = options.block_q,
                                .block_k = options.block_k});
  return astype(r.o, q.dtype());
}

}  // namespace graft::nn
