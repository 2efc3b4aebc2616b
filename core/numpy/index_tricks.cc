// jax.numpy index tricks and selections (core/numpy/index_tricks.h), written after JAX
// 0.10.2's lax_numpy.py (ravel_multi_index, unravel_index, ix_, mask_indices, choose,
// compress, extract, insert, trim_zeros, fill_diagonal) and sorting.py (partition,
// argpartition).
#include "core/numpy/index_tricks.h"

#include <algorithm>
#include <cctype>
#include <limits>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "core/error.h"
#include "core/lax/util.h"
#include "core/numpy/numpy.h"

namespace graft {
namespace {

int canonical_axis(const char* op, int64_t axis, int64_t ndim) {
  if (axis < -ndim || axis >= ndim) fail(op, "axis ", axis, " is out of bounds for rank ", ndim);
  return static_cast<int>(axis < 0 ? axis + ndim : axis);
}

// a along axis moved last, kth canonical, and -a's top_k operand (JAX's trick for unsigned:
// -(a + 1) keeps 0 the largest).
struct PartitionSetup {
  Array arr;
  int axis;
  int64_t kth;
};
PartitionSetup partition_setup(const char* op, const Array& a, int64_t kth, int64_t axis) {
  detail::check_valid(op, a);
  if (a.ndim() == 0) fail(op, "a must have rank >= 1");
  if (a.dtype() == DType::kBool) fail(op, "bool arrays are not supported (as in JAX)");
  const int ax = canonical_axis(op, axis, a.ndim());
  const int64_t n = a.shape()[ax];
  if (kth < -n || kth >= n) fail(op, "kth ", kth, " is out of bounds for an axis of size ", n);
  return {swapaxes(a, ax, -1), ax, kth < 0 ? kth + n : kth};
}
Array negated(const Array& arr) {
  return is_unsigned(arr.dtype()) ? neg(arr + Array(1)) : neg(arr);
}

void check_integer(const char* op, const Array& x, const char* what) {
  if (!is_integral(x.dtype())) {
    fail(op, what, " must have an integer type, got ", dtype_name(x.dtype()));
  }
}

// Reads whether any element of the bool x is true; `why` says what needs the values.
bool concrete_any(const char* op, const Array& x, const char* why) {
  if (x.is_tracer()) fail(op, why);
  return any(x).item<bool>();
}

int64_t max_of(DType d) {
  return dispatch_dtype(d, []<typename T>() -> int64_t {
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool> && sizeof(T) < 8) {
      return std::numeric_limits<T>::max();
    }
    return std::numeric_limits<int64_t>::max();
  });
}

// The elements of Python's range(*slice.indices(n)).
std::vector<int32_t> slice_indices(const Range& r, int64_t n) {
  if (r.step == 0) fail("insert", "slice step cannot be zero");
  auto norm = [&](std::optional<int64_t> v, int64_t dflt, int64_t lo, int64_t hi) {
    if (!v) return dflt;
    int64_t x = *v < 0 ? *v + n : *v;
    return std::clamp(x, lo, hi);
  };
  std::vector<int32_t> out;
  if (r.step > 0) {
    int64_t start = norm(r.start, 0, 0, n), stop = norm(r.stop, n, 0, n);
    for (int64_t i = start; i < stop; i += r.step) out.push_back(static_cast<int32_t>(i));
  } else {
    int64_t start = norm(r.start, n - 1, -1, n - 1), stop = norm(r.stop, -1, -1, n - 1);
    for (int64_t i = start; i > stop; i += r.step) out.push_back(static_cast<int32_t>(i));
  }
  return out;
}

// (slice(None),) * axis + (idx,)
std::vector<Index> along(int axis, const Array& idx) {
  std::vector<Index> index(axis, Index(Range{}));
  index.emplace_back(idx);
  return index;
}

}  // namespace

Array partition(const Array& a, int64_t kth, int64_t axis) {
  auto [arr, ax, k] = partition_setup("partition", a, kth, axis);
  const int64_t n = arr.shape().back();
  Array bottom = neg(top_k(negated(arr), k + 1).first);
  if (is_unsigned(arr.dtype())) bottom = bottom - Array(1);
  Array top = top_k(arr, n - k - 1).first;
  return swapaxes(concatenate({bottom, top}, -1), ax, -1);
}

