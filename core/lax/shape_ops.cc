// Public shape ops, part 1: reshape, transpose, broadcasting, dims, slicing, iota.
// (Joining, splitting, padding and repetition are in core/lax/shape_join.cc.)
#include <algorithm>
#include <numeric>

#include "absl/strings/str_join.h"
#include "core/error.h"
#include "core/lax/lax.h"
#include "core/lax/util.h"
#include "core/primitives/shape.h"

namespace graft {

using detail::check_valid;

namespace {

std::vector<int> iota_perm(int n) {
  std::vector<int> p(n);
  std::iota(p.begin(), p.end(), 0);
  return p;
}

std::string list_str(const std::vector<int64_t>& v) { return "(" + absl::StrJoin(v, ", ") + ")"; }

}  // namespace

Array iota(DType dtype, const Shape& shape, int dimension) {
  check_shape("iota", shape, dtype);
  int dim = normalize_axis("iota", dimension, static_cast<int>(shape.size()));
  if (dtype == DType::kBool) fail("iota", "needs a numeric dtype, got bool");
  return apply<Iota>({}, dtype, shape, dim);
}

Array reshape(const Array& x, const Shape& shape) {
  check_valid("reshape", x);
  Shape out = shape;
  int infer_at = -1;
  Shape given;  // the dims other than -1
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i] == -1) {
      if (infer_at >= 0) fail("reshape", "can only infer one dimension (-1) in ", list_str(shape));
      infer_at = static_cast<int>(i);
    } else {
      given.push_back(out[i]);
    }
  }
  check_shape("reshape", given);  // negative dims, and a product beyond int64
  const int64_t known = numel(given);
  if (infer_at >= 0) {
    if (known == 0 || x.size() % known != 0) {
      fail("reshape", "cannot reshape ", shape_str(x.shape()), " into ", list_str(shape));
    }
    out[infer_at] = x.size() / known;
  }
  if (numel(out) != x.size()) {
    fail("reshape", "cannot reshape ", shape_str(x.shape()), " into ", shape_str(out));
  }
  if (out == x.shape()) return x;
  return apply<Reshape>({x}, out);
}

Array ravel(const Array& x) {
  check_valid("ravel", x);
  return reshape(x, {x.size()});
}

Array transpose(const Array& x, std::optional<std::vector<int>> perm) {
  check_valid("transpose", x);
  int r = x.ndim();
  std::vector<int> p(r);
  if (!perm) {
    for (int i = 0; i < r; ++i) p[i] = r - 1 - i;
  } else {
    if (static_cast<int>(perm->size()) != r) {
      fail("transpose", "axes (", absl::StrJoin(*perm, ", "), ") don't match an array of shape ",
           shape_str(x.shape()));
    }
    std::vector<int64_t> axes(perm->begin(), perm->end());
    normalize_axes("transpose", axes, r);  // range and duplicate checks
    for (int i = 0; i < r; ++i) p[i] = normalize_axis("transpose", (*perm)[i], r);
  }
  if (p == iota_perm(r)) return x;
  return apply<Transpose>({x}, p);
}

Array swapaxes(const Array& x, int64_t a, int64_t b) {
  check_valid("swapaxes", x);
  int r = x.ndim();
  std::vector<int> p = iota_perm(r);
  std::swap(p[normalize_axis("swapaxes", a, r)], p[normalize_axis("swapaxes", b, r)]);
  return transpose(x, p);
}

Array moveaxis(const Array& x, int64_t source, int64_t destination) {
  check_valid("moveaxis", x);
  int r = x.ndim();
  int s = normalize_axis("moveaxis", source, r);
  int d = normalize_axis("moveaxis", destination, r);
  std::vector<int> p;
  for (int i = 0; i < r; ++i) {
    if (i != s) p.push_back(i);
  }
  p.insert(p.begin() + d, s);
  return transpose(x, p);
}

