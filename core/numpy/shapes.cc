// jax.numpy shape helpers (core/numpy/shapes.h), after JAX 0.10.2's lax_numpy.py.
#include "core/numpy/shapes.h"

#include <set>
#include <vector>

#include "core/error.h"
#include "core/lax/util.h"
#include "core/numpy/numpy.h"

namespace graft {
namespace {

std::vector<Array> split_min_rank(const char* op, const Array& x, int64_t sections, int rank,
                                  int64_t axis) {
  detail::check_valid(op, x);
  if (x.ndim() < rank) fail(op, "needs rank >= ", rank, ", got shape ", shape_str(x.shape()));
  return split(x, sections, axis);
}

}  // namespace

std::vector<Array> array_split(const Array& x, int64_t sections, int64_t axis) {
  detail::check_valid("array_split", x);
  const int64_t a = normalize_axis("array_split", axis, x.ndim());
  if (sections <= 0) fail("array_split", "sections must be > 0, got ", sections);
  const int64_t n = x.shape()[a], each = n / sections, extra = n % sections;
  std::vector<int64_t> idx;
  int64_t at = 0;
  for (int64_t i = 0; i + 1 < sections; ++i) {
    at += each + (i < extra ? 1 : 0);
    idx.push_back(at);
  }
  return split(x, idx, a);
}

std::vector<Array> hsplit(const Array& x, int64_t sections) {
  detail::check_valid("hsplit", x);
  return split_min_rank("hsplit", x, sections, 1, x.ndim() == 1 ? 0 : 1);
}
std::vector<Array> vsplit(const Array& x, int64_t sections) {
  return split_min_rank("vsplit", x, sections, 2, 0);
}
std::vector<Array> dsplit(const Array& x, int64_t sections) {
  return split_min_rank("dsplit", x, sections, 3, 2);
}

std::vector<Array> unstack(const Array& x, int64_t axis) {
  detail::check_valid("unstack", x);
  if (x.ndim() == 0) fail("unstack", "x must have rank >= 1");
  const int64_t a = normalize_axis("unstack", axis, x.ndim());
  std::vector<Array> out;
  for (int64_t i = 0; i < x.shape()[a]; ++i) {
    out.push_back(squeeze(slice_axis(x, a, i, i + 1), {a}));
  }
  return out;
}

Shape broadcast_shapes(const std::vector<Shape>& shapes) {
  Shape out;
  for (const Shape& s : shapes) out = graft::broadcast_shapes("broadcast_shapes", out, s);
  return out;
}

std::vector<Array> broadcast_arrays(const std::vector<Array>& xs) {
  std::vector<Shape> shapes;
  for (const Array& x : xs) {
    detail::check_valid("broadcast_arrays", x);
    shapes.push_back(x.shape());
  }
  Shape s;
  for (const Shape& t : shapes) s = graft::broadcast_shapes("broadcast_arrays", s, t);
  std::vector<Array> out;
  for (const Array& x : xs) out.push_back(detail::broadcast_to_shape("broadcast_arrays", x, s));
  return out;
}

Array rollaxis(const Array& a, int64_t axis, int64_t start) {
  detail::check_valid("rollaxis", a);
  const int64_t nd = a.ndim();
  const int64_t ax = normalize_axis("rollaxis", axis, nd);
  if (start < -nd || start > nd) {
    fail("rollaxis", "start ", start, " must be in [", -nd, ", ", nd, "]");
  }
  if (start < 0) start += nd;
  if (start > ax) --start;
  return moveaxis(a, ax, start);
}

Array append(const Array& arr, const Array& values, std::optional<int64_t> axis) {
  detail::check_valid("append", arr);
  detail::check_valid("append", values);
  std::vector<Array> xs = detail::promote_dtypes({arr, values});
  if (!axis) return concatenate({ravel(xs[0]), ravel(xs[1])}, 0);
  return concatenate(xs, *axis);
}

Array delete_(const Array& arr, const std::vector<int64_t>& indices, std::optional<int64_t> axis) {
  detail::check_valid("delete", arr);
  Array a = axis ? arr : ravel(arr);
  const int64_t ax = axis ? normalize_axis("delete", *axis, a.ndim()) : 0;
  const int64_t n = a.shape()[ax];
  std::set<int64_t> gone;
  for (int64_t i : indices) {
    if (i < -n || i >= n) fail("delete", "index ", i, " is out of bounds for size ", n);
    gone.insert(i < 0 ? i + n : i);
  }
  std::vector<int32_t> keep;
  for (int64_t i = 0; i < n; ++i) {
    if (!gone.count(i)) keep.push_back(static_cast<int32_t>(i));
  }
  return take(a, array(keep), ax);
}

Array resize(const Array& a, const Shape& new_shape) {
  detail::check_valid("resize", a);
  for (int64_t d : new_shape) {
    if (d < 0) fail("resize", "new_shape must be >= 0, got ", shape_str(new_shape));
  }
  const int64_t size = numel(new_shape);
  if (a.size() == 0 || size == 0) return zeros(new_shape, a.dtype());
  const int64_t reps = (size + a.size() - 1) / a.size();
  return reshape(slice(tile(ravel(a), {reps}), {0}, {size}), new_shape);
}

Array select(const std::vector<Array>& condlist, const std::vector<Array>& choicelist,
             const Array& default_value) {
  if (condlist.size() != choicelist.size()) {
    fail("select", "condlist and choicelist differ in length: ", condlist.size(), " and ",
         choicelist.size());
  }
  if (condlist.empty()) fail("select", "condlist must be non-empty");
  std::vector<Array> choices = choicelist;
  choices.insert(choices.begin(), default_value);
  for (const Array& c : choices) detail::check_valid("select", c);
  choices = detail::promote_dtypes(choices);
  Array out = choices[0];
  for (size_t i = condlist.size(); i-- > 0;) {
    detail::check_valid("select", condlist[i]);
    out = where(astype(condlist[i], DType::kBool), choices[i + 1], out);
  }
  return out;
}

Array array_equal(const Array& a1, const Array& a2, bool equal_nan) {
  detail::check_valid("array_equal", a1);
  detail::check_valid("array_equal", a2);
  if (a1.shape() != a2.shape()) return scalar(0, DType::kBool);
  Array eq = equal(a1, a2);
  if (equal_nan) eq = logical_or(eq, logical_and(isnan(a1), isnan(a2)));
  return all(eq);
}

Array array_equiv(const Array& a1, const Array& a2) {
  detail::check_valid("array_equiv", a1);
  detail::check_valid("array_equiv", a2);
  try {
    graft::broadcast_shapes("array_equiv", a1.shape(), a2.shape());
  } catch (const Error&) {
    return scalar(0, DType::kBool);
  }
  return all(equal(a1, a2));
}

Array repeat(const Array& x, const Array& repeats, std::optional<int64_t> axis,
             std::optional<int64_t> total_repeat_length) {
  const Array a = axis ? x : ravel(x);
  const int64_t ax = axis && x.ndim() > 0 ? normalize_axis("repeat", *axis, x.ndim()) : 0;
  if (!is_integral(repeats.dtype())) fail("repeat", "repeats must be integers, got ", repeats.dtype());
  if (repeats.ndim() > 1) fail("repeat", "repeats must be a scalar or 1-D, got rank ", repeats.ndim());
  const int64_t n = a.ndim() == 0 ? 1 : a.shape()[ax];
  if (repeats.ndim() == 1 && repeats.shape()[0] != 1 && repeats.shape()[0] != n) {
    fail("repeat", repeats.shape()[0], " repeats for an axis of size ", n);
  }
  Array reps = broadcast_to(astype(ravel(repeats), DType::kI32), {n});
  int64_t total;
  if (total_repeat_length) {
    total = *total_repeat_length;
    if (total < 0) fail("repeat", "total_repeat_length must be >= 0, got ", total);
  } else {
    if (repeats.is_tracer()) {
      fail("repeat", "the repeats must be concrete (not traced by jit or vmap); pass a static "
           "total_repeat_length");
    }
    if (repeats.ndim() == 0 && a.ndim() != 0) return repeat(a, repeats.item<int64_t>(), ax);
    total = 0;
    for (int64_t r : reps.to_vector<int64_t>()) {
      if (r < 0) fail("repeat", "negative repeat count ", r);
      total += r;
    }
  }
  if (a.ndim() == 0) {
    if (repeats.size() != 1) fail("repeat", "a scalar x takes one repeat count");
    return broadcast_to(a, {total});
  }
  if (total == 0) {
    Shape s(a.shape());
    s[ax] = 0;
    return zeros(s, a.dtype());
  }
  if (n == 0) return a;
  // JAX's gather indices: mark where each element's run starts, then count the marks.
  Array starts = cumsum(concatenate({zeros({1}, DType::kI32), slice_axis(reps, 0, 0, n - 1)}));
  Array marks = scatter_add(zeros({total}, DType::kI32), starts, ones({n}, DType::kI32));
  return take(a, cumsum(marks) - 1, ax, GatherMode::kFill);
}

}  // namespace graft
