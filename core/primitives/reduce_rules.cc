// Transform rules of the reductions (jvp, vjp, vmap), written with public ops so that their
// results differentiate and batch again. They follow jax/_src/lax/lax.py:
// - reduce_sum is linear: its vjp broadcasts the cotangent back over the reduced axes.
// - reduce_max/min (_reduce_chooser_jvp_rule): the tangent is the mean of the tangents at the
//   locations equal to the result, so ties share the gradient equally.
// - reduce_prod: d prod / d x_i = the product of all the other elements (the exclusive
//   product), computed by a pairwise tree of multiplications as jax's _reduce_prod_jvp_rule
//   does. It never divides, so it is exact with zeros and polynomial to every order.
// - reduce_and/or and argmax/argmin are not differentiable (integer or bool results).
// - cumsum is linear; its transpose is the cumsum in the other direction.
// Batching never moves data: the reduced axes are renumbered around the batch axis.
#include <vector>

#include "core/interpreters/spmd.h"
#include "core/lax/lax.h"
#include "core/primitives/reduce.h"

namespace graft {

namespace {

// Axis a of the unbatched operand, seen in the operand batched at axis b.
int shifted(int a, int b) { return a < b ? a : a + 1; }

std::vector<int> kept_axes(int ndim, const std::vector<int>& axes) {
  std::vector<int> kept;
  size_t k = 0;
  for (int i = 0; i < ndim; ++i) {
    if (k < axes.size() && axes[k] == i) {
      ++k;
    } else {
      kept.push_back(i);
    }
  }
  return kept;
}

// y (the shape of x with `axes` dropped) broadcast back to x's shape.
Array broadcast_back(const Array& y, const Shape& x_shape, const std::vector<int>& axes) {
  return broadcast_in_dim(y, x_shape, kept_axes(static_cast<int>(x_shape.size()), axes));
}

bool is_identity(const std::vector<int>& perm) {
  for (size_t i = 0; i < perm.size(); ++i) {
    if (perm[i] != static_cast<int>(i)) return false;
  }
  return true;
}

// E with x's shape: E[i] = the product of the other elements of x's slice over `axes`.
// The reduced axes are flattened to one leading axis of n elements; a tree of pairwise
// products halves it each level (an odd half is padded with 1), and walking the tree back
// multiplies each half by the product of its sibling: log2(n) levels of O(size) work.
Array exclusive_products(const Array& x, const std::vector<int>& axes) {
  const Shape& s = x.shape();
  std::vector<int> perm = axes, rest = kept_axes(x.ndim(), axes);
  perm.insert(perm.end(), rest.begin(), rest.end());
  int64_t n = 1, m = 1;
  for (int a : axes) n *= s[a];
  for (int a : rest) m *= s[a];
  Shape moved;
  for (int a : perm) moved.push_back(s[a]);
  const bool identity = is_identity(perm);
  Array p = reshape(identity ? x : transpose(x, perm), {n, m});
  const Array one = scalar(1.0, x.dtype());

  struct Level {
    Array a, b;  // the halves multiplied at this level (b padded to a's length)
    int64_t n1, n2;
  };
  std::vector<Level> levels;
  while (n > 1) {
    int64_t n1 = (n + 1) / 2, n2 = n - n1;
    Array a = slice_axis(p, 0, 0, n1);
    Array b = slice_axis(p, 0, n1, n);
    if (n2 != n1) b = pad(b, {{0, 1}, {0, 0}}, one);
    levels.push_back({a, b, n1, n2});
    p = a * b;
    n = n1;
  }
  Array g = broadcast_in_dim(one, {n, m}, {});  // n is 0 or 1 here: the empty product
  for (auto it = levels.rbegin(); it != levels.rend(); ++it) {
    Array ga = g * it->b, gb = g * it->a;
    if (it->n2 != it->n1) gb = slice_axis(gb, 0, 0, it->n2);
    g = concatenate({ga, gb}, 0);
  }
  g = reshape(g, moved);
  if (identity) return g;
  std::vector<int> inverse(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) inverse[perm[i]] = static_cast<int>(i);
  return transpose(g, inverse);
}

// reduce_max/min: 1 where x equals the result, 0 elsewhere, and the number of such places.
struct Chooser {
  Array where, counts;
};
Chooser chooser(const Array& x, const Array& out, const std::vector<int>& axes) {
  Array loc = astype(equal(x, broadcast_back(out, x.shape(), axes)), x.dtype());
  return {loc, reduce(PrimitiveId::kReduceSum, loc, axes)};
}

}  // namespace

// ---- reduce_sum, reduce_prod, reduce_max, reduce_min, reduce_and, reduce_or ----

std::vector<Array> Reduce::jvp(const std::vector<Array>& x, const std::vector<Array>& t,
                               const std::vector<Array>& out) const {
  if (!t[0].valid()) return {Array()};
  switch (id()) {
    case PrimitiveId::kReduceSum:
      return {reduce(PrimitiveId::kReduceSum, t[0], axes_)};
    case PrimitiveId::kReduceProd:
      return {reduce(PrimitiveId::kReduceSum, t[0] * exclusive_products(x[0], axes_), axes_)};
    case PrimitiveId::kReduceMax:
    case PrimitiveId::kReduceMin: {
      Chooser c = chooser(x[0], out[0], axes_);
      return {reduce(PrimitiveId::kReduceSum, t[0] * c.where, axes_) / c.counts};
    }
    default:
      return {Array()};  // and/or: bool or integer results, not differentiable
  }
}

std::vector<Array> Reduce::vjp(const std::vector<Array>& x, const std::vector<Array>& out,
                               const std::vector<Array>& ct) const {
  if (!ct[0].valid() || !is_floating(x[0].dtype())) return {Array()};
  const Shape& s = x[0].shape();
  switch (id()) {
    case PrimitiveId::kReduceSum:
      return {broadcast_back(ct[0], s, axes_)};
    case PrimitiveId::kReduceProd:
      return {broadcast_back(ct[0], s, axes_) * exclusive_products(x[0], axes_)};
    case PrimitiveId::kReduceMax:
    case PrimitiveId::kReduceMin: {
      Chooser c = chooser(x[0], out[0], axes_);
      return {broadcast_back(ct[0] / c.counts, s, axes_) * c.where};
    }
    default:
      return {Array()};  // and/or: bool or integer operands, not differentiable
  }
}

Batched Reduce::vmap(const std::vector<Array>& args, const std::vector<int>& dims) const {
  // Reduce in place: renumber the axes around the batch axis, which moves left by the
  // number of reduced axes before it.
  int b = dims[0], before = 0;
  std::vector<int> axes;
  for (int a : axes_) {
    axes.push_back(shifted(a, b));
    before += a < b;
  }
  return {{reduce(id(), args[0], axes)}, {b - before}};
}

// ---- argmax, argmin ----

// Integer indices: not differentiable (zero tangent, no cotangent).
std::vector<Array> ArgReduce::jvp(const std::vector<Array>&, const std::vector<Array>&,
                                  const std::vector<Array>&) const {
  return {Array()};
}
std::vector<Array> ArgReduce::vjp(const std::vector<Array>&, const std::vector<Array>&,
                                  const std::vector<Array>&) const {
  return {Array()};
}
Batched ArgReduce::vmap(const std::vector<Array>& args, const std::vector<int>& dims) const {
  int b = dims[0];
  return {{arg_reduce(id(), args[0], shifted(axis_, b), index_dtype_)}, {axis_ < b ? b - 1 : b}};
}

// ---- cumsum ----

std::vector<Array> Cumsum::jvp(const std::vector<Array>&, const std::vector<Array>& t,
                               const std::vector<Array>&) const {
  if (!t[0].valid()) return {Array()};
  return {cumsum_along(t[0], axis_, reverse_)};
}
std::vector<Array> Cumsum::vjp(const std::vector<Array>& x, const std::vector<Array>&,
                               const std::vector<Array>& ct) const {
  if (!ct[0].valid() || !is_floating(x[0].dtype())) return {Array()};
  return {cumsum_along(ct[0], axis_, !reverse_)};
}
Batched Cumsum::vmap(const std::vector<Array>& args, const std::vector<int>& dims) const {
  return {{cumsum_along(args[0], shifted(axis_, dims[0]), reverse_)}, {dims[0]}};
}


// ---- sharding (core/interpreters/spmd.h) ----
// A sum, max or min over a split dimension reduces each block, then across the blocks (psum,
// pmax, pmin); the other reductions need the reduced dimensions whole.
std::optional<spmd::Plan> Reduce::sharding_rule(const spmd::RuleArgs& a) const {
  spmd::Plan p;
  p.partial = id() == PrimitiveId::kReduceSum   ? spmd::Partial::kSum
              : id() == PrimitiveId::kReduceMax ? spmd::Partial::kMax
              : id() == PrimitiveId::kReduceMin ? spmd::Partial::kMin
                                                : spmd::Partial::kNone;
  DimAxes in = a.in_dims[0], out;
  for (size_t d = 0; d < in.size(); ++d) {
    const bool reduced = std::find(axes_.begin(), axes_.end(), static_cast<int>(d)) != axes_.end();
    if (!reduced) {
      out.push_back(in[d]);
    } else if (p.partial == spmd::Partial::kNone) {
      in[d].clear();
    } else {
      p.partial_axes.insert(p.partial_axes.end(), in[d].begin(), in[d].end());
    }
  }
  p.inputs = {in};
  p.outputs = {out};
  return p;
}

// argmax / argmin and cumsum need their axis whole; the other dimensions stay split.
std::optional<spmd::Plan> ArgReduce::sharding_rule(const spmd::RuleArgs& a) const {
  DimAxes in = a.in_dims[0];
  in[axis()].clear();
  DimAxes out = in;
  out.erase(out.begin() + axis());
  spmd::Plan p;
  p.inputs = {in};
  p.outputs = {out};
  return p;
}

std::optional<spmd::Plan> Cumsum::sharding_rule(const spmd::RuleArgs& a) const {
  DimAxes in = a.in_dims[0];
  in[axis()].clear();
  spmd::Plan p;
  p.inputs = {in};
  p.outputs = {in};
  return p;
}

}  // namespace graft
