#include "core/lax/math.h"

#include <cmath>
#include <limits>
#include <numbers>
#include <utility>
#include <vector>

#include "core/lax/lax.h"
#include "core/lax/util.h"
#include "core/primitives/call.h"

namespace graft {

using detail::check_valid;
using detail::convert;
using detail::inexact;
using detail::inexact2;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kPi = std::numbers::pi;

// A custom_jvp of a function of two same-typed operands: `f` gives the value, `rule` the
// tangent (linear in ta, tb) from the primals and the value.
template <typename F, typename Rule>
Array custom_jvp2(const char* name, const Array& a, const Array& b, F f, Rule rule) {
  FlatFn fn = [f](const std::vector<Array>& xs) { return std::vector<Array>{f(xs[0], xs[1])}; };
  detail::JvpRuleFn jr = [f, rule](const std::vector<Array>& ps, const std::vector<Array>& ts) {
    Array out = f(ps[0], ps[1]);
    Array t = rule(ps[0], ps[1], out, ts[0], ts[1]);
    return std::pair{std::vector<Array>{out}, std::vector<Array>{t}};
  };
  return detail::bind_custom_jvp(name, fn, jr, {a, b})[0];
}

// lax.other._replace_inf: +inf -> 0.
Array replace_inf(const Array& x) { return where(equal(x, kInf), zeros_like(x), x); }

Array logaddexp_value(const Array& a, const Array& b) {
  Array amax = maximum(a, b);
  Array delta = a - b;
  return where(isnan(delta), a + b, amax + log1p(exp(-abs(delta))));
}

Array logaddexp2_value(const Array& a, const Array& b) {
  Array amax = maximum(a, b);
  Array delta = a - b;
  Array inv_ln2(1.0 / std::numbers::ln2);
  return where(isnan(delta), a + b, amax + inv_ln2 * log1p(exp2(-abs(delta))));
}

// atan2(y, x) from atan of |y| / |x| in [0, pi/2], then reflected: pi - t where x's sign bit
// is set, and negated where y's is. 0 / 0 and inf / inf are the cases the quotient misses.
Array atan2_value(const Array& y, const Array& x) {
  Array ay = abs(y), ax = abs(x);
  Array t = atan(ay / ax);
  t = where(logical_and(equal(ay, 0), equal(ax, 0)), zeros_like(t), t);
  t = where(logical_and(isinf(ay), isinf(ax)), Array(kPi / 4), t);
  t = where(signbit(x), Array(kPi) - t, t);
  return where(signbit(y), -t, t);
}

}  // namespace

Array exp2(const Array& x) {
  Array f = inexact("exp2", x, /*complex_ok=*/true);
  return power(full_like(f, 2.0), f);
}

Array logaddexp(const Array& a, const Array& b) {
  auto [x1, x2] = inexact2("logaddexp", a, b);
  return custom_jvp2(
      "logaddexp", x1, x2, logaddexp_value,
      [](const Array& x1, const Array& x2, const Array& out, const Array& t1, const Array& t2) {
        Array o = replace_inf(out);
        return t1 * exp(replace_inf(x1) - o) + t2 * exp(replace_inf(x2) - o);
      });
}

Array logaddexp2(const Array& a, const Array& b) {
  auto [x1, x2] = inexact2("logaddexp2", a, b);
  return custom_jvp2(
      "logaddexp2", x1, x2, logaddexp2_value,
      [](const Array& x1, const Array& x2, const Array& out, const Array& t1, const Array& t2) {
        Array o = replace_inf(out);
        return t1 * exp2(replace_inf(x1) - o) + t2 * exp2(replace_inf(x2) - o);
      });
}

Array hypot(const Array& a, const Array& b) {
  auto [x1, x2] = inexact2("hypot", a, b);
  x1 = abs(x1);
  x2 = abs(x2);
  Array idx_inf = logical_or(isposinf(x1), isposinf(x2));
  Array hi = maximum(x1, x2), lo = minimum(x1, x2);
  Array hi_zero = equal(hi, 0);
  Array safe = where(hi_zero, ones_like(hi), hi);
  Array r = where(hi_zero, hi, hi * sqrt(1 + square(lo / safe)));
  return where(idx_inf, full_like(r, kInf), r);
}

Array arctan2(const Array& y, const Array& x) {
  auto [x1, x2] = inexact2("arctan2", y, x);
  return custom_jvp2(
      "atan2", x1, x2, atan2_value,
      [](const Array& y, const Array& x, const Array&, const Array& ty, const Array& tx) {
        Array denom = square(y) + square(x);
        return ty * (x / denom) + tx * (-y / denom);
      });
}

Array copysign(const Array& a, const Array& b) {
  auto [x1, x2] = inexact2("copysign", a, b);
  Array m = abs(x1);
  return where(signbit(x2), -m, m);
}

Array signbit(const Array& x) {
  check_valid("signbit", x);
  DType d = x.dtype();
  if (d == DType::kBool) return full(x.shape(), 0, DType::kBool);
  if (is_integral(d)) return less(x, 0);
  if (d == DType::kF64) {
    Array bits = bitcast_convert_type(x, DType::kI64);
    return not_equal(shift_right_logical(bits, scalar(63, DType::kI64)), scalar(0, DType::kI64));
  }
  // f16 and bf16 widen exactly (sign bits included) to f32; graft has no 16-bit integers.
  Array bits = bitcast_convert_type(convert(x, DType::kF32), DType::kU32);
  return not_equal(shift_right_logical(bits, scalar(31, DType::kU32)), scalar(0, DType::kU32));
}

Array isposinf(const Array& x) {
  check_valid("isposinf", x);
  detail::refuse_complex("isposinf", x);
  if (!is_floating(x.dtype())) return full(x.shape(), 0, DType::kBool);
  return equal(x, kInf);
}

Array isneginf(const Array& x) {
  check_valid("isneginf", x);
  detail::refuse_complex("isneginf", x);
  if (!is_floating(x.dtype())) return full(x.shape(), 0, DType::kBool);
  return equal(x, -kInf);
}

}  // namespace graft
