// The real functions lax-level code needs beyond the primitives: exp2, logaddexp(2), hypot,
// atan2, copysign, signbit and isposinf / isneginf, written as JAX 0.10.2 writes them
// (jax/_src/numpy/ufuncs.py, jax/_src/lax/other.py) over graft's ops. The complex functions
// (core/lax/complex_math.cc) and cumlogsumexp use them; jax.numpy's names for them are these
// (core/ops.h includes this header through core/lax/lax.h).
//
// Promotion is jnp's promote_args_inexact: integer and bool operands become the default float
// (f32; weak if the operand is weak); binary ones promote and broadcast both operands first.
// Where JAX binds a lax primitive graft does not have (atan2, exp2) the value is a composite
// and the derivative JAX's rule, attached with a custom_jvp.
#pragma once

#include "core/array.h"

namespace graft {

// ---- exponentials ----
// 2^x. JAX binds the lax.exp2 primitive; here power(2, x) (exact at integers; within f32
// rounding of XLA's exp2 elsewhere). Derivative ln 2 * 2^x, as JAX's.
Array exp2(const Array& x);
// log(exp(a) + exp(b)) without overflow, and its base-2 twin. As in jax._src.lax.other, a
// custom_jvp: the tangent is ta * exp(a - out) + tb * exp(b - out) with +inf replaced by 0,
// so equal inputs get 1/2 each and -inf, -inf gives NaN gradients (as in JAX).
Array logaddexp(const Array& a, const Array& b);
Array logaddexp2(const Array& a, const Array& b);

// ---- geometry ----
// sqrt(a^2 + b^2) without overflow (jnp.hypot's formula); inf if either is +-inf, even NaN.
Array hypot(const Array& a, const Array& b);
// The angle of the point (x, y) in [-pi, pi], quadrant-correct, with C / XLA's atan2 values
// for signed zeros and infinities (atan2(+-0, -0) = +-pi, atan2(+-inf, -inf) = +-3pi/4...).
// Composed from atan(|y| / |x|) and reflections, so values may differ from XLA's atan2 by an
// ulp or two. Derivative as JAX's atan2 jvp (custom_jvp): dy * x / (x^2 + y^2) and
// dx * -y / (x^2 + y^2) (NaN at the origin, as in JAX).
Array arctan2(const Array& y, const Array& x);
inline Array atan2(const Array& y, const Array& x) { return arctan2(y, x); }

// ---- signs and special values ----
// |a| with the sign bit of b (inexact), as jnp: where(signbit(b), -|a|, |a|).
Array copysign(const Array& a, const Array& b);
// The sign bit (bool): of the float bits (so -0 and -NaN are true); x < 0 for integers; false
// for bool.
Array signbit(const Array& x);
// bool; false for integer and bool inputs.
Array isposinf(const Array& x);  // bool; false for integer and bool inputs
Array isneginf(const Array& x);

}  // namespace graft