Array argpartition(const Array& a, int64_t kth, int64_t axis) {
  auto [arr, ax, k] = partition_setup("argpartition", a, kth, axis);
  const int64_t n = arr.shape().back();
  Array bottom = top_k(negated(arr), k + 1).second;
  // The rest by a proxy (1 where not taken) so that ties cannot pick an index twice.
  Array proxy = put_along_axis(ones(arr.shape(), DType::kF32), bottom, Array(0.0f), -1);
  Array top = top_k(proxy, n - k - 1).second;
  return swapaxes(concatenate({bottom, top}, -1), ax, -1);
}

Array ravel_multi_index(const std::vector<Array>& multi_index, const Shape& dims,
                        const std::string& mode, const std::string& order,
                        std::optional<DType> dtype) {
  const char* op = "ravel_multi_index";
  if (multi_index.size() != dims.size()) {
    fail(op, "len(multi_index)=", multi_index.size(), " != len(dims)=", dims.size());
  }
  std::vector<Array> idx;
  std::vector<Array> for_type = {Array(0)};
  for (const Array& i : multi_index) {
    detail::check_valid(op, i);
    check_integer(op, i, "indices");
    for_type.push_back(i);
  }
  TypeInfo t = detail::result_type(for_type);
  const DType dt = dtype.value_or(t.weak ? DType::kI32 : t.dtype);
  if (!is_integral(dt)) fail(op, "dtype=", dtype_name(dt), " is not an integer type");
  int64_t total = 1;
  for (int64_t d : dims) {
    if (d < 0) fail(op, "dims must be >= 0, got ", shape_str(dims));
    total *= d;
  }
  if (total - 1 > max_of(dt)) {
    fail(op, "dtype=", dtype_name(dt),
         " not large enough to hold flattened index for dims=", shape_str(dims));
  }
  if (mode != "raise" && mode != "wrap" && mode != "clip" && mode != "ignore") {
    fail(op, "invalid mode='", mode, "'. Expected 'raise', 'wrap', 'clip', or 'ignore'");
  }
  if (order != "C" && order != "F") fail(op, "invalid order='", order, "'. Expected 'C' or 'F'");
  for (size_t k = 0; k < multi_index.size(); ++k) {
    const Array& i = multi_index[k];
    const Array d(static_cast<int64_t>(dims[k]));
    if (mode == "raise") {
      if (concrete_any(op, logical_or(i < Array(0), i >= d),
                       "mode='raise' reads the indices, which are traced here: use mode='wrap' "
                       "or 'clip' under jit")) {
        fail(op, "invalid entry in coordinates array");
      }
      idx.push_back(i);
    } else if (mode == "clip") {
      idx.push_back(clip(i, Array(0), Array(static_cast<int64_t>(dims[k] - 1))));
    } else if (mode == "wrap") {
      idx.push_back(remainder(i, d));
    } else {
      idx.push_back(i);
    }
  }
  Array result = scalar(0, dt);
  const size_t n = dims.size();
  for (size_t k = 0; k < n; ++k) {
    int64_t stride = 1;
    if (order == "C") {
      for (size_t j = k + 1; j < n; ++j) stride *= dims[j];
    } else {
      for (size_t j = 0; j < k; ++j) stride *= dims[j];
    }
    result = result + astype(idx[k], dt) * scalar(static_cast<double>(stride), dt);
  }
  return result;
}

std::vector<Array> unravel_index(const Array& indices, const Shape& shape) {
  const char* op = "unravel_index";
  detail::check_valid(op, indices);
  check_integer(op, indices, "indices");
  for (int64_t s : shape) {
    if (s <= 0) fail(op, "shape must have dims >= 1, got ", shape_str(shape));
  }
  std::vector<Array> rems(shape.size());
  Array rest = indices;
  for (size_t i = shape.size(); i-- > 0;) {
    const Array s(shape[i]);
    rems[i] = remainder(rest, s);
    rest = floor_divide(rest, s);
  }
  Array oob_pos = rest > Array(0);
  Array oob_neg = is_unsigned(indices.dtype()) ? zeros_like(oob_pos) : rest < Array(-1);
  std::vector<Array> out;
  for (size_t i = 0; i < shape.size(); ++i) {
    Array low = where(oob_neg, zeros_like(rems[i]), rems[i]);
    out.push_back(where(oob_pos, full_like(rems[i], static_cast<double>(shape[i] - 1)), low));
  }
  return out;
}

