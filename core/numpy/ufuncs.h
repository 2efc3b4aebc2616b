// More jax.numpy math: JAX 0.10.2's functions, written as compositions of graft's
// public ops and existing primitives (no new primitive), so grad / vmap / jit work on them.
// core/ops.h includes this header; the definitions are in core/numpy/ufuncs.cc. exp2,
// logaddexp, hypot, arctan2, copysign, signbit and isposinf / isneginf are lax-level
// (core/lax/math.h): complex math and the cumulative reductions use them.
//
// Promotion is jnp's: functions marked "inexact" promote integer and bool operands to the
// default float (f32; weak if the operand is weak), like promote_args_inexact. Binary ones
// promote and broadcast both operands first. Differences from JAX are listed with each op.
#pragma once

#include <optional>
#include <utility>

#include "core/array.h"
#include "core/lax/math.h"

namespace graft {

// ---- logarithms and exponentials (inexact) ----
Array log2(const Array& x);   // log(x) / log(2)
Array log10(const Array& x);  // log(x) * (1 / log(10))

// ---- geometry (inexact) ----
// Real cube root: sign(x) * |x|^(1/3), a composite (JAX binds the lax.cbrt primitive; values
// agree within a few f32 ulps, not bit for bit). Derivative as JAX's: t / (3 cbrt(x)^2)
// (inf at 0), through a custom_jvp.
Array cbrt(const Array& x);

// jnp's NumPy spellings of the inverse trigonometric and hyperbolic functions (core/ops.h).
inline Array arccos(const Array& x) { return acos(x); }
inline Array arcsin(const Array& x) { return asin(x); }
inline Array arctan(const Array& x) { return atan(x); }
inline Array arccosh(const Array& x) { return acosh(x); }
inline Array arcsinh(const Array& x) { return asinh(x); }
inline Array arctanh(const Array& x) { return atanh(x); }
Array deg2rad(const Array& x);  // x * (pi / 180)
Array rad2deg(const Array& x);  // x * (180 / pi)
inline Array radians(const Array& x) { return deg2rad(x); }
inline Array degrees(const Array& x) { return rad2deg(x); }
// sin(pi x) / (pi x), 1 at 0. JAX defines its derivatives at 0 through a recursive
// custom_jvp (the Maclaurin coefficients); here the branch taken at x == 0 is the degree-8
// Maclaurin polynomial, so derivatives at 0 agree with JAX's up to the 9th order (beyond it
// they are 0).
Array sinc(const Array& x);

// ---- signs and rounding ----
// Toward zero; integers and bool unchanged. jnp.fix (removed from JAX in 0.10) is numpy's
// name for the same.
Array trunc(const Array& x);
inline Array fix(const Array& x) { return trunc(x); }
// Half to even (lax.round TO_NEAREST_EVEN); integers and bool become f32, like jnp.rint.
Array rint(const Array& x);
// NaN-ignoring max / min: the other operand where one is NaN (NaN only if both are).
// Ties (including -0 vs +0) give b, and so b's gradient, as jnp's where(a > b | isnan(b)...).
Array fmax(const Array& a, const Array& b);
Array fmin(const Array& a, const Array& b);
// 0 where x1 < 0, 1 where x1 > 0, x2 where x1 == 0, NaN where x1 is NaN (inexact).
Array heaviside(const Array& x1, const Array& x2);
// power of the operands promoted to inexact. As JAX (x64 off or on), no forced f64: f32
// inputs compute in f32; pass f64 arrays for f64.
Array float_power(const Array& a, const Array& b);
Array positive(const Array& x);  // +x (the identity)
Array fabs(const Array& x);      // |x| of x promoted to inexact

// ---- special values ----
// NaN -> nan, +inf -> posinf, -inf -> neginf (defaults: the dtype's largest and lowest finite
// values). Integer and bool arrays come back unchanged.
Array nan_to_num(const Array& x, double nan = 0.0, std::optional<double> posinf = std::nullopt,
                 std::optional<double> neginf = std::nullopt);
// |a - b| <= atol + rtol * |b| where b is finite, or a == b (so inf == inf); NaNs equal each
// other only with equal_nan. rtol and atol are converted to the promoted (inexact) dtype.
Array isclose(const Array& a, const Array& b, double rtol = 1e-05, double atol = 1e-08,
              bool equal_nan = false);
Array allclose(const Array& a, const Array& b, double rtol = 1e-05, double atol = 1e-08,
               bool equal_nan = false);  // a bool scalar: all(isclose(...))

// ---- division ----
// C's fmod: the remainder with the sign of the dividend (lax.rem); for integers x % 0 is 0
// (jnp divides by 1 there).
Array fmod(const Array& a, const Array& b);
// (floor_divide(a, b), remainder(a, b)); for floats computed as jnp's _float_divmod.
std::pair<Array, Array> divmod(const Array& a, const Array& b);

}  // namespace graft
