#include "core/shape.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/error.h"

namespace graft {

namespace {

// The product of the nonzero dims (NumPy's rule: (0, 2^62, 2^62) is too big as well, so
// no stride of an accepted shape overflows), false when it overflows int64; sets `zero`
// when a dim is 0.
bool nonzero_product(const Shape& s, int64_t& n, bool& zero) {
  n = 1;
  zero = false;
  for (int64_t d : s) {
    if (d == 0) {
      zero = true;
    } else if (__builtin_mul_overflow(n, d, &n)) {
      return false;
    }
  }
  return true;
}

[[noreturn]] void fail_too_many(std::string_view op, const Shape& s) {
  fail(op, "shape ", shape_str(s), " has more elements than int64 holds");
}

}  // namespace

int64_t numel(const Shape& s) {
  int64_t n;
  bool zero;
  if (!nonzero_product(s, n, zero)) fail_too_many("numel", s);
  return zero ? 0 : n;
}

void check_shape(std::string_view op, const Shape& s) {
  for (int64_t d : s) {
    if (d < 0) fail(op, "negative dimension in shape ", shape_str(s));
  }
  int64_t n;
  bool zero;
  if (!nonzero_product(s, n, zero)) fail_too_many(op, s);
}

void check_shape(std::string_view op, const Shape& s, DType dtype) {
  check_shape(op, s);
  int64_t n, bytes;
  bool zero;
  nonzero_product(s, n, zero);
  if (__builtin_mul_overflow(n, dtype_size(dtype), &bytes)) {
    fail(op, "shape ", shape_str(s), " of ", dtype_name(dtype), " has more bytes than int64 holds");
  }
}

int64_t checked_mul(std::string_view op, int64_t a, int64_t b, std::string_view what) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) fail(op, what, " ", a, " * ", b, " overflows int64");
  return r;
}

int64_t checked_add(std::string_view op, int64_t a, int64_t b, std::string_view what) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) fail(op, what, " ", a, " + ", b, " overflows int64");
  return r;
}

std::string shape_str(const Shape& s) {
  if (s.size() == 1) return absl::StrCat("(", s[0], ",)");
  return absl::StrCat("(", absl::StrJoin(s, ", "), ")");
}

Shape row_major_strides(const Shape& s) {
  Shape st(s.size());
  int64_t acc = 1;
  for (int i = static_cast<int>(s.size()) - 1; i >= 0; --i) {
    st[i] = acc;
    acc *= s[i];
  }
  return st;
}

Shape broadcast_shapes(std::string_view op, const Shape& a, const Shape& b) {
  size_t n = std::max(a.size(), b.size());
  Shape out(n);
  for (size_t i = 0; i < n; ++i) {
    int64_t da = i < n - a.size() ? 1 : a[i - (n - a.size())];
    int64_t db = i < n - b.size() ? 1 : b[i - (n - b.size())];
    if (da != db && da != 1 && db != 1) {
      fail(op, "shapes ", shape_str(a), " and ", shape_str(b), " cannot be broadcast together");
    }
    out[i] = da == 1 ? db : da;
  }
  check_shape(op, out);
  return out;
}

int normalize_axis(std::string_view op, int64_t axis, int ndim) {
  if (axis < -ndim || axis >= ndim) {
    fail(op, "axis ", axis, " is out of range for an array of rank ", ndim);
  }
  return static_cast<int>(axis < 0 ? axis + ndim : axis);
}

std::vector<int> normalize_axes(std::string_view op, const std::vector<int64_t>& axes, int ndim) {
  std::vector<int> out;
  out.reserve(axes.size());
  for (int64_t a : axes) out.push_back(normalize_axis(op, a, ndim));
  std::sort(out.begin(), out.end());
  if (std::adjacent_find(out.begin(), out.end()) != out.end()) {
    fail(op, "repeated axis in (", absl::StrJoin(axes, ", "), ")");
  }
  return out;
}

}  // namespace graft
