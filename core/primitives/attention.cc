// flash_attention / flash_attention_grad: shape and dtype rules, parameters, cost.
#include "core/primitives/attention.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "core/error.h"

namespace graft {

void check_flash_attention(std::string_view op, const Aval& q, const Aval& k, const Aval& v,
                           const FlashParams& p) {
  if (q.shape.size() != 4 || k.shape.size() != 4 || v.shape.size() != 4) {
    fail(op, "q, k, v must be [batch, seq, heads, head_dim], got ", q.str(), ", ", k.str(), ", ",
         v.str());
  }
  const DType d = q.dtype;
  const bool float_dtype =
      d == DType::kF64 || d == DType::kF32 || d == DType::kBF16 || d == DType::kF16;
  if (q.dtype != k.dtype || q.dtype != v.dtype || !float_dtype) {
    fail(op, "q, k, v must have one float dtype (f64, f32, bf16 or f16), got ", q.str(), ", ",
         k.str(), ", ", v.str());
  }
  if (k.shape != v.shape) fail(op, "k and v shapes differ: ", k.str(), " vs ", v.str());
  if (q.shape[0] != k.shape[0] || q.shape[3] != k.shape[3]) {
    fail(op, "batch or head_dim differ: q ", q.str(), " vs k ", k.str());
  }
  if (k.shape[2] == 0 || q.shape[2] % k.shape[2] != 0) {
    fail(op, "heads (", q.shape[2], ") must be a multiple of kv heads (", k.shape[2], ")");
  }
  if (q.shape[1] > k.shape[1]) {
    fail(op, "more queries (", q.shape[1], ") than keys (", k.shape[1], ")");
  }
  if (!(p.scale > 0) || !std::isfinite(p.scale)) {
    fail(op, "scale must be positive and finite, got ", p.scale);
  }
  if (p.block_q < 1 || p.block_k < 1) {
    fail(op, "block sizes must be positive, got block_q ", p.block_q, ", block_k ", p.block_k);
  }
}

DType flash_lse_dtype(DType d) { return d == DType::kBF16 || d == DType::kF16 ? DType::kF32 : d; }

double flash_attention_macs(const Shape& q, const Shape& k) {
  const double B = q[0], T = q[1], H = q[2], D = q[3], S = k[1];
  // Query t sees S - T + t + 1 keys.
  const double seen = T * (S - T) + T * (T + 1) / 2;
  return B * H * D * seen;
}

std::string FlashPrimitive::params() const {
  return absl::StrCat("scale=", p_.scale, ", block_q=", p_.block_q, ", block_k=", p_.block_k);
}

bool FlashPrimitive::same_params(const Primitive& o) const {
  return o.id() == id() && static_cast<const FlashPrimitive&>(o).p_ == p_;
}

namespace {

Shape lse_shape(const Shape& q) { return {q[0], q[1], q[2]}; }

}  // namespace

std::vector<Aval> FlashAttention::infer(const std::vector<Aval>& in) const {
  if (in.size() != 3) fail(name(), "takes 3 operands (q, k, v), got ", in.size());
  check_flash_attention(name(), in[0], in[1], in[2], p_);
  return {Aval{in[0].shape, in[0].dtype},
          Aval{lse_shape(in[0].shape), flash_lse_dtype(in[0].dtype)}};
}

Cost FlashAttention::cost(const std::vector<Aval>& in, const std::vector<Aval>& out) const {
  Cost c = Primitive::cost(in, out);
  c.flops = 2 * 2 * flash_attention_macs(in[0].shape, in[1].shape);  // q k^T, p v
  return c;
}

std::vector<Aval> FlashAttentionGrad::infer(const std::vector<Aval>& in) const {
  if (in.size() != 7) {
    fail(name(), "takes 7 operands (q, k, v, o, lse, do, dlse), got ", in.size());
  }
  check_flash_attention(name(), in[0], in[1], in[2], p_);
  const Aval& q = in[0];
  const DType rows = flash_lse_dtype(q.dtype);
  const char* what[] = {"o", "lse", "do", "dlse"};
  const Aval want[] = {Aval{q.shape, q.dtype}, Aval{lse_shape(q.shape), rows},
                       Aval{q.shape, q.dtype}, Aval{lse_shape(q.shape), rows}};
  for (int i = 0; i < 4; ++i) {
    const Aval& a = in[3 + i];
    if (a.dtype != want[i].dtype || a.shape != want[i].shape) {
      fail(name(), what[i], " must be ", want[i].str(), ", got ", a.str());
    }
  }
  return {Aval{in[0].shape, q.dtype}, Aval{in[1].shape, q.dtype}, Aval{in[2].shape, q.dtype}};
}

Cost FlashAttentionGrad::cost(const std::vector<Aval>& in, const std::vector<Aval>& out) const {
  Cost c = Primitive::cost(in, out);
  // q k^T again, then dv, dp, dq, dk: five products.
  c.flops = 2 * 5 * flash_attention_macs(in[0].shape, in[1].shape);
  return c;
}

}  // namespace graft
