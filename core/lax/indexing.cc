// Public indexing ops: jnp.take, take_along_axis, .at[].add, jax.nn.one_hot, sort, argsort.
#include <limits>
#include <utility>

#include "core/error.h"
#include "core/lax/lax.h"
#include "core/lax/util.h"
#include "core/primitives/index.h"

namespace graft {
namespace {

void check_indices(std::string_view op, const Array& indices) {
  detail::check_valid(op, indices);
  if (!is_integral(indices.dtype())) {
    fail(op, "indices must have an integer dtype, got ", indices.aval().str());
  }
}

Array gather(const Array& x, const Array& indices, int axis, int batch_dims, GatherMode mode) {
  if (is_complex(x.dtype())) {
    return detail::through_parts(
        x, [&](const Array& p) { return gather(p, indices, axis, batch_dims, mode); });
  }
  return apply<Gather>({x, indices}, axis, batch_dims, mode);
}

// x.shape[:axis] + indices.shape + x.shape[axis+1:]
Shape take_shape(const Shape& x, const Shape& indices, int axis) {
  Shape out(x.begin(), x.begin() + axis);
  out.insert(out.end(), indices.begin(), indices.end());
  out.insert(out.end(), x.begin() + axis + 1, x.end());
  return out;
}

bool broadcasts_to(const Shape& from, const Shape& to) {
  if (from.size() > to.size()) return false;
  size_t off = to.size() - from.size();
  for (size_t d = 0; d < from.size(); ++d) {
    if (from[d] != 1 && from[d] != to[off + d]) return false;
  }
  return true;
}

}  // namespace

Array take(const Array& x, const Array& indices, int64_t axis, GatherMode mode) {
  detail::check_valid("take", x);
  check_indices("take", indices);
  int ax = normalize_axis("take", axis, x.ndim());
  if (x.shape()[ax] == 0 && indices.size() != 0) {
    fail("take", "cannot take a non-empty set of indices from an empty axis: x ", x.aval().str(),
         ", axis ", ax, ", indices ", indices.aval().str());
  }
  Array idx = indices;
  // jnp.take's clip mode clamps negative indices to 0 instead of wrapping them (like
  // np.take); the primitive wraps, so clamp them first.
  if (mode == GatherMode::kClip && !is_unsigned(indices.dtype())) idx = maximum(indices, 0);
  return gather(x, idx, ax, 0, mode);
}

Array take_along_axis(const Array& x, const Array& indices, int64_t axis, GatherMode mode) {
  detail::check_valid("take_along_axis", x);
  check_indices("take_along_axis", indices);
  if (x.ndim() != indices.ndim()) {
    fail("take_along_axis", "indices and x must have the same rank, got ", indices.aval().str(),
         " and ", x.aval().str());
  }
  int ax = normalize_axis("take_along_axis", axis, x.ndim());
  // Dims other than the axis broadcast against each other, like jnp.
  Shape xs = x.shape(), is = indices.shape();
  xs[ax] = 1;
  is[ax] = 1;
  Shape common = broadcast_shapes("take_along_axis", xs, is);
  Shape x_shape = common, i_shape = common;
  x_shape[ax] = x.shape()[ax];
  i_shape[ax] = indices.shape()[ax];
  if (x.shape()[ax] == 0) return zeros(i_shape, x.dtype());  // like jnp
  Array a = detail::broadcast_to_shape("take_along_axis", x, x_shape);
  Array i = detail::broadcast_to_shape("take_along_axis", indices, i_shape);
  // With the axis last, every other dim is a batch dim of the gather.
  const int last = x.ndim() - 1;
  if (ax != last) {
    a = moveaxis(a, ax, last);
    i = moveaxis(i, ax, last);
  }
  Array out = gather(a, i, last, last, mode);
  return ax == last ? out : moveaxis(out, last, ax);
}

Array scatter_add(const Array& x, const Array& indices, const Array& updates, int64_t axis) {
  detail::check_valid("scatter_add", x);
  detail::check_valid("scatter_add", updates);
  check_indices("scatter_add", indices);
  if (x.dtype() == DType::kBool) fail("scatter_add", "x must be numeric, got ", x.aval().str());
  int ax = normalize_axis("scatter_add", axis, x.ndim());
  Shape want = take_shape(x.shape(), indices.shape(), ax);
  if (!broadcasts_to(updates.shape(), want)) {
    fail("scatter_add", "updates ", updates.aval().str(), " do not broadcast to ", shape_str(want),
         " (x ", x.aval().str(), ", indices ", indices.aval().str(), ", axis ", ax, ")");
  }
  // Like x.at[...].add(u): updates take x's dtype.
  Array u = detail::broadcast_to_shape("scatter_add",
                                       detail::convert(updates, x.dtype(), x.weak_type()), want);
  if (is_complex(x.dtype())) {
    return complex(apply<ScatterAdd>({real(x), indices, real(u)}, ax, 0),
                   apply<ScatterAdd>({imag(x), indices, imag(u)}, ax, 0));
  }
  return apply<ScatterAdd>({x, indices, u}, ax, 0);
}

namespace detail {
Array scatter_combine(const Array& x, const Array& positions, const Array& updates,
                      PrimitiveId id) {
  if (is_complex(x.dtype())) {
    if (id != PrimitiveId::kScatter) return complex_scatter_reduce(x, positions, updates, id);
    return complex(scatter_combine(real(x), positions, real(updates), id),
                   scatter_combine(imag(x), positions, imag(updates), id));
  }
  return apply<ScatterCombine>({x, positions, updates}, id, 0, 0);
}
}  // namespace detail

Array one_hot(const Array& indices, int64_t num_classes, DType dtype, int64_t axis) {
  detail::check_valid("one_hot", indices);
  if (indices.dtype() == DType::kBool) {
    fail("one_hot", "indices must be integers or floats, got ", indices.aval().str());
  }
  if (num_classes < 0) fail("one_hot", "num_classes must be >= 0, got ", num_classes);
  int ax = normalize_axis("one_hot", axis, indices.ndim() + 1);
  Shape out = indices.shape();
  out.insert(out.begin() + ax, num_classes);
  check_shape("one_hot", out, dtype);
  std::vector<int> dims;
  for (int d = 0; d <= indices.ndim(); ++d) {
    if (d != ax) dims.push_back(d);
  }
  // Class ids in a type that holds them; equal() promotes against the indices' type, so
  // out-of-range and negative indices match no class and give an all-zero row.
  DType ids = is_floating(indices.dtype())                         ? indices.dtype()
              : num_classes <= std::numeric_limits<int32_t>::max() ? DType::kI32
                                                                   : DType::kI64;
  Array hot = equal(broadcast_in_dim(indices, out, dims), iota(ids, out, ax));
  return astype(hot, dtype);
}

namespace {
std::vector<Array> sort_op(std::string_view op, std::vector<Array> xs, int64_t axis) {
  for (const Array& x : xs) detail::check_valid(op, x);
  int ax = normalize_axis(op, axis, xs[0].ndim());
  for (const Array& x : xs) {
    if (x.shape() != xs[0].shape()) {
      fail(op, "keys and values must have equal shapes, got ", xs[0].aval().str(), " and ",
           x.aval().str());
    }
  }
  return graft::bind(std::make_shared<const Sort>(ax, 1, true), std::move(xs));
}
}  // namespace

Array sort(const Array& x, int64_t axis) {
  if (x.valid() && is_complex(x.dtype())) {  // lexicographic, as jnp.sort
    const int ax = normalize_axis("sort", axis, x.ndim());
    return take_along_axis(x, detail::complex_argsort(x, ax), ax);
  }
  return sort_op("sort", {x}, axis)[0];
}

std::pair<Array, Array> sort_key_val(const Array& keys, const Array& values, int64_t axis) {
  auto out = sort_op("sort_key_val", {keys, values}, axis);
  return {out[0], out[1]};
}

namespace {
// Integer keys that order x as XLA's CPU top_k compares floats: by their bits, negative ones
// flipped, so -0 < +0 and a NaN sorts by its sign past the infinities. Integers are their
// own keys.
Array total_order_key(const Array& x) {
  if (!is_floating(x.dtype())) return x;
  if (x.dtype() == DType::kF64) {
    Array b = bitcast_convert_type(x, DType::kI64);
    Array low = array<int64_t>({std::numeric_limits<int64_t>::max()}, Shape{});
    return where(b < scalar(0, DType::kI64), b ^ low, b);
  }
  // f16 / bf16 widen to f32 exactly (order kept).
  Array b = bitcast_convert_type(astype(x, DType::kF32), DType::kI32);
  Array low = array<int32_t>({std::numeric_limits<int32_t>::max()}, Shape{});
  return where(b < scalar(0, DType::kI32), b ^ low, b);
}
}  // namespace

std::pair<Array, Array> top_k(const Array& x, int64_t k) {
  detail::check_valid("top_k", x);
  if (x.ndim() == 0) fail("top_k", "needs an array of rank >= 1, got ", x.aval().str());
  if (x.dtype() == DType::kBool) fail("top_k", "needs a numeric dtype, got ", x.aval().str());
  const int last = x.ndim() - 1;
  const int64_t n = x.shape()[last];
  if (k < 0 || k > n) fail("top_k", "k must be in [0, ", n, "] for ", x.aval().str(), ", got ", k);
  if (n > std::numeric_limits<int32_t>::max()) {
    fail("top_k", "the last axis is too long for i32 indices: ", x.aval().str());
  }
  // A stable ascending sort of the reversed rows, reversed back: largest first, and tied
  // entries in index order. x rides along, so its tangents follow the sort's permutation.
  Array idx = iota(DType::kI32, x.shape(), last);
  std::vector<Array> s = sort_op(
      "top_k", {flip(total_order_key(x), {last}), flip(x, {last}), flip(idx, {last})}, last);
  return {slice_axis(flip(s[1], {last}), last, 0, k), slice_axis(flip(s[2], {last}), last, 0, k)};
}

Array argsort(const Array& x, int64_t axis) {
  detail::check_valid("argsort", x);
  int ax = normalize_axis("argsort", axis, x.ndim());
  if (is_complex(x.dtype())) return detail::complex_argsort(x, ax);
  return sort_op("argsort", {x, iota(DType::kI32, x.shape(), ax)}, ax)[1];
}

}  // namespace graft
