// jax.numpy float decomposition and special functions (core/numpy/special.h), after JAX
// 0.10.2's ufuncs.py (frexp, ldexp, modf, nextafter), lax_numpy.py (i0, unwrap, gradient) and
// window_functions.py (kaiser).
#include "core/numpy/special.h"

#include <cmath>
#include <cstdint>
#include <vector>

#include "core/error.h"
#include "core/numpy/numpy.h"
#include "core/lax/util.h"

namespace graft {

using detail::check_valid;
using detail::convert;

namespace {

// promote_args_inexact for one operand: integers and bool become f32 (weak if x is weak).
Array inexact(const char* op, const Array& x) {
  check_valid(op, x);
  detail::refuse_complex(op, x);
  return convert(x, detail::float_dtype_for(x), x.weak_type());
}

// The IEEE layout of f32 / f64: the integer type of the same width, mantissa bits, bias.
struct Layout {
  DType int_dtype;
  int nmant, bias;
};
Layout layout_of(DType d) {
  return d == DType::kF64 ? Layout{DType::kI64, 52, 1023} : Layout{DType::kI32, 23, 127};
}

// x * 2^k for integer-valued k (any dtype), x f32 / f64, rounded once: x times two powers
// of 2 built from exponent bits, each clamped to [2^(1 - bias), inf], so that neither
// overflows or underflows before the product does (2^k alone may not be representable).
Array scale_pow2(const Array& x, const Array& k) {
  const DType d = x.dtype();
  const Layout l = layout_of(d);
  const double big = 4.0 * l.bias;
  Array ki = astype(clip(astype(k, d), Array(-big), Array(big)), l.int_dtype);
  Array half = floor_divide(ki, 2);
  auto build = [&](const Array& e) {
    Array field = clip(e + l.bias, Array(1), Array(2 * l.bias + 1));
    return bitcast_convert_type(shift_left(field, Array(l.nmant)), d);
  };
  return x * build(half) * build(ki - half);
}

// frexp of an f32 / f64 x as JAX's _frexp: the exponent from the bits (subnormals scaled up
// first); the mantissa x * 2^-e, exact, whose derivative is JAX's 2^-e.
std::pair<Array, Array> frexp_bits(const Array& x) {
  const DType d = x.dtype();
  const Layout l = layout_of(d);
  const double tiny = finfo(d).tiny;
  Array small = less(abs(x), tiny);
  Array scaled = where(small, x * std::ldexp(1.0, l.nmant), x);
  Array bits = bitcast_convert_type(scaled, l.int_dtype);
  Array field = bitwise_and(shift_right_logical(bits, Array(l.nmant)), Array(2 * l.bias + 1));
  Array e = field - (l.bias - 1) + where(small, full_like(field, -l.nmant), zeros_like(field));
  Array special = logical_or(logical_or(isinf(x), isnan(x)), equal(x, 0));
  e = where(special, zeros_like(e), e);
  Array m = where(special, x, scale_pow2(x, -e));
  return {m, astype(e, DType::kI32)};
}

// Chebyshev series sum c[k] T_k(t) by Clenshaw's recurrence.
Array chebyshev(const std::vector<double>& c, const Array& t) {
  Array b1 = zeros_like(t), b2 = zeros_like(t);
  for (size_t k = c.size() - 1; k >= 1; --k) {
    Array b0 = 2.0 * t * b1 - b2 + c[k];
    b2 = b1;
    b1 = b0;
  }
  return t * b1 - b2 + c[0];
}

// exp(-x) I0(x) for x >= 0: Chebyshev fits (made with numpy.polynomial.chebyshev.chebinterpolate
// of scipy.special.i0e; relative error below 2e-14) of i0e(x) on [0, 8] in t = x / 4 - 1, and
// of sqrt(x) i0e(x) on [8, inf) in t = 16 / x - 1. Each branch sees its input clamped to its
// range (by where, not minimum / maximum, whose derivative splits at the tie x = 8), so the
// other's derivative stays finite.
Array i0e_nonnegative(const Array& x) {
  static const std::vector<double> kA = {
      0.33839763720473803,     -0.30468267234319829,    0.17162090152220874,
      -0.09490109704804757,    0.049305284239670621,    -0.02373741480589938,
      0.010546460394594868,    -0.0043243099950504762,  0.001639475616941179,
      -0.00057637557453847415, 0.00018850288509566942,  -5.7541950100777062e-05,
      1.6448448070730197e-05,  -4.4167383586114731e-06, 1.1173875394447108e-06,
      -2.6707938569924515e-07, 6.0469950699526542e-08,  -1.3000250533130757e-08,
      2.6598243564921975e-09,  -5.1898019962722719e-10, 9.6759164783030913e-11,
      -1.7269186081136922e-11, 2.956462532053796e-12,   -4.8674739452700616e-13,
      7.8213077040564159e-14,  -1.2650137347892409e-14};
  static const std::vector<double> kB = {
      0.40224520550705445,    0.0033691164782556626,  6.8897583469133171e-05,
      2.8913705208440185e-06, 2.0489185895291116e-07, 2.2666689905143382e-08,
      3.3962320295247882e-09, 4.9406024008777801e-10, 1.18892644267688e-11,
      -3.1499154162199711e-11, -1.3215668325765244e-11, -1.7941817622245611e-12,
      7.1807472249032028e-13, 3.8528391003916043e-13, 1.5659987926291682e-14,
      -4.1504811283749934e-14, -9.2995786510049289e-15, 3.7659933651100702e-15,
      2.2248285085580441e-15};
  Array low_x = less_equal(x, 8.0);
  Array near = where(low_x, x, full_like(x, 8.0)), far = where(low_x, full_like(x, 8.0), x);
  Array low = chebyshev(kA, near * 0.25 - 1.0);
  Array high = chebyshev(kB, 16.0 / far - 1.0) / sqrt(far);
  return where(low_x, low, high);
}

}  // namespace

std::pair<Array, Array> frexp(const Array& x_in) {
  Array x = inexact("frexp", x_in);
  if (x.dtype() == DType::kF32 || x.dtype() == DType::kF64) return frexp_bits(x);
  // f16 / bf16 (graft has no 16-bit integers): exactly through f32, where each value is normal
  // or an exact subnormal.
  auto [m, e] = frexp_bits(astype(x, DType::kF32));
  return {astype(m, x.dtype()), e};
}

Array ldexp(const Array& x1_in, const Array& x2) {
  check_valid("ldexp", x1_in);
  check_valid("ldexp", x2);
  if (is_floating(x2.dtype())) {
    fail("ldexp", "the exponent must be an integer array, got ", dtype_name(x2.dtype()));
  }
  Array x1 = inexact("ldexp", x1_in);
  const DType d = x1.dtype();
  // JAX's steps: split off x1's exponent, add x2 (as floats), and let the mantissa take one
  // factor of 2 so that results just below the overflow threshold stay finite.
  auto [m, e0] = frexp(x1);
  Array e = astype(e0, d) + astype(x2, d);
  Array up = greater(e, 0);
  m = where(up, m * 2.0, m);
  e = where(up, e - 1.0, e);
  // JAX: m * 2 ** e, in d (f16 / bf16 through f32: m * 2^e is exact there, then rounded once).
  const bool narrow = d == DType::kF16 || d == DType::kBF16;
  Array x = narrow ? astype(scale_pow2(astype(m, DType::kF32), e), d) : scale_pow2(m, e);
  return where(logical_or(isinf(x1), equal(x1, 0)), x1, x);
}

std::pair<Array, Array> modf(const Array& x_in) {
  Array x = inexact("modf", x_in);
  Array whole = where(greater_equal(x, 0), floor(x), ceil(x));
  return {x - whole, whole};
}

Array nextafter(const Array& x_in, const Array& y_in) {
  std::vector<Array> xy = detail::promote_and_broadcast("nextafter", {x_in, y_in});
  detail::refuse_complex("nextafter", xy[0]);
  const DType d = detail::float_dtype_for(xy[0]);
  Array x = convert(xy[0], d, xy[0].weak_type()), y = convert(xy[1], d, xy[1].weak_type());
  const FInfo info = finfo(d);
  // Away from zero where y lies beyond x (as seen from 0).
  Array away = equal(greater(y, x), greater(x, 0));
  Array step;
  if (d == DType::kF32 || d == DType::kF64) {
    const Layout l = layout_of(d);
    Array bits = bitcast_convert_type(x, l.int_dtype);
    step = bitcast_convert_type(where(away, bits + 1, bits - 1), d);
  } else {
    // f16 / bf16: in f32 by the ulp of |x| in d (2^(e - nmant - 1), e frexp's exponent, at
    // least that of the smallest normal); toward zero from a power of 2 the step halves.
    Array a = abs(astype(x, DType::kF32));
    auto [m, e] = frexp_bits(a);
    Array e_min = full_like(e, info.minexp + 1);
    Array ulp = scale_pow2(ones_like(a), maximum(e, e_min) - (info.nmant + 1));
    Array halve = logical_and(equal(m, 0.5), greater(e, e_min));
    Array mag = where(away, a + ulp, a - where(halve, ulp * 0.5, ulp));
    mag = where(isinf(a), full_like(a, info.max), mag);
    step = astype(where(less(x, 0), -mag, mag), d);
  }
  Array from_zero = where(less(y, 0), full_like(x, -info.smallest_subnormal),
                          full_like(x, info.smallest_subnormal));
  Array r = where(equal(x, 0), from_zero, step);
  r = where(equal(x, y), y, r);
  return where(logical_or(isnan(x), isnan(y)), full_like(x, NAN), r);
}

Array i0(const Array& x_in) {
  Array x = inexact("i0", x_in);
  // f16 / bf16 compute in f32, as XLA's bessel_i0e does.
  const bool narrow = x.dtype() == DType::kF16 || x.dtype() == DType::kBF16;
  Array a = abs(narrow ? astype(x, DType::kF32) : x);
  Array out = exp(a) * i0e_nonnegative(a);
  return narrow ? astype(out, x.dtype()) : out;
}

Array kaiser(int64_t M, double beta) {
  if (M < 0) fail("kaiser", "M must be non-negative, got ", M);
  if (M <= 1) return ones({M});
  Array n = iota(DType::kF32, {M});
  const double alpha = 0.5 * static_cast<double>(M - 1);
  Array b = scalar(beta, DType::kF32);
  return i0(b * sqrt(1.0 - square((n - alpha) / alpha))) / i0(b);
}

Array unwrap(const Array& p_in, std::optional<double> discont, int64_t axis,
             const Array& period_in) {
  check_valid("unwrap", p_in);
  check_valid("unwrap", period_in);
  if (p_in.ndim() == 0) fail("unwrap", "p must have at least one dimension");
  const int ax = normalize_axis("unwrap", axis, p_in.ndim());
  std::vector<Array> pp = detail::promote_dtypes({p_in, period_in});
  const Array &p = pp[0], &period = pp[1];
  if (p.dtype() == DType::kBool) fail("unwrap", "is not defined for bool arrays");
  if (p.shape()[ax] == 0) return p;
  Array limit = discont ? Array(*discont) : period / 2.0;
  Array interval = is_integral(p.dtype()) ? floor_divide(period, 2) : period / 2.0;
  Array dd = diff(p, 1, ax);
  Array ddmod = remainder(dd + interval, period) - interval;
  ddmod = where(logical_and(equal(ddmod, -interval), greater(dd, 0)), interval, ddmod);
  Array correct = where(less(abs(dd), limit), zeros_like(dd), ddmod - dd);
  return concatenate({slice_axis(p, ax, 0, 1), slice_axis(p, ax, 1, std::nullopt) + cumsum(correct, ax)}, ax);
}

std::vector<Array> gradient(const Array& f_in, const std::vector<Array>& spacing,
                            std::optional<std::vector<int64_t>> axes_in) {
  check_valid("gradient", f_in);
  for (const Array& h : spacing) check_valid("gradient", h);
  // promote_dtypes_inexact over f and the spacings together.
  std::vector<Array> all{f_in};
  all.insert(all.end(), spacing.begin(), spacing.end());
  all = detail::promote_dtypes(all);
  const DType d = detail::float_dtype_for(all[0]);
  for (Array& a : all) a = convert(a, d, a.weak_type());
  const Array f = all[0];
  std::vector<int> axes;
  if (axes_in) {
    for (int64_t a : *axes_in) axes.push_back(normalize_axis("gradient", a, f.ndim()));
  } else {
    for (int a = 0; a < f.ndim(); ++a) axes.push_back(a);
  }
  if (axes.empty()) return {};
  for (int a : axes) {
    if (f.shape()[a] < 2) {
      fail("gradient", "shape ", shape_str(f.shape()),
           " is too small along axis ", a, ": at least 2 elements are required");
    }
  }
  std::vector<Array> dx;
  if (spacing.empty()) {
    dx.assign(axes.size(), Array(1.0));
  } else if (spacing.size() == 1) {
    dx.assign(axes.size(), all[1]);
  } else if (spacing.size() == axes.size()) {
    dx.assign(all.begin() + 1, all.end());
  } else {
    fail("gradient", "invalid number of spacing arguments ", spacing.size(), " for ",
         axes.size(), " axes");
  }
  std::vector<Array> out;
  for (size_t i = 0; i < axes.size(); ++i) {
    const int ax = axes[i];
    Array h = dx[i];
    auto s = [&](const Array& a, std::optional<int64_t> lo, std::optional<int64_t> hi) {
      return slice_axis(a, ax, lo, hi);
    };
    Array upper = s(f, 1, 2) - s(f, 0, 1);
    Array lower = s(f, -1, std::nullopt) - s(f, -2, -1);
    Array inner;
    if (h.ndim() == 0) {
      inner = (s(f, 2, std::nullopt) - s(f, std::nullopt, -2)) * 0.5 / h;
      upper = upper / h;
      lower = lower / h;
    } else if (h.ndim() == 1) {
      if (h.shape()[0] != f.shape()[ax]) {
        fail("gradient", "spacing arrays must have the length of the axis (", f.shape()[ax],
             "), got ", h.shape()[0]);
      }
      Shape hs(f.ndim(), 1);
      hs[ax] = h.shape()[0];
      h = reshape(h, hs);
      upper = upper / (s(h, 1, 2) - s(h, 0, 1));
      lower = lower / (s(h, -1, std::nullopt) - s(h, -2, -1));
      Array dx1 = s(h, 1, -1) - s(h, 0, -2);
      Array dx2 = s(h, 2, std::nullopt) - s(h, 1, -1);
      Array a = -dx2 / (dx1 * (dx1 + dx2));
      Array b = (dx2 - dx1) / (dx1 * dx2);
      Array c = dx1 / (dx2 * (dx1 + dx2));
      inner = a * s(f, 0, -2) + b * s(f, 1, -1) + c * s(f, 2, std::nullopt);
    } else {
      fail("gradient", "spacing arrays must be scalars or 1-D, got shape ",
           shape_str(h.shape()));
    }
    out.push_back(concatenate({upper, inner, lower}, ax));
  }
  return out;
}

}  // namespace graft