Array broadcast_to(const Array& x, const Shape& shape) {
  check_valid("broadcast_to", x);
  check_shape("broadcast_to", shape, x.dtype());
  if (shape.size() < x.shape().size()) {
    fail("broadcast_to", "cannot broadcast ", shape_str(x.shape()), " to the lower rank shape ",
         shape_str(shape));
  }
  return detail::broadcast_to_shape("broadcast_to", x, shape);
}

Array broadcast_in_dim(const Array& x, const Shape& shape,
                       const std::vector<int>& broadcast_dimensions) {
  check_valid("broadcast_in_dim", x);
  if (x.shape() == shape && broadcast_dimensions == iota_perm(x.ndim())) return x;
  return apply<BroadcastInDim>({x}, shape, broadcast_dimensions);  // infer checks
}

Array expand_dims(const Array& x, const Axes& axes) {
  check_valid("expand_dims", x);
  int r = x.ndim() + static_cast<int>(axes.size());
  std::vector<int> at = normalize_axes("expand_dims", axes, r);
  Shape out;
  size_t src = 0, k = 0;
  for (int i = 0; i < r; ++i) {
    if (k < at.size() && at[k] == i) {
      out.push_back(1);
      ++k;
    } else {
      out.push_back(x.shape()[src++]);
    }
  }
  return reshape(x, out);
}

Array squeeze(const Array& x, const Axes& axes) {
  check_valid("squeeze", x);
  std::vector<bool> drop(x.ndim(), false);
  if (axes.empty()) {
    for (int i = 0; i < x.ndim(); ++i) drop[i] = x.shape()[i] == 1;
  } else {
    for (int a : normalize_axes("squeeze", axes, x.ndim())) {
      if (x.shape()[a] != 1) {
        fail("squeeze", "cannot select axis ", a, " to squeeze out: it has size ", x.shape()[a],
             " in ", shape_str(x.shape()));
      }
      drop[a] = true;
    }
  }
  Shape out;
  for (int i = 0; i < x.ndim(); ++i) {
    if (!drop[i]) out.push_back(x.shape()[i]);
  }
  return reshape(x, out);
}

Array slice(const Array& x, const Shape& start, const Shape& limit, const Shape& strides) {
  check_valid("slice", x);
  size_t r = x.shape().size();
  Shape st = strides.empty() ? Shape(r, 1) : strides;
  if (start.size() != r || limit.size() != r || st.size() != r) {
    fail("slice", "start ", list_str(start), ", limit ", list_str(limit), " and strides ",
         list_str(st), " need one entry per dim of ", shape_str(x.shape()));
  }
  for (size_t d = 0; d < r; ++d) {
    if (start[d] < 0 || start[d] > limit[d] || limit[d] > x.shape()[d] || st[d] < 1) {
      fail("slice", "invalid start ", list_str(start), ", limit ", list_str(limit), ", strides ",
           list_str(st), " for shape ", shape_str(x.shape()));
    }
  }
  if (limit == x.shape() &&
      std::all_of(start.begin(), start.end(), [](int64_t v) { return v == 0; }) &&
      std::all_of(st.begin(), st.end(), [](int64_t v) { return v == 1; })) {
    return x;
  }
  return apply<Slice>({x}, start, limit, st);
}

