// Transform rules of scatter, scatter_mul, scatter_min and scatter_max (ScatterCombine,
// core/primitives/index.h), after JAX's (jax/_src/lax/slicing.py):
//   - scatter (set) is linear in (operand, updates); its tangent is the scatter of the
//     tangents, and a cotangent reaches the operand where no update landed and the update that
//     won (the last one: found by scattering the updates' ids, as JAX's _scatter_jvp does).
//   - scatter_mul: the operand's tangent is scatter_mul(t, indices, updates) (JAX's); an
//     update's is x * (the product of the other updates at its target) -- JAX has this only
//     for unique indices (then the product is 1); with duplicates the product of the others
//     is counted from the zeros among them, so a zero update still gets its gradient.
//   - scatter_min / max: JAX's _scatter_extremal_jvp: the tangent of each output element is
//     the mean of the tangents of the operand element and the updates that equal it.
// Updates at out-of-range indices get no cotangent. Coefficients built from comparisons carry
// no derivative, so second derivatives come out of the rules' own ops.
#include <cstdint>
#include <limits>

#include "core/lax/lax.h"
#include "core/primitives/index.h"
#include "core/primitives/index_rules_util.h"
#include "core/primitives/shape_rules_util.h"

namespace graft {

using index_rules::gather;
using index_rules::mask_out_of_range;
using index_rules::scatter;
using index_rules::scatter_with;
using shape_rules::or_zeros;
using shape_rules::zeros_of;

namespace {

// a (operand-shaped) read at every update's target, in the updates' shape; 0 where the index
// is out of range.
Array read_targets(const Array& a, const Array& idx, const Shape& updates_shape, int axis,
                   int batch_dims) {
  const int64_t n = a.shape()[axis];
  if (n == 0) return zeros_of(updates_shape, a.dtype());
  return mask_out_of_range(gather(a, index_rules::clipped(idx, n), axis, batch_dims,
                                  GatherMode::kClip),
                           idx, n, axis, batch_dims);
}

// Whether each update (each element) is the one scatter keeps: ids 1, 2, ... scattered like
// the updates, and read back at every update's target.
Array winners(const Array& x, const Array& idx, const Array& u, int axis, int batch_dims) {
  const DType d = u.size() < std::numeric_limits<int32_t>::max() ? DType::kI32 : DType::kI64;
  Array ids = reshape(iota(d, {u.size()}) + scalar(1, d), u.shape());
  Array scattered =
      scatter_with(PrimitiveId::kScatter, zeros(x.shape(), d), idx, ids, axis, batch_dims);
  // kFill reads the lowest integer at an out-of-range index: never an id.
  return gather(scattered, idx, axis, batch_dims, GatherMode::kFill) == ids;
}

// scatter_mul: for every update, the product of the other updates at its target.
Array others_product(const Array& x, const Array& idx, const Array& y, int axis, int batch_dims) {
  const DType d = x.dtype();
  Array zero = scalar(0, d), one = scalar(1, d);
  Array is_zero = y == zero;
  Array safe = where(is_zero, one, y);
  Array zeros_at = scatter(zeros_of(x.shape(), d), idx, astype(is_zero, d), axis, batch_dims);
  Array nonzero_product =
      scatter_with(PrimitiveId::kScatterMul, ones(x.shape(), d), idx, safe, axis, batch_dims);
  Array z = read_targets(zeros_at, idx, y.shape(), axis, batch_dims);
  Array p = read_targets(nonzero_product, idx, y.shape(), axis, batch_dims);
  return where(is_zero, where(z == one, p, zero), where(z == zero, p / safe, zero));
}

// scatter_min / max: JAX's coefficients of the operand's tangent read at each target (oc)
// and of each update's tangent (uc): out_t = t_x + scatter_add(oc * t_x[target] + uc * t_u).
struct ExtremalCoefficients {
  Array oc, uc;
};

ExtremalCoefficients extremal_coefficients(const Array& x, const Array& idx, const Array& u,
                                           const Array& out, int axis, int batch_dims) {
  const DType d = x.dtype();
  const Shape& us = u.shape();
  Array zero = scalar(0, d), one = scalar(1, d);
  Array initial = read_targets(x, idx, us, axis, batch_dims);
  Array target = read_targets(out, idx, us, axis, batch_dims);
  Array successful = u == target;
  Array retained = initial == target;
  Array num_updates = read_targets(
      scatter(zeros_of(x.shape(), d), idx, astype(successful, d), axis, batch_dims), idx, us,
      axis, batch_dims);
  Array num_refs = read_targets(scatter(zeros_of(x.shape(), d), idx, ones(us, d), axis,
                                        batch_dims),
                                idx, us, axis, batch_dims);
  Array updates_normalizer = where(retained, one / (num_updates + one), one / num_updates);
  Array uc = where(successful, updates_normalizer, zero);
  Array operand_normalizer = where(retained, one / (num_updates + one), zero);
  Array oc = (operand_normalizer - one) / num_refs;
  // Out-of-range updates (num_refs 0 there) take no part.
  const int64_t n = x.shape()[axis];
  if (n == 0) return {zeros_of(us, d), zeros_of(us, d)};
  return {mask_out_of_range(oc, idx, n, axis, batch_dims),
          mask_out_of_range(uc, idx, n, axis, batch_dims)};
}

}  // namespace

std::vector<Array> ScatterCombine::jvp(const std::vector<Array>& primals,
                                       const std::vector<Array>& t,
                                       const std::vector<Array>& outputs) const {
  if (!t[0].valid() && !t[2].valid()) return {Array()};
  const Array &x = primals[0], &idx = primals[1], &u = primals[2];
  switch (id()) {
    case PrimitiveId::kScatter:
      return {scatter_with(id(), or_zeros(t[0], x), idx, or_zeros(t[2], u), axis(), batch_dims())};
    case PrimitiveId::kScatterMul: {
      Array out;
      if (t[0].valid()) out = scatter_with(id(), t[0], idx, u, axis(), batch_dims());
      if (t[2].valid()) {
        Array du = t[2] * others_product(x, idx, u, axis(), batch_dims());
        Array dt = x * scatter(zeros_of(x.shape(), x.dtype()), idx, du, axis(), batch_dims());
        out = out.valid() ? out + dt : dt;
      }
      return {out};
    }
    default: {
      auto [oc, uc] = extremal_coefficients(x, idx, u, outputs[0], axis(), batch_dims());
      Array tx = or_zeros(t[0], x);
      Array tu = oc * read_targets(tx, idx, u.shape(), axis(), batch_dims());
      if (t[2].valid()) tu = tu + uc * t[2];
      return {scatter(tx, idx, tu, axis(), batch_dims())};
    }
  }
}

std::vector<Array> ScatterCombine::vjp(const std::vector<Array>& primals,
                                       const std::vector<Array>& outputs,
                                       const std::vector<Array>& ct) const {
  if (!ct[0].valid() || !is_floating(primals[0].dtype())) return {Array(), Array(), Array()};
  const Array &x = primals[0], &idx = primals[1], &u = primals[2], &c = ct[0];
  const Shape& us = u.shape();
  switch (id()) {
    case PrimitiveId::kScatter: {
      Array cx = scatter_with(id(), c, idx, zeros_of(us, u.dtype()), axis(), batch_dims());
      Array cu = where(winners(x, idx, u, axis(), batch_dims()),
                       read_targets(c, idx, us, axis(), batch_dims()), scalar(0, u.dtype()));
      return {cx, Array(), cu};
    }
    case PrimitiveId::kScatterMul: {
      Array cx = scatter_with(id(), c, idx, u, axis(), batch_dims());
      Array cu = others_product(x, idx, u, axis(), batch_dims()) *
                 read_targets(c * x, idx, us, axis(), batch_dims());
      return {cx, Array(), cu};
    }
    default: {
      auto [oc, uc] = extremal_coefficients(x, idx, u, outputs[0], axis(), batch_dims());
      Array read = read_targets(c, idx, us, axis(), batch_dims());
      Array cx = c + scatter(zeros_of(x.shape(), x.dtype()), idx, oc * read, axis(), batch_dims());
      return {cx, Array(), uc * read};
    }
  }
}

}  // namespace graft