std::vector<Array> ix_(const std::vector<Array>& args) {
  const size_t n = args.size();
  std::vector<Array> out;
  for (size_t i = 0; i < n; ++i) {
    const Array& a = args[i];
    detail::check_valid("ix_", a);
    if (a.ndim() != 1) {
      fail("ix_", "arguments must be 1-dimensional, got shape ", shape_str(a.shape()));
    }
    if (a.dtype() == DType::kBool) fail("ix_", "boolean arguments are not implemented (as in JAX)");
    Shape s(n, 1);
    s[i] = a.shape()[0];
    out.push_back(a.size() == 0 ? zeros(s, DType::kI32) : reshape(a, s));
  }
  return out;
}

namespace detail {

std::pair<Array, Array> mask_indices_of(int64_t n, const Array& m, std::optional<int64_t> size) {
  if (n < 0) fail("mask_indices", "n must be >= 0, got ", n);
  check_valid("mask_indices", m);
  if (m.shape() != Shape{n, n}) {
    fail("mask_indices", "mask_func must return an n x n array, got shape ", shape_str(m.shape()));
  }
  const int64_t count = size ? *size : concrete_count("mask_indices", not_equal(m, zeros_like(m)));
  std::vector<Array> ij = nonzero(m, count);
  return {ij[0], ij[1]};
}

}  // namespace detail

Array choose(const Array& a, const std::vector<Array>& choices, const std::string& mode) {
  const char* op = "choose";
  detail::check_valid(op, a);
  check_integer(op, a, "a");
  if (choices.empty()) fail(op, "needs at least one choice");
  for (const Array& c : choices) detail::check_valid(op, c);
  const int64_t n = static_cast<int64_t>(choices.size());
  Array arr = a;
  if (mode == "raise") {
    if (concrete_any(op, logical_or(a < Array(0), a >= Array(n)),
                     "mode='raise' reads a, which is traced here: use mode='wrap' or 'clip' "
                     "under jit")) {
      fail(op, "invalid entry in choice array");
    }
  } else if (mode == "wrap") {
    arr = remainder(a, Array(n));
  } else if (mode == "clip") {
    arr = clip(a, Array(0), Array(n - 1));
  } else {
    fail(op, "mode='", mode, "' not understood. Must be 'raise', 'wrap', or 'clip'");
  }
  std::vector<Array> all = {arr};
  for (const Array& c : detail::promote_dtypes(choices)) all.push_back(c);
  all = broadcast_arrays(all);
  Array stacked = stack(std::vector<Array>(all.begin() + 1, all.end()), 0);
  Array picked = take_along_axis(stacked, expand_dims(all[0], {0}), 0, GatherMode::kClip);
  return squeeze(picked, {0});
}

Array compress(const Array& condition, const Array& a, std::optional<int64_t> axis,
               std::optional<int64_t> size, double fill_value) {
  const char* op = "compress";
  detail::check_valid(op, condition);
  detail::check_valid(op, a);
  Array cond = astype(condition, DType::kBool);
  if (cond.ndim() != 1)
    fail(op, "condition must be a 1D array, got shape ", shape_str(cond.shape()));
  int ax = 0;
  Array arr = axis ? a : ravel(a);
  if (axis) {
    if (a.ndim() == 0) fail(op, "a must have rank >= 1 when an axis is given");
    ax = canonical_axis(op, *axis, a.ndim());
    arr = moveaxis(a, ax, 0);
  }
  const int64_t len = arr.shape()[0], nc = cond.shape()[0];
  Array extra = slice_axis(cond, 0, std::min(len, nc), std::nullopt);
  cond = slice_axis(cond, 0, 0, std::min(len, nc));
  arr = slice_axis(arr, 0, 0, std::min(len, nc));
  Array result;
  if (!size) {
    if (concrete_any(op, extra,
                     "the result's size depends on the traced condition: pass a static size=")) {
      fail(op, "condition contains entries that are out of bounds");
    }
    result = detail::boolean_select(op, arr, cond);
  } else {
    if (*size < 0 || *size > arr.shape()[0]) {
      fail(op, "size must be positive and not greater than the size of the array axis; got size=",
           *size, " for a.shape[axis]=", arr.shape()[0]);
    }
    Shape ms(arr.ndim(), 1);
    ms[0] = arr.shape()[0];
    arr = where(reshape(cond, ms), arr, full_like(arr, fill_value));
    // Stable, true first: argsort(condition, stable=True, descending=True).
    Array order = argsort(astype(logical_not(cond), DType::kI32));
    result = take(arr, slice(order, {0}, {*size}), 0);
  }
  return moveaxis(result, 0, ax);
}

