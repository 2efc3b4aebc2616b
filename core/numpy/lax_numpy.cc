// jax.numpy breadth (core/numpy/lax_numpy.h), each op a composition of core/ops.h ops, written
// after JAX 0.10.2's lax_numpy.py / reductions.py / tensor_contractions.py.
#include "core/numpy/lax_numpy.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/error.h"
#include "core/lax/util.h"
#include "core/numpy/numpy.h"

namespace graft {
namespace {

int64_t norm_axis(const char* op, int64_t axis, int64_t ndim) {
  if (axis < -ndim || axis >= ndim) {
    fail(op, "axis ", axis, " is out of bounds for an array of rank ", ndim);
  }
  return axis < 0 ? axis + ndim : axis;
}

}  // namespace

// ------------------------------------------------------------------------- contractions

Array tensordot(const Array& a, const Array& b, const Axes& a_axes, const Axes& b_axes) {
  detail::check_valid("tensordot", a);
  detail::check_valid("tensordot", b);
  if (a_axes.size() != b_axes.size()) {
    fail("tensordot", "axes lists differ in length: ", a_axes.size(), " and ", b_axes.size());
  }
  DotDims dims;
  for (size_t i = 0; i < a_axes.size(); ++i) {
    int64_t x = norm_axis("tensordot", a_axes[i], a.ndim());
    int64_t y = norm_axis("tensordot", b_axes[i], b.ndim());
    if (a.shape()[x] != b.shape()[y]) {
      fail("tensordot", "contracted dims differ: ", shape_str(a.shape()), " axis ", x, " vs ",
           shape_str(b.shape()), " axis ", y);
    }
    dims.lhs_contract.push_back(static_cast<int>(x));
    dims.rhs_contract.push_back(static_cast<int>(y));
  }
  auto ab = detail::promote_dtypes({a, b});
  return dot_general(ab[0], ab[1], dims);
}

Array tensordot(const Array& a, const Array& b, int64_t axes) {
  detail::check_valid("tensordot", a);
  detail::check_valid("tensordot", b);
  if (axes < 0 || axes > a.ndim() || axes > b.ndim()) {
    fail("tensordot", "axes ", axes, " out of range for shapes ", shape_str(a.shape()), " and ",
         shape_str(b.shape()));
  }
  Axes x, y;
  for (int64_t i = 0; i < axes; ++i) {
    x.push_back(a.ndim() - axes + i);
    y.push_back(i);
  }
  return tensordot(a, b, x, y);
}

Array inner(const Array& a, const Array& b) {
  detail::check_valid("inner", a);
  detail::check_valid("inner", b);
  if (a.ndim() == 0 || b.ndim() == 0) return multiply(a, b);
  return tensordot(a, b, Axes{-1}, Axes{-1});
}

Array vdot(const Array& a, const Array& b) {
  detail::check_valid("vdot", a);
  detail::check_valid("vdot", b);
  if (a.size() != b.size()) {
    fail("vdot", "sizes differ: ", shape_str(a.shape()), " and ", shape_str(b.shape()));
  }
  return tensordot(conj(ravel(a)), ravel(b), Axes{0}, Axes{0});  // a conjugated, as jnp
}

Array kron(const Array& a_in, const Array& b_in) {
  detail::check_valid("kron", a_in);
  detail::check_valid("kron", b_in);
  auto ab = detail::promote_dtypes({a_in, b_in});
  Array a = ab[0], b = ab[1];
  auto lead = [](const Array& x, int n) {
    Axes ax;
    for (int i = 0; i < n; ++i) ax.push_back(i);
    return ax.empty() ? x : expand_dims(x, ax);
  };
  if (a.ndim() < b.ndim()) a = lead(a, b.ndim() - a.ndim());
  if (b.ndim() < a.ndim()) b = lead(b, a.ndim() - b.ndim());
  int nd = a.ndim();
  Axes odd, even;
  for (int i = 0; i < nd; ++i) {
    odd.push_back(2 * i + 1);
    even.push_back(2 * i);
  }
  Shape out;
  for (int i = 0; i < nd; ++i) out.push_back(a.shape()[i] * b.shape()[i]);
  if (nd == 0) return multiply(a, b);
  return reshape(multiply(expand_dims(a, odd), expand_dims(b, even)), out);
}

// ------------------------------------------------------------- triangles and diagonals

Array trace(const Array& a, int64_t offset, int64_t axis1, int64_t axis2) {
  detail::check_valid("trace", a);
  if (a.ndim() < 2) fail("trace", "needs an array of rank >= 2, got ", shape_str(a.shape()));
  return sum(diagonal(a, offset, axis1, axis2), {-1});
}

Array diag(const Array& v, int64_t k) {
  detail::check_valid("diag", v);
  if (v.ndim() == 2) return diagonal(v, k);
  if (v.ndim() != 1) fail("diag", "needs a 1-D or 2-D array, got ", shape_str(v.shape()));
  int64_t n = v.shape()[0] + (k < 0 ? -k : k);
  Array p = pad(v, {{std::max<int64_t>(0, -k), std::max<int64_t>(0, k)}});
  return where(eye(n, n, k, DType::kBool), expand_dims(p, {1}), zeros({}, v.dtype()));
}

// ------------------------------------------------------------------------- rearranging

Array roll(const Array& a, const std::vector<int64_t>& shifts, const Axes& axes) {
  detail::check_valid("roll", a);
  if (shifts.size() != axes.size() && shifts.size() != 1 && axes.size() != 1) {
    fail("roll", "got ", shifts.size(), " shifts for ", axes.size(), " axes");
  }
  size_t n = std::max(shifts.size(), axes.size());
  Array out = a;
  for (size_t i = 0; i < n; ++i) {
    int64_t ax = norm_axis("roll", axes[axes.size() == 1 ? 0 : i], a.ndim());
    int64_t s = shifts[shifts.size() == 1 ? 0 : i];
    int64_t len = a.shape()[ax];
    if (len == 0) continue;
    int64_t cut = ((-s) % len + len) % len;
    if (cut == 0) continue;
    out = concatenate({slice_axis(out, ax, cut, len), slice_axis(out, ax, 0, cut)}, ax);
  }
  return out;
}

Array roll(const Array& a, int64_t shift, std::optional<int64_t> axis) {
  detail::check_valid("roll", a);
  if (!axis) return reshape(roll(ravel(a), {shift}, {0}), a.shape());
  return roll(a, std::vector<int64_t>{shift}, Axes{*axis});
}

Array fliplr(const Array& m) {
  detail::check_valid("fliplr", m);
  if (m.ndim() < 2) fail("fliplr", "needs an array of rank >= 2, got ", shape_str(m.shape()));
  return flip(m, {1});
}

Array flipud(const Array& m) {
  detail::check_valid("flipud", m);
  if (m.ndim() < 1) fail("flipud", "needs an array of rank >= 1, got a scalar");
  return flip(m, {0});
}

Array rot90(const Array& m, int64_t k, std::pair<int64_t, int64_t> axes) {
  detail::check_valid("rot90", m);
  if (m.ndim() < 2) fail("rot90", "needs an array of rank >= 2, got ", shape_str(m.shape()));
  int64_t ax1 = norm_axis("rot90", axes.first, m.ndim());
  int64_t ax2 = norm_axis("rot90", axes.second, m.ndim());
  if (ax1 == ax2) fail("rot90", "axes must be different, got ", ax1, " twice");
  k = ((k % 4) + 4) % 4;
  if (k == 0) return m;
  if (k == 2) return flip(flip(m, {ax1}), {ax2});
  std::vector<int> perm;
  for (int i = 0; i < m.ndim(); ++i) perm.push_back(i);
  std::swap(perm[ax1], perm[ax2]);
  if (k == 1) return transpose(flip(m, {ax2}), perm);
  return flip(transpose(m, perm), {ax2});
}

// ---------------------------------------------------------------------------- stacking

Array atleast_1d(const Array& x) {
  detail::check_valid("atleast_1d", x);
  return x.ndim() >= 1 ? x : reshape(x, {1});
}

Array atleast_2d(const Array& x) {
  detail::check_valid("atleast_2d", x);
  if (x.ndim() >= 2) return x;
  return x.ndim() == 0 ? reshape(x, {1, 1}) : expand_dims(x, {0});
}

Array atleast_3d(const Array& x) {
  detail::check_valid("atleast_3d", x);
  if (x.ndim() == 0) return reshape(x, {1, 1, 1});
  if (x.ndim() == 1) return expand_dims(x, {0, 2});
  if (x.ndim() == 2) return expand_dims(x, {2});
  return x;
}

namespace {
std::vector<Array> each(const char* op, const std::vector<Array>& xs, Array (*f)(const Array&)) {
  if (xs.empty()) fail(op, "needs at least one array");
  std::vector<Array> out;
  for (const Array& x : xs) out.push_back(f(x));
  return out;
}
}  // namespace

Array hstack(const std::vector<Array>& xs) {
  auto a = each("hstack", xs, atleast_1d);
  return concatenate(a, a[0].ndim() == 1 ? 0 : 1);
}

Array vstack(const std::vector<Array>& xs) {
  return concatenate(each("vstack", xs, atleast_2d), 0);
}

Array dstack(const std::vector<Array>& xs) {
  return concatenate(each("dstack", xs, atleast_3d), 2);
}

Array column_stack(const std::vector<Array>& xs) {
  if (xs.empty()) fail("column_stack", "needs at least one array");
  std::vector<Array> cols;
  for (const Array& x : xs) {
    detail::check_valid("column_stack", x);
    cols.push_back(x.ndim() < 2 ? transpose(atleast_2d(x)) : x);
  }
  return concatenate(cols, 1);
}

std::vector<Array> meshgrid(const std::vector<Array>& xs_in, const std::string& indexing) {
  if (indexing != "xy" && indexing != "ij") {
    fail("meshgrid", "indexing must be 'xy' or 'ij', got '", indexing, "'");
  }
  std::vector<Array> xs = xs_in;
  for (const Array& x : xs) {
    detail::check_valid("meshgrid", x);
    if (x.ndim() != 1) fail("meshgrid", "arguments must be 1-D, got ", shape_str(x.shape()));
  }
  bool swap = indexing == "xy" && xs.size() >= 2;
  if (swap) std::swap(xs[0], xs[1]);
  Shape shape;
  for (const Array& x : xs) shape.push_back(x.shape()[0]);
  std::vector<Array> out;
  for (size_t i = 0; i < xs.size(); ++i) {
    out.push_back(broadcast_in_dim(xs[i], shape, {static_cast<int>(i)}));
  }
  if (swap) std::swap(out[0], out[1]);
  return out;
}

// ------------------------------------------------------------------ differences and stats

Array diff(const Array& a, int64_t n, int64_t axis) {
  detail::check_valid("diff", a);
  if (n < 0) fail("diff", "order must be non-negative, got ", n);
  if (n == 0) return a;
  if (a.ndim() == 0) fail("diff", "needs an array of rank >= 1, got a scalar");
  int64_t ax = norm_axis("diff", axis, a.ndim());
  Array x = a;
  for (int64_t i = 0; i < n; ++i) {
    Array hi = slice_axis(x, ax, 1, std::nullopt), lo = slice_axis(x, ax, std::nullopt, -1);
    x = x.dtype() == DType::kBool ? not_equal(hi, lo) : subtract(hi, lo);
  }
  return x;
}

Array ediff1d(const Array& a, const std::optional<Array>& to_end,
              const std::optional<Array>& to_begin) {
  detail::check_valid("ediff1d", a);
  Array f = ravel(a);
  Array r = subtract(slice_axis(f, 0, 1, std::nullopt), slice_axis(f, 0, std::nullopt, -1));
  if (to_begin) r = concatenate({ravel(astype(*to_begin, f.dtype())), r}, 0);
  if (to_end) r = concatenate({r, ravel(astype(*to_end, f.dtype()))}, 0);
  return r;
}

Array ptp(const Array& a, const Axes& axes, bool keepdims) {
  detail::check_valid("ptp", a);
  return subtract(max(a, axes, keepdims), min(a, axes, keepdims));
}

Array average(const Array& a_in, const Axes& axes, const std::optional<Array>& weights,
              bool keepdims) {
  detail::check_valid("average", a_in);
  if (!weights) {
    return mean(detail::convert(a_in, detail::float_dtype_for(a_in), a_in.weak_type()), axes,
                keepdims);
  }
  detail::check_valid("average", *weights);
  // promote_dtypes_inexact: the common type, made floating.
  TypeInfo t = detail::result_type({a_in, *weights});
  DType ft = detail::float_dtype_for(detail::convert(a_in, t.dtype, t.weak));
  Array a = detail::convert(a_in, ft, t.weak), w = detail::convert(*weights, ft, t.weak);
  if (a.shape() != w.shape()) {
    if (axes.empty()) fail("average", "axes must be given when a and weights differ in shape");
    Axes ax;
    for (int64_t x : axes) ax.push_back(norm_axis("average", x, a.ndim()));
    Shape want;
    for (int64_t x : ax) want.push_back(a.shape()[x]);
    if (w.shape() != want) {
      fail("average", "weights of shape ", shape_str(w.shape()),
           " do not match a's shape along the axes: ", shape_str(want));
    }
    // Weight dim i lands on a's axis ax[i] (lax.reshape with dimensions=argsort(axes)).
    std::vector<int> dims(ax.begin(), ax.end());
    Shape bshape(a.ndim(), 1);
    for (int64_t x : ax) bshape[x] = a.shape()[x];
    std::vector<int> order(dims.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
    std::sort(order.begin(), order.end(), [&](int p, int q) { return dims[p] < dims[q]; });
    std::vector<int> sorted_dims;
    for (int o : order) sorted_dims.push_back(dims[o]);
    w = broadcast_in_dim(transpose(w, order), bshape, sorted_dims);
  }
  return divide(sum(multiply(a, w), axes, keepdims), sum(w, axes, keepdims));
}

Array cross(const Array& a_in, const Array& b_in, int64_t axisa, int64_t axisb, int64_t axisc) {
  detail::check_valid("cross", a_in);
  detail::check_valid("cross", b_in);
  if (a_in.ndim() == 0 || b_in.ndim() == 0) fail("cross", "needs arrays of rank >= 1");
  Array a = moveaxis(a_in, axisa, -1), b = moveaxis(b_in, axisb, -1);
  int64_t na = a.shape().back(), nb = b.shape().back();
  if ((na != 2 && na != 3) || (nb != 2 && nb != 3)) {
    fail("cross", "vector dims must be 2 or 3, got ", shape_str(a_in.shape()), " and ",
         shape_str(b_in.shape()));
  }
  auto comp = [](const Array& x, int64_t i) { return squeeze(slice_axis(x, -1, i, i + 1), {-1}); };
  if (na == 2 && nb == 2) {
    return subtract(multiply(comp(a, 0), comp(b, 1)), multiply(comp(a, 1), comp(b, 0)));
  }
  Array a0 = comp(a, 0), a1 = comp(a, 1), b0 = comp(b, 0), b1 = comp(b, 1);
  Array a2 = na == 3 ? comp(a, 2) : zeros_like(a0);
  Array b2 = nb == 3 ? comp(b, 2) : zeros_like(b0);
  Array c = stack(
      {subtract(multiply(a1, b2), multiply(a2, b1)), subtract(multiply(a2, b0), multiply(a0, b2)),
       subtract(multiply(a0, b1), multiply(a1, b0))},
      0);
  return moveaxis(c, 0, axisc);
}

namespace {

// x with `dims` size-1 axes in front (JAX's _atleast_nd).
Array atleast_nd(const Array& x, int64_t n) {
  if (x.ndim() >= n) return x;
  Shape s(static_cast<size_t>(n - x.ndim()), 1);
  s.insert(s.end(), x.shape().begin(), x.shape().end());
  return reshape(x, s);
}

std::pair<Array, int64_t> block_of(const BlockArg& b) {
  if (const Array* a = std::get_if<Array>(&b.item())) return {*a, 1};
  const auto& items = std::get<std::vector<BlockArg>>(b.item());
  if (items.empty()) fail("block", "empty lists are not allowed");
  std::vector<Array> xs;
  int64_t depth = -1, rank = 0;
  for (const BlockArg& item : items) {
    auto [x, d] = block_of(item);
    if (depth >= 0 && d != depth) fail("block", "mismatched list depths");
    depth = d;
    rank = std::max<int64_t>(rank, x.ndim());
    xs.push_back(x);
  }
  rank = std::max(rank, depth);
  for (Array& x : xs) x = atleast_nd(x, rank);
  return {concatenate(xs, rank - depth), depth + 1};
}

}  // namespace

Array block(const BlockArg& arrays) { return block_of(arrays).first; }

}  // namespace graft
