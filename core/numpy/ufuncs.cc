// jax.numpy math functions (core/numpy/ufuncs.h), each written as JAX 0.10.2 writes it in
// jax/_src/numpy/ufuncs.py, lax_numpy.py and jax/_src/lax/other.py, over graft's public ops.
// Where JAX binds a lax primitive graft does not have (atan2, cbrt, exp2) the value is a
// composite and the derivative JAX's rule, attached with a custom_jvp (the custom_jvp_call
// primitive), so grad, vmap and jit see JAX's derivative.
#include <cmath>
#include <limits>
#include <numbers>

#include "core/error.h"
#include "core/numpy/numpy.h"
#include "core/lax/util.h"
#include "core/primitives/call.h"
#include "core/primitives/elementwise.h"

namespace graft {

using detail::check_valid;
using detail::inexact;
using detail::inexact2;
using detail::convert;
using detail::promote_and_broadcast;
using P = PrimitiveId;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kPi = std::numbers::pi;

// lax.round (half away from zero), as core/lax/elementwise_ops.cc writes it.
Array round_half_away(const Array& x) {
  Array t = trunc(x);
  return where(greater_equal(abs(x - t), 0.5), t + sign(x), t);
}

double finfo_max(DType d) {
  switch (d) {
    case DType::kF16:
      return 65504.0;
    case DType::kBF16:
      return 3.3895313892515355e38;
    case DType::kF32:
      return std::numeric_limits<float>::max();
    default:
      return std::numeric_limits<double>::max();
  }
}

}  // namespace

Array log2(const Array& x) {
  Array f = inexact("log2", x, /*complex_ok=*/true);
  return log(f) / Array(std::numbers::ln2);
}

Array log10(const Array& x) {
  Array f = inexact("log10", x, /*complex_ok=*/true);
  return log(f) * Array(0.4342944819032518);  // exactly 1 / log(10) rounded, as jnp
}





Array cbrt(const Array& x) {
  Array f = inexact("cbrt", x);
  auto value = [](const Array& v) { return sign(v) * power(abs(v), Array(1.0 / 3.0)); };
  FlatFn fn = [value](const std::vector<Array>& xs) { return std::vector<Array>{value(xs[0])}; };
  detail::JvpRuleFn jr = [value](const std::vector<Array>& ps, const std::vector<Array>& ts) {
    Array ans = value(ps[0]);
    // JAX's cbrt jvp: g * (1/3 * ans^-2).
    Array t = ts[0] * (Array(1.0 / 3.0) * (1 / (ans * ans)));
    return std::pair{std::vector<Array>{ans}, std::vector<Array>{t}};
  };
  return detail::bind_custom_jvp("cbrt", fn, jr, {f})[0];
}


Array deg2rad(const Array& x) {
  return inexact("deg2rad", x, /*complex_ok=*/true) * Array(kPi / 180);
}
Array rad2deg(const Array& x) {
  return inexact("rad2deg", x, /*complex_ok=*/true) * Array(180 / kPi);
}

Array sinc(const Array& x) {
  Array f = inexact("sinc", x, /*complex_ok=*/true);
  Array eq_zero = equal(f, 0);
  Array pi_x = Array(kPi) * f;
  Array safe = where(eq_zero, ones_like(pi_x), pi_x);
  // sin(y) / y = sum_k (-1)^k y^2k / (2k+1)!: its derivatives at 0 are JAX's
  // _sinc_maclaurin coefficients (value exactly 1 at 0). Evaluated at 0 off the zeros, so the
  // untaken branch stays finite (a zero cotangent times an infinite partial would be NaN).
  Array p = square(where(eq_zero, pi_x, zeros_like(pi_x)));
  Array taylor = 1 + p * (-1.0 / 6 + p * (1.0 / 120 + p * (-1.0 / 5040 + p * (1.0 / 362880))));
  return where(eq_zero, taylor, sin(safe) / safe);
}