Array extract(const Array& condition, const Array& arr, std::optional<int64_t> size,
              double fill_value) {
  detail::check_valid("extract", condition);
  detail::check_valid("extract", arr);
  return compress(ravel(condition), ravel(arr), std::nullopt, size, fill_value);
}

namespace {

Array insert_impl(const Array& arr, Array indices, const Array& values,
                  std::optional<int64_t> axis_in) {
  const char* op = "insert";
  Array a = axis_in ? arr : ravel(arr);
  if (a.ndim() == 0) fail(op, "arr must have rank >= 1 when an axis is given");
  const int axis = axis_in ? canonical_axis(op, *axis_in, a.ndim()) : 0;
  if (indices.ndim() > 1) {
    fail(op, "obj must be a slice, a one-dimensional array, or a scalar; got shape ",
         shape_str(indices.shape()));
  }
  if (!is_integral(indices.dtype())) {
    fail(op, "index array must be integer typed; got ", dtype_name(indices.dtype()));
  }
  // array(values, ndmin=a.ndim, dtype=a.dtype)
  Array vals = astype(values, a.dtype());
  if (vals.ndim() < a.ndim()) {
    Shape s(a.ndim() - vals.ndim(), 1);
    s.insert(s.end(), vals.shape().begin(), vals.shape().end());
    vals = reshape(vals, s);
  }
  if (vals.ndim() > a.ndim()) {
    fail(op, "values of shape ", shape_str(values.shape()), " have more dims than arr's ",
         shape_str(a.shape()));
  }
  if (indices.size() == 1) {
    if (indices.ndim() == 0) vals = moveaxis(vals, 0, axis);
    indices = broadcast_to(reshape(indices, {}), {vals.shape()[axis]});
  }
  const int64_t n_input = a.shape()[axis], ni = indices.shape()[0], nv = vals.shape()[axis];
  if (ni != nv && ni != 1 && nv != 1) {
    fail(op, "obj has ", ni, " indices but values have ", nv, " entries along axis ", axis);
  }
  const int64_t n_insert = ni == 1 ? nv : ni;
  indices = broadcast_to(astype(indices, DType::kI32), {n_insert});
  Shape out_shape = a.shape(), slot_shape = a.shape();
  out_shape[axis] += n_insert;
  slot_shape[axis] = n_insert;
  if (broadcast_shapes(op, vals.shape(), slot_shape) != slot_shape) {
    fail(op, "values of shape ", shape_str(vals.shape()), " do not fit the inserted slots ",
         shape_str(slot_shape));
  }
  indices = where(indices < Array(0), indices + Array(n_input), indices);
  indices = clip(indices, Array(0), Array(n_input));
  // Each inserted index moves up by the number of insertions before it.
  Array values_ind = scatter_add(indices, argsort(indices), iota(DType::kI32, {n_insert}), 0);
  Array hit = scatter_add(zeros({n_input + n_insert}, DType::kI32), values_ind,
                          ones({n_insert}, DType::kI32), 0);
  Array arr_ind = nonzero(equal(hit, Array(0)), n_input)[0];
  Array out = zeros(out_shape, a.dtype());
  out = at(out, along(axis, values_ind)).set(broadcast_to(vals, slot_shape));
  return at(out, along(axis, arr_ind)).set(a);
}

}  // namespace

Array insert(const Array& arr, const Array& obj, const Array& values, std::optional<int64_t> axis) {
  detail::check_valid("insert", arr);
  detail::check_valid("insert", obj);
  detail::check_valid("insert", values);
  return insert_impl(arr, obj, values, axis);
}

Array insert(const Array& arr, const Range& obj, const Array& values, std::optional<int64_t> axis) {
  detail::check_valid("insert", arr);
  detail::check_valid("insert", values);
  const Array a = axis ? arr : ravel(arr);
  const int ax = axis ? canonical_axis("insert", *axis, a.ndim()) : 0;
  std::vector<int32_t> idx = slice_indices(obj, a.ndim() ? a.shape()[ax] : 0);
  Array ind = idx.empty() ? zeros({0}, DType::kI32) : array(idx);
  return insert_impl(arr, ind, values, axis);
}

