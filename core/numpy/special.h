// jax.numpy float decomposition and special functions: frexp / ldexp / modf /
// nextafter, i0 / kaiser, unwrap, gradient. Written after JAX 0.10.2 (ufuncs.py,
// lax_numpy.py, window_functions.py) over graft's ops, no new primitive, so grad / vmap / jit
// work through them. Included at the end of core/ops.h; definitions in
// core/numpy/special.cc.
//
// Subnormal inputs: graft computes with them as IEEE numbers; XLA's CPU backend (so JAX on
// CPU) flushes them to zero first, so results on subnormal inputs can differ from JAX's there.
#pragma once

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "core/array.h"

namespace graft {

// (mantissa, exponent) with x = mantissa * 2^exponent, |mantissa| in [0.5, 1), exponent i32;
// 0, inf and NaN give (x, 0). Integers become f32 first. d mantissa / dx = 2^-exponent, as JAX.
std::pair<Array, Array> frexp(const Array& x);
// x1 * 2^x2 for integer x2 (x1 made inexact), through frexp so that large |x2| neither
// overflows nor underflows early; x1 where x1 is 0 or +-inf. Differentiable in x1.
Array ldexp(const Array& x1, const Array& x2);
// (fractional part, integral part), both with x's sign (x made inexact).
std::pair<Array, Array> modf(const Array& x);
// The next representable value after x toward y (promoted to a common inexact dtype); y where
// x == y, NaN if either is NaN, and from 0 the smallest subnormal with y's sign.
Array nextafter(const Array& x, const Array& y);

// The modified Bessel function of the first kind, order 0 (inexact), as JAX's exp(|x|) *
// i0e(|x|); i0e is a Chebyshev fit here (JAX: XLA's Cephes-based bessel_i0e), so values agree
// to a few ulps. Differentiable (d/dx = I1(x), 0 at 0).
Array i0(const Array& x);
// The Kaiser window of M points (f32): i0(beta sqrt(1 - ((n - a) / a)^2)) / i0(beta),
// a = (M - 1) / 2; M <= 1 gives ones(M).
Array kaiser(int64_t M, double beta);
// Unwraps the phase along axis: jumps larger than discont (default period / 2) become their
// complement modulo period. p and period are promoted together: an integer p with an integer
// period (Array(10)) stays integer, as in jnp.
Array unwrap(const Array& p, std::optional<double> discont = std::nullopt, int64_t axis = -1,
             const Array& period = Array(6.283185307179586));
// The numerical gradient of f (central differences inside, one-sided at the edges; JAX's
// edge_order 1) along each of `axes` (default all), one array per axis. spacing: none (1), one
// for every axis, or one per axis; each a scalar step or a 1-D array of coordinates with the
// axis' length. Each axis needs at least 2 elements. Inexact; differentiable in f and spacing.
std::vector<Array> gradient(const Array& f, const std::vector<Array>& spacing = {},
                            std::optional<std::vector<int64_t>> axes = std::nullopt);

}  // namespace graft