Array slice_axis(const Array& x, int64_t axis, std::optional<int64_t> start,
                 std::optional<int64_t> stop, int64_t step) {
  check_valid("slice_axis", x);
  int a = normalize_axis("slice_axis", axis, x.ndim());
  if (step == 0) fail("slice_axis", "slice step cannot be zero");
  // CPython's PySlice_AdjustIndices.
  int64_t n = x.shape()[a];
  int64_t lower = step < 0 ? -1 : 0, upper = step < 0 ? n - 1 : n;
  auto adjust = [&](std::optional<int64_t> v, int64_t dflt) {
    if (!v) return dflt;
    int64_t i = *v < 0 ? *v + n : *v;
    return std::clamp(i, lower, upper);
  };
  int64_t b = adjust(start, step < 0 ? upper : lower);
  int64_t e = adjust(stop, step < 0 ? lower : upper);
  int64_t count = 0;
  // Written so that no step (INT64_MIN / MAX included) overflows: e - b and b - e are in
  // [0, n], and a step longer than the range takes one element.
  if (step > 0 && e > b) count = 1 + (e - b - 1) / step;
  if (step < 0 && b > e) count = 1 - (b - e - 1) / step;
  Shape lo(x.ndim(), 0), hi = x.shape(), st(x.ndim(), 1);
  if (count == 0) {
    hi[a] = 0;
    return slice(x, lo, hi, st);
  }
  if (step > 0) {
    lo[a] = b;
    hi[a] = b + (count - 1) * step + 1;
    st[a] = count == 1 ? 1 : step;
    return slice(x, lo, hi, st);
  }
  // Negative step: slice the same elements in ascending order, then reverse them.
  lo[a] = b + (count - 1) * step;
  hi[a] = b + 1;
  st[a] = count == 1 ? 1 : -step;
  return flip(slice(x, lo, hi, st), {a});
}

Array flip(const Array& x, const Axes& axes) {
  check_valid("flip", x);
  std::vector<int> dims = detail::reduction_axes("flip", x, axes);
  if (dims.empty()) return x;
  return apply<Rev>({x}, dims);
}

Array dynamic_slice(const Array& x, const std::vector<Array>& starts, const Shape& sizes) {
  check_valid("dynamic_slice", x);
  const Shape& s = x.shape();
  if (starts.size() != s.size() || sizes.size() != s.size()) {
    fail("dynamic_slice", "needs one start index and one size per dim of ", shape_str(s), ", got ",
         starts.size(), " starts and sizes ", list_str(sizes));
  }
  std::vector<Array> in{x};
  for (const Array& i : starts) {
    check_valid("dynamic_slice", i);
    if (i.ndim() != 0 || !is_integral(i.dtype())) {
      fail("dynamic_slice", "start indices must be integer scalars, got ", i.aval().str());
    }
    in.push_back(i);
  }
  for (size_t d = 0; d < s.size(); ++d) {
    if (sizes[d] < 0 || sizes[d] > s[d]) {
      fail("dynamic_slice", "slice sizes ", list_str(sizes), " do not fit in ", shape_str(s));
    }
  }
  return bind1(std::make_shared<const DynamicSlice>(sizes), std::move(in));
}

Array dynamic_update_slice(const Array& x, const Array& update, const std::vector<Array>& starts) {
  check_valid("dynamic_update_slice", x);
  check_valid("dynamic_update_slice", update);
  const Shape& s = x.shape();
  if (starts.size() != s.size()) {
    fail("dynamic_update_slice", "needs one start index per dim of ", shape_str(s), ", got ",
         starts.size());
  }
  // A weakly typed update (a C++ number) takes the operand's dtype; others must match.
  Array u = update;
  if (u.dtype() != x.dtype()) {
    if (!u.weak_type()) {
      fail("dynamic_update_slice", "update dtype ", dtype_name(u.dtype()),
           " differs from the operand's ", dtype_name(x.dtype()));
    }
    u = detail::convert(u, x.dtype(), x.weak_type());
  }
  bool fits = u.ndim() == x.ndim();
  for (int d = 0; fits && d < x.ndim(); ++d) fits = u.shape()[d] <= s[d];
  if (!fits) {
    fail("dynamic_update_slice", "update of shape ", shape_str(u.shape()),
         " must have the operand's rank and fit in ", shape_str(s));
  }
  std::vector<Array> in{x, u};
  for (const Array& i : starts) {
    check_valid("dynamic_update_slice", i);
    if (i.ndim() != 0 || !is_integral(i.dtype())) {
      fail("dynamic_update_slice", "start indices must be integer scalars, got ", i.aval().str());
    }
    in.push_back(i);
  }
  return bind1(std::make_shared<const DynamicUpdateSlice>(), std::move(in));
}

}  // namespace graft