Array trim_zeros(const Array& filt, const std::string& trim, std::optional<Axes> axis) {
  const char* op = "trim_zeros";
  detail::check_valid(op, filt);
  if (filt.is_tracer()) fail(op, "filt is traced: trim_zeros needs concrete values (as in JAX)");
  std::set<int> axes;
  if (axis) {
    for (int64_t ax : *axis) axes.insert(canonical_axis(op, ax, filt.ndim()));
  } else {
    for (int d = 0; d < filt.ndim(); ++d) axes.insert(d);
  }
  std::string t = trim;
  for (char& c : t) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  const bool front = t.find('f') != std::string::npos, back = t.find('b') != std::string::npos;
  if (axes.empty() || (!front && !back)) return filt;
  Array nz = not_equal(filt, zeros_like(filt));
  Shape start(filt.ndim(), 0), limit = filt.shape();
  for (int ax : axes) {
    Axes others;
    for (int d = 0; d < filt.ndim(); ++d) {
      if (d != ax) others.push_back(d);
    }
    std::vector<int32_t> m =
        astype(others.empty() ? nz : any(nz, others), DType::kI32).to_vector<int32_t>();
    auto first = std::find(m.begin(), m.end(), 1);
    if (first == m.end()) {
      start[ax] = limit[ax] = 0;
      continue;
    }
    if (front) start[ax] = first - m.begin();
    if (back) limit[ax] = m.rend() - std::find(m.rbegin(), m.rend(), 1);
  }
  return slice(filt, start, limit);
}

Array fill_diagonal(const Array& a, const Array& val, bool wrap) {
  const char* op = "fill_diagonal";
  detail::check_valid(op, a);
  detail::check_valid(op, val);
  if (wrap) fail(op, "wrap=True is not implemented, must use wrap=False (as in JAX)");
  if (a.ndim() < 2) fail(op, "array must be at least 2-d, got shape ", shape_str(a.shape()));
  if (a.ndim() > 2) {
    for (int64_t d : a.shape()) {
      if (d != a.shape()[0]) {
        fail(op, "all dimensions of input must be of equal length, got ", shape_str(a.shape()));
      }
    }
  }
  const int64_t n = *std::min_element(a.shape().begin(), a.shape().end());
  Array v = val;
  if (val.ndim() != 0) {
    if (val.size() == 0 && n > 0) fail(op, "val is empty");
    v = ravel(val);
    if (v.size() < n) v = tile(v, {(n + v.size() - 1) / v.size()});
    v = slice(v, {0}, {n});
  }
  std::vector<Index> idx;
  for (const Array& i : diag_indices(n, a.ndim())) idx.emplace_back(i);
  return at(a, idx).set(v);
}

Array take(const Array& x, const Array& indices, std::optional<int64_t> axis, TakeMode mode,
           std::optional<double> fill_value) {
  const Array a = axis ? x : ravel(x);
  const int64_t ax = axis ? normalize_axis("take", *axis, x.ndim()) : 0;
  if (!is_integral(indices.dtype())) fail("take", "indices must be integers, got ", indices.dtype());
  if (a.ndim() == 0) fail("take", "x must have at least one dim");
  const int64_t n = a.shape()[ax];
  switch (mode) {
    case TakeMode::kClip:
      return take(a, indices, ax, GatherMode::kClip);
    case TakeMode::kWrap:
      if (n == 0) return take(a, indices, ax, GatherMode::kClip);  // the empty-axis error
      return take(a, remainder(indices, scalar(static_cast<double>(n), indices.dtype())), ax,
                  GatherMode::kClip);
    case TakeMode::kFill:
      break;
  }
  Array out = take(a, indices, ax, GatherMode::kFill);
  if (!fill_value) return out;
  // In range after one wrap of negatives: -n <= i < n.
  Array ok = indices < scalar(static_cast<double>(n), indices.dtype());
  if (!is_unsigned(indices.dtype())) {
    ok = logical_and(ok, indices >= scalar(-static_cast<double>(n), indices.dtype()));
  }
  Shape s(static_cast<size_t>(ax), 1);
  s.insert(s.end(), indices.shape().begin(), indices.shape().end());
  s.resize(static_cast<size_t>(out.ndim()), 1);
  return where(reshape(ok, s), out, scalar(*fill_value, a.dtype()));
}

}  // namespace graft
