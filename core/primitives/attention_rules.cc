// flash_attention's and flash_attention_grad's transform rules (see attention.h).
//   flash_attention vjp:  flash_attention_grad on (q, k, v, o, lse, ct_o, ct_lse).
//   both jvps, the grad's vjp: the rule of the reference decomposition below (the [T, S]
//     scores materialized with dot_general; exact, any order).
//   vmap: the batch axis folded into B (members never mix: attention is per batch row).
#include <algorithm>
#include <cmath>
#include <limits>

#include "core/interpreters/ad.h"
#include "core/interpreters/spmd.h"
#include "core/lax/lax.h"
#include "core/primitives/attention.h"
#include "core/primitives/shape_rules_util.h"

namespace graft {
namespace {

struct Sizes {
  int64_t B, T, H, D, S, KV, G;
};

Sizes sizes_of(const Array& q, const Array& k) {
  Sizes s{q.shape()[0], q.shape()[1], q.shape()[2], q.shape()[3], k.shape()[1], k.shape()[2], 0};
  s.G = s.H / s.KV;
  return s;
}

// [B, T, H, D] -> [B, KV, G, T, D] and back; [B, T, H] -> [B, KV, G, T, 1] and back.
Array to_groups(const Array& x, const Sizes& s) {
  return transpose(reshape(x, {s.B, s.T, s.KV, s.G, s.D}), std::vector<int>{0, 2, 3, 1, 4});
}
Array from_groups(const Array& x, const Sizes& s) {
  return reshape(transpose(x, std::vector<int>{0, 3, 1, 2, 4}), {s.B, s.T, s.H, s.D});
}
Array rows_to_groups(const Array& x, const Sizes& s) {
  Array g = transpose(reshape(x, {s.B, s.T, s.KV, s.G}), std::vector<int>{0, 2, 3, 1});
  return reshape(g, {s.B, s.KV, s.G, s.T, 1});
}
Array rows_from_groups(const Array& x, const Sizes& s) {
  Array g = transpose(reshape(x, {s.B, s.KV, s.G, s.T}), std::vector<int>{0, 3, 1, 2});
  return reshape(g, {s.B, s.T, s.H});
}
// [B, S, KV, D] <-> [B, KV, S, D]
Array kv_heads(const Array& x) { return transpose(x, std::vector<int>{0, 2, 1, 3}); }

// Scaled, causally masked scores [B, KV, G, T, S] (-inf where a query does not see a key).
Array masked_scores(const Array& qg, const Array& kh, const Sizes& s, double scale) {
  Array sc = dot_general(qg, kh, {{4}, {3}, {0, 1}, {0, 1}}) * scalar(scale, qg.dtype());
  Array qpos = reshape(arange(double(s.S - s.T), double(s.S), 1.0, DType::kI32), {s.T, 1});
  Array kpos = reshape(arange(s.S), {1, s.S});
  Array inf = full({}, -std::numeric_limits<double>::infinity(), qg.dtype());
  return where(greater_equal(qpos, kpos), sc, inf);
}

std::vector<Array> reference_forward(const FlashParams& p, const std::vector<Array>& in) {
  const Sizes s = sizes_of(in[0], in[1]);
  Array sc = masked_scores(to_groups(in[0], s), kv_heads(in[1]), s, p.scale);
  Array lse = logsumexp(sc, {-1}, true);
  Array o = dot_general(exp(sc - lse), kv_heads(in[2]), {{4}, {2}, {0, 1}, {0, 1}});
  return {from_groups(o, s), rows_from_groups(lse, s)};
}

// FlashAttention-2's backward on whole matrices: p = exp(s - lse), dv = p^T do,
// ds = p (do v^T - (rowsum(do o) - dlse)), dq = scale ds k, dk = scale ds^T q. dk and dv sum
// over the G query heads of a kv head.
std::vector<Array> reference_backward(const FlashParams& p, const std::vector<Array>& in) {
  const Sizes s = sizes_of(in[0], in[1]);
  Array qg = to_groups(in[0], s), kh = kv_heads(in[1]), vh = kv_heads(in[2]);
  Array og = to_groups(in[3], s), dog = to_groups(in[5], s);
  Array pr = exp(masked_scores(qg, kh, s, p.scale) - rows_to_groups(in[4], s));
  Array dv = dot_general(pr, dog, {{2, 3}, {2, 3}, {0, 1}, {0, 1}});  // [B, KV, S, D]
  Array dp = dot_general(dog, vh, {{4}, {3}, {0, 1}, {0, 1}});
  Array delta = sum(dog * og, {-1}, true) - rows_to_groups(in[6], s);
  Array ds = pr * (dp - delta);
  Array sc = scalar(p.scale, qg.dtype());
  Array dq = dot_general(ds, kh, {{4}, {2}, {0, 1}, {0, 1}}) * sc;
  Array dk = dot_general(ds, qg, {{2, 3}, {2, 3}, {0, 1}, {0, 1}}) * sc;
  return {from_groups(dq, s), kv_heads(dk), kv_heads(dv)};
}

using Reference = std::vector<Array> (*)(const FlashParams&, const std::vector<Array>&);

// A reference decomposition for half-precision operands: computed in f32, each result rounded
// to its operand's dtype (the primitive's lse is f32 already). f32 / f64 run as they are.
std::vector<Array> widened(Reference ref, const FlashParams& p, const std::vector<Array>& in) {
  const DType d = in[0].dtype();
  if (flash_lse_dtype(d) == d) return ref(p, in);
  std::vector<Array> wide;
  for (const Array& x : in) wide.push_back(astype(x, DType::kF32));
  std::vector<Array> out = ref(p, wide);
  for (size_t i = 0; i < out.size(); ++i) {
    // forward: o like q, lse f32; backward: dq, dk, dv like q, k, v.
    const bool rows = ref == &reference_forward && i == 1;
    if (!rows) out[i] = astype(out[i], in[i].dtype());
  }
  return out;
}

// The jvp of a reference decomposition (missing tangents are zeros).
std::vector<Array> reference_jvp(Reference ref, const FlashParams& p,
                                 const std::vector<Array>& primals, std::vector<Array> t) {
  for (size_t i = 0; i < t.size(); ++i) t[i] = shape_rules::or_zeros(t[i], primals[i]);
  FlatFn fn = [ref, p](const std::vector<Array>& in) { return widened(ref, p, in); };
  return detail::jvp_flat(fn, primals, t).second;
}

// Batch axis folded into B: each arg [n, B, ...] -> [n * B, ...]; outputs unfolded.
Batched folded(const std::shared_ptr<const Primitive>& prim, const std::vector<Array>& args,
               const std::vector<int>& dims) {
  const int64_t n = shape_rules::batch_size(args, dims);
  std::vector<Array> flat;
  for (size_t i = 0; i < args.size(); ++i) {
    Array x = shape_rules::batch_to_front(args[i], dims[i], n);
    Shape sh(x.shape().begin() + 1, x.shape().end());
    sh[0] *= n;
    flat.push_back(reshape(x, sh));
  }
  std::vector<Array> outs = graft::bind(prim, flat);
  for (Array& o : outs) {
    Shape sh = o.shape();
    sh[0] /= n;
    sh.insert(sh.begin(), n);
    o = reshape(o, sh);
  }
  return {outs, std::vector<int>(outs.size(), 0)};
}

// The layout both primitives compute in: batch split as q's (else k's) dimension 0, heads as
// q's (else k's) head dimension when those axes divide KV (then H too), the rest whole.
spmd::Plan attention_plan(const spmd::RuleArgs& a, bool grad) {
  const int64_t kv = a.in[1].shape[2];
  std::vector<int> batch = !a.in_dims[0][0].empty() ? a.in_dims[0][0] : a.in_dims[1][0];
  std::vector<int> heads = !a.in_dims[0][2].empty() ? a.in_dims[0][2] : a.in_dims[1][2];
  if (!spmd::divides(a.mesh, batch, a.in[0].shape[0])) batch.clear();
  if (!spmd::divides(a.mesh, heads, kv)) heads.clear();
  const bool shared = std::any_of(heads.begin(), heads.end(), [&](int x) {
    return std::find(batch.begin(), batch.end(), x) != batch.end();
  });
  if (shared) heads.clear();  // an axis splits one dimension only
  const DimAxes q{batch, {}, heads, {}}, k{batch, {}, heads, {}}, rows{batch, {}, heads};
  spmd::Plan p;
  // q, k, v, then (grad) o, lse, do, dlse.
  p.inputs = {q, k, k};
  if (grad) {
    p.inputs.insert(p.inputs.end(), {q, rows, q, rows});
    p.outputs = {q, k, k};  // dq, dk, dv
  } else {
    p.outputs = {q, rows};  // o, lse
  }
  return p;
}

}  // namespace

std::optional<spmd::Plan> FlashAttention::sharding_rule(const spmd::RuleArgs& a) const {
  return attention_plan(a, false);
}

std::optional<spmd::Plan> FlashAttentionGrad::sharding_rule(const spmd::RuleArgs& a) const {
  return attention_plan(a, true);
}

std::vector<Array> FlashAttention::jvp(const std::vector<Array>& primals,
                                       const std::vector<Array>& tangents,
                                       const std::vector<Array>&) const {
  return reference_jvp(&reference_forward, p_, primals, tangents);
}

std::vector<Array> FlashAttention::vjp(const std::vector<Array>& primals,
                                       const std::vector<Array>& outputs,
                                       const std::vector<Array>& cts) const {
  if (!cts[0].valid() && !cts[1].valid()) return {Array(), Array(), Array()};
  const DType dt = primals[0].dtype(), rows = flash_lse_dtype(dt);
  Array dout = cts[0].valid() ? astype(cts[0], dt) : shape_rules::zeros_of(outputs[0].shape(), dt);
  Array dlse =
      cts[1].valid() ? astype(cts[1], rows) : shape_rules::zeros_of(outputs[1].shape(), rows);
  return graft::bind(std::make_shared<const FlashAttentionGrad>(p_),
                     {primals[0], primals[1], primals[2], outputs[0], outputs[1], dout, dlse});
}

Batched FlashAttention::vmap(const std::vector<Array>& args, const std::vector<int>& dims) const {
  return folded(std::make_shared<const FlashAttention>(p_), args, dims);
}

std::vector<Array> FlashAttentionGrad::jvp(const std::vector<Array>& primals,
                                           const std::vector<Array>& tangents,
                                           const std::vector<Array>&) const {
  return reference_jvp(&reference_backward, p_, primals, tangents);
}

std::vector<Array> FlashAttentionGrad::vjp(const std::vector<Array>& primals,
                                           const std::vector<Array>&,
                                           const std::vector<Array>& cts) const {
  const FlashParams p = p_;
  FlatFn ref = [p](const std::vector<Array>& in) { return widened(&reference_backward, p, in); };
  return detail::vjp_flat(ref, primals).pullback(cts);
}

Batched FlashAttentionGrad::vmap(const std::vector<Array>& args,
                                 const std::vector<int>& dims) const {
  return folded(std::make_shared<const FlashAttentionGrad>(p_), args, dims);
}

}  // namespace graft