Array trunc(const Array& x) {
  check_valid("trunc", x);
  detail::refuse_complex("trunc", x);
  if (!is_floating(x.dtype())) return x;
  return where(less(x, 0), ceil(x), floor(x));
}

Array rint(const Array& x) {
  check_valid("rint", x);
  if (is_complex(x.dtype())) return complex(round(real(x)), round(imag(x)));  // as jnp.rint
  if (!is_floating(x.dtype())) return convert(x, DType::kF32);
  return round(x);
}

Array fmax(const Array& a, const Array& b) {
  return where(logical_or(greater(a, b), isnan(b)), a, b);
}
Array fmin(const Array& a, const Array& b) { return where(logical_or(less(a, b), isnan(b)), a, b); }

Array heaviside(const Array& a, const Array& b) {
  auto [x1, x2] = inexact2("heaviside", a, b);
  Array zero = zeros_like(x1);
  return where(less(x1, zero), zero,
               where(greater(x1, zero), ones_like(x1), where(isnan(x1), x1, x2)));
}

Array float_power(const Array& a, const Array& b) {
  auto [x1, x2] = inexact2("float_power", a, b, /*complex_ok=*/true);
  return power(x1, x2);
}

Array positive(const Array& x) {
  check_valid("positive", x);
  return x;
}
Array fabs(const Array& x) { return abs(inexact("fabs", x)); }


Array nan_to_num(const Array& x, double nan, std::optional<double> posinf,
                 std::optional<double> neginf) {
  check_valid("nan_to_num", x);
  if (is_complex(x.dtype())) {  // each part, as jnp
    return detail::through_parts(
        x, [&](const Array& p) { return nan_to_num(p, nan, posinf, neginf); });
  }
  DType d = x.dtype();
  if (!is_floating(d)) return x;
  double hi = posinf.value_or(finfo_max(d)), lo = neginf.value_or(-finfo_max(d));
  Array out = where(isnan(x), scalar(nan, d), x);
  out = where(isposinf(out), scalar(hi, d), out);
  return where(isneginf(out), scalar(lo, d), out);
}

Array isclose(const Array& a, const Array& b, double rtol, double atol, bool equal_nan) {
  auto [x, y] = inexact2("isclose", a, b, /*complex_ok=*/true);
  DType d = is_complex(x.dtype()) ? complex_part_dtype(x.dtype()) : x.dtype();
  Array in_range = less_equal(abs(x - y), scalar(atol, d) + scalar(rtol, d) * abs(y));
  Array out = logical_or(equal(x, y), logical_and(isfinite(y), in_range));
  return equal_nan ? logical_or(out, logical_and(isnan(x), isnan(y))) : out;
}

Array allclose(const Array& a, const Array& b, double rtol, double atol, bool equal_nan) {
  return all(isclose(a, b, rtol, atol, equal_nan));
}

Array fmod(const Array& a, const Array& b) {
  std::vector<Array> xs = promote_and_broadcast("fmod", {a, b});
  Array x = xs[0], y = xs[1];
  if (x.dtype() == DType::kBool) fail("fmod", "is not defined for bool operands");
  if (!is_floating(y.dtype())) y = where(equal(y, 0), ones_like(y), y);
  return binary(P::kRem, x, y);
}

std::pair<Array, Array> divmod(const Array& a, const Array& b) {
  std::vector<Array> xs = promote_and_broadcast("divmod", {a, b});
  const Array &x1 = xs[0], &x2 = xs[1];
  if (x1.dtype() == DType::kBool) fail("divmod", "is not defined for bool operands");
  if (!is_floating(x1.dtype())) return {floor_divide(x1, x2), remainder(x1, x2)};
  // jnp's _float_divmod (CPython's float_divmod).
  Array mod = binary(P::kRem, x1, x2);
  Array div = binary(P::kDiv, where(equal(x2, 0), x1, x1 - mod), x2);
  Array ind = logical_and(not_equal(mod, 0), not_equal(sign(x2), sign(mod)));
  return {round_half_away(where(ind, div - 1, div)), where(ind, mod + x2, mod)};
}

}  // namespace graft
