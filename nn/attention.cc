#include "nn/attention.h"

#include <cmath>

#include "core/error.h"
#include "core/ops.h"

namespace graft::nn {
namespace {

void check_shapes(const char* op, const Array& q, const Array& k, const Array& v) {
  if (q.ndim() != 4 || k.ndim() != 4 || v.ndim() != 4) {
    fail(op, "q, k, v must be [batch, seq, heads, head_dim], got ", shape_str(q.shape()), ", ",
         shape_str(k.shape()), ", ", shape_str(v.shape()));
  }
  if (k.shape() != v.shape())
    fail(op, "k and v shapes differ: ", shape_str(k.shape()), " vs ", shape_str(v.shape()));
  if (q.shape()[0] != k.shape()[0] || q.shape()[3] != k.shape()[3]) {
    fail(op, "batch or head_dim differ: q ", shape_str(q.shape()), " vs k ", shape_str(k.shape()));
  }
  if (k.shape()[2] == 0 || q.shape()[2] % k.shape()[2] != 0) {
    fail(op, "heads (", q.shape()[2], ") must be a multiple of kv heads (", k.shape()[2], ")");
  }
  if (q.shape()[1] > k.shape()[1]) {
    fail(op, "more queries (", q.shape()[1], ") than keys (", k.shape()[1], ")");
  }
}

}  // namespace

Array naive_causal_attention(const Array& q, const Array& k, const Array& v,
                             const AttentionOptions& options) {
  check_shapes("naive_causal_attention", q, k, v);
  const int64_t B = q.shape()[0], T = q.shape()[1], H = q.shape()[2], D = q.shape()[3];
  const int64_t S = k.shape()[1], KV = k.shape()[2], G = H / KV;
  const double scale = options.scale != 0 ? options.scale : 1.0 / std::sqrt(double(D));
  // [B, T, KV, G, D] -> [B, KV, G, T, D]; k, v -> [B, KV, S, D]
  Array qg =
      transpose(reshape(astype(q, DType::kF32), {B, T, KV, G, D}), std::vector<int>{0, 2, 3, 1, 4});
  Array kt = transpose(astype(k, DType::kF32), std::vector<int>{0, 2, 1, 3});
  Array vt = transpose(astype(v, DType::kF32), std::vector<int>{0, 2, 1, 3});
  // scores [B, KV, G, T, S]
  Array s = dot_general(qg, kt, {{4}, {3}, {0, 1}, {0, 1}}) * scale;
  Array qpos = reshape(arange(double(S - T), double(S), 1.0, DType::kI32), {T, 1});
  Array kpos = reshape(arange(S), {1, S});
  Array mask = greater_equal(qpos, kpos);
  s = where(mask, s, full({}, -INFINITY));
  Array p = softmax(s, -1);
  Array o = dot_general(p, vt, {{4}, {2}, {0, 1}, {0, 1}});  // [B, KV, G, T, D]
  o = reshape(transpose(o, std::vector<int>{0, 3, 1, 2, 4}), {B, T, H, D});
  return astype(o, q.dtype());
}

// Until the tiled kernel lands this is the naive computation (same contract).
Array causal_attention(const Array& q, const Array& k, const Array& v,
                       const AttentionOptions& options) {
  return naive_causal_attention(q, k, v, options);
}

}  // namespace graft::nn
