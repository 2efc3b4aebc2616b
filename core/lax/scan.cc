// associative_scan and the cumulative reductions built on it (core/lax/scan.h).
#include "core/lax/scan.h"

#include <array>
#include <string_view>

#include "core/error.h"
#include "core/lax/lax.h"
#include "core/lax/util.h"

namespace graft {
namespace detail {
namespace {

constexpr const char* kOp = "associative_scan";

// x[start:stop:step] along axis, as lax.slice_in_dim (stop may be negative: from the end).
Array slice_in_dim(const Array& x, int axis, int64_t start, std::optional<int64_t> stop,
                   int64_t step = 1) {
  return slice_axis(x, axis, start, stop, step);
}

// a and b interleaved along axis: a[0], b[0], a[1], b[1], ... (a has as many elements as b,
// or one more). As JAX's _interleave: both padded with zeros in between and added (or-ed).
Array interleave(const Array& a, const Array& b, int axis) {
  const bool same = a.shape()[axis] == b.shape()[axis];
  std::vector<std::array<int64_t, 3>> pa(a.ndim(), {0, 0, 0}), pb(b.ndim(), {0, 0, 0});
  pa[axis] = {0, same ? 1 : 0, 1};
  pb[axis] = {1, same ? 0 : 1, 1};
  Array x = lax_pad(a, scalar(0, a.dtype()), pa);
  Array y = lax_pad(b, scalar(0, b.dtype()), pb);
  return a.dtype() == DType::kBool ? logical_or(x, y) : add(x, y);
}

// fn on two lists of leaves, checked to give one leaf per input leaf, each of the shape of
// the corresponding leaf of `a`.
std::vector<Array> combine(const ScanCombine& fn, const std::vector<Array>& a,
                           const std::vector<Array>& b) {
  std::vector<Array> c = fn(a, b);
  if (c.size() != a.size()) {
    fail(kOp, "fn must return as many arrays as it is given (", a.size(), "), got ", c.size());
  }
  for (size_t i = 0; i < c.size(); ++i) {
    check_valid(kOp, c[i]);
    if (c[i].shape() != a[i].shape()) {
      fail(kOp, "fn must combine elementwise: leaf ", i, " of shape ", shape_str(a[i].shape()),
           " came back as ", c[i].aval().str());
    }
  }
  return c;
}

std::vector<Array> scan(const ScanCombine& fn, const std::vector<Array>& elems, int axis) {
  const int64_t n = elems[0].shape()[axis];
  if (n < 2) return elems;
  std::vector<Array> evens, odds, rest;  // elems[0:-1:2], elems[1::2], elems[2::2]
  for (const Array& e : elems) {
    evens.push_back(slice_in_dim(e, axis, 0, -1, 2));
    odds.push_back(slice_in_dim(e, axis, 1, std::nullopt, 2));
    rest.push_back(slice_in_dim(e, axis, 2, std::nullopt, 2));
  }
  // The scan of the pairwise combinations gives the odd positions of the result.
  std::vector<Array> odd = scan(fn, combine(fn, evens, odds), axis);
  std::vector<Array> head = odd;
  if (n % 2 == 0) {
    for (Array& h : head) h = slice_in_dim(h, axis, 0, -1);
  }
  // The even positions (past the first) combine the odd result before them with themselves.
  std::vector<Array> even = combine(fn, head, rest);
  std::vector<Array> out(elems.size());
  for (size_t i = 0; i < elems.size(); ++i) {
    Array e = concatenate({slice_in_dim(elems[i], axis, 0, 1), even[i]}, axis);
    out[i] = interleave(e, odd[i], axis);
  }
  return out;
}

}  // namespace

std::vector<Array> associative_scan_flat(const ScanCombine& fn, const std::vector<Array>& elems,
                                         bool reverse, int64_t axis) {
  if (elems.empty()) fail(kOp, "needs at least one array to scan");
  for (const Array& e : elems) check_valid(kOp, e);
  if (elems[0].ndim() == 0) fail(kOp, "cannot scan a scalar, got ", elems[0].aval().str());
  const int ax = normalize_axis(kOp, axis, elems[0].ndim());
  for (const Array& e : elems) {
    if (e.ndim() <= ax || e.shape()[ax] != elems[0].shape()[ax]) {
      fail(kOp, "arrays must have the same size along axis ", ax, ", got ",
           elems[0].aval().str(), " and ", e.aval().str());
    }
  }
  std::vector<Array> xs = elems;
  if (reverse) {
    for (Array& x : xs) x = flip(x, {ax});
  }
  std::vector<Array> out = scan(fn, xs, ax);
  if (reverse) {
    for (Array& x : out) x = flip(x, {ax});
  }
  return out;
}

}  // namespace detail

namespace {

using Binary = Array (*)(const Array&, const Array&);

// lax.cum<op> along axis (flattened when none) with combine function `f`, on x already in
// its accumulation dtype.
Array cumulative(std::string_view op, Binary f, const Array& x, std::optional<int64_t> axis,
                 bool reverse) {
  Array y = x;
  int a = 0;
  if (axis) {
    a = normalize_axis(op, *axis, x.ndim());
  } else {
    y = reshape(x, {x.size()});
  }
  if (y.shape()[a] == 0) return y;
  auto fn = [f](const Array& p, const Array& q) { return f(p, q); };
  return associative_scan(fn, y, reverse, a);
}

void check_numeric(std::string_view op, const Array& x) {
  detail::check_valid(op, x);
  if (x.dtype() == DType::kBool) fail(op, "needs a numeric dtype, got ", x.aval().str());
  detail::refuse_complex(op, x);
}

// bool and narrow ints accumulate in the default int / uint (jnp's promote_integers).
Array promote_integers(const Array& x) {
  if (x.dtype() == DType::kBool || x.dtype() == DType::kI8 || x.dtype() == DType::kI16) {
    return detail::convert(x, DType::kI32);
  }
  if (x.dtype() == DType::kU8 || x.dtype() == DType::kU16) return detail::convert(x, DType::kU32);
  return x;
}

// The axis of the array-API cumulative functions: optional only for 1-D x.
int64_t array_api_axis(std::string_view op, const Array& x, std::optional<int64_t> axis) {
  detail::check_valid(op, x);
  if (x.ndim() == 0) fail(op, "the input must not be a scalar, got ", x.aval().str());
  if (!axis && x.ndim() > 1) {
    fail(op, "axis is only optional for 1-D input, got ", x.aval().str());
  }
  return normalize_axis(op, axis.value_or(0), x.ndim());
}

// out with one `identity` prepended along axis.
Array prepend(const Array& out, int64_t axis, double identity) {
  Shape s = out.shape();
  s[axis] = 1;
  return concatenate({full(s, identity, out.dtype()), out}, axis);
}

Array nan_to(const Array& x, double value) {
  return is_floating(x.dtype()) ? where(isnan(x), scalar(value, x.dtype()), x) : x;
}

}  // namespace

Array cumprod(const Array& x, std::optional<int64_t> axis, bool reverse) {
  detail::check_valid("cumprod", x);
  Array y = x.dtype() == DType::kBool ? detail::convert(x, DType::kI32) : x;
  return cumulative("cumprod", &multiply, y, axis, reverse);
}

Array cummax(const Array& x, std::optional<int64_t> axis, bool reverse) {
  check_numeric("cummax", x);
  return cumulative("cummax", &maximum, x, axis, reverse);
}

Array cummin(const Array& x, std::optional<int64_t> axis, bool reverse) {
  check_numeric("cummin", x);
  return cumulative("cummin", &minimum, x, axis, reverse);
}

Array cumlogsumexp(const Array& x, std::optional<int64_t> axis, bool reverse) {
  detail::check_valid("cumlogsumexp", x);
  if (!is_floating(x.dtype())) {
    fail("cumlogsumexp", "needs a floating dtype, got ", x.aval().str());
  }
  return cumulative("cumlogsumexp", &logaddexp, x, axis, reverse);
}

Array nancumsum(const Array& x, std::optional<int64_t> axis) {
  detail::check_valid("nancumsum", x);
  return cumsum(nan_to(x, 0), axis);
}

Array nancumprod(const Array& x, std::optional<int64_t> axis) {
  detail::check_valid("nancumprod", x);
  return cumprod(nan_to(x, 1), axis);
}

Array cumulative_sum(const Array& x, std::optional<int64_t> axis, bool include_initial) {
  const int64_t a = array_api_axis("cumulative_sum", x, axis);
  Array out = cumsum(promote_integers(x), a);
  return include_initial ? prepend(out, a, 0) : out;
}

Array cumulative_prod(const Array& x, std::optional<int64_t> axis, bool include_initial) {
  const int64_t a = array_api_axis("cumulative_prod", x, axis);
  Array out = cumprod(promote_integers(x), a);
  return include_initial ? prepend(out, a, 1) : out;
}

}  // namespace graft
