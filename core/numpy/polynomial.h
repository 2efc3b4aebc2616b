// jax.numpy polynomials and integration: polyval / polyadd / polysub / polymul /
// polyder / polyint / polydiv / polyfit over 1-D coefficient arrays (highest power first),
// trapezoid and interp.
// Written after JAX 0.10.2's polynomial.py and lax_numpy.py over core/ops.h ops, so grad /
// vmap / jit work through them. Included at the end of core/ops.h.
#pragma once

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "core/lax/lax.h"

namespace graft {

// p[0] * x^(n-1) + ... + p[n-1] by Horner's rule (dtypes promoted, not made inexact).
Array polyval(const Array& p, const Array& x);
// The shorter one added to (subtracted from) the low-order end of the longer.
Array polyadd(const Array& a1, const Array& a2);
Array polysub(const Array& a1, const Array& a2);
// The product's coefficients (the full convolution), inexact.
Array polymul(const Array& a1, const Array& a2);
// The m-th derivative / integral (integration constants k, lowest order last), inexact.
Array polyder(const Array& p, int64_t m = 1);
Array polyint(const Array& p, int64_t m = 1, const std::vector<double>& k = {0.0});

// The trapezoidal rule along axis, with sample points x (1-D, or y's shape) or spacing dx.
Array trapezoid(const Array& y, const std::optional<Array>& x = std::nullopt, double dx = 1.0,
                int64_t axis = -1);
// Piecewise-linear interpolation of (xp, fp) at x (xp increasing); left / right: the values
// below xp[0] / above xp[-1] (default fp[0] / fp[-1]).
Array interp(const Array& x, const Array& xp, const Array& fp,
             std::optional<double> left = std::nullopt,
             std::optional<double> right = std::nullopt);

// jnp.polydiv(u, v): (quotient, remainder) by long division (inexact; the remainder keeps
// u's length). trim_leading_zeros drops leading |r| < sqrt(eps) (eager only: data-dependent
// shape).
std::pair<Array, Array> polydiv(const Array& u, const Array& v, bool trim_leading_zeros = false);

// jnp.polyfit(x [n], y [n] or [n, k], deg, rcond, w): least-squares coefficients [deg+1]
// (or [deg+1, k]), highest power first, through jnp.linalg.lstsq on the column-scaled
// Vandermonde matrix. rcond defaults to n * eps.
Array polyfit(const Array& x, const Array& y, int64_t deg,
              std::optional<double> rcond = std::nullopt,
              const std::optional<Array>& w = std::nullopt);
// polyfit(..., full=True): the coefficients, the squared residuals, the rank, the singular
// values of the scaled Vandermonde matrix and rcond.
struct PolyfitFull {
  Array coef, residuals, rank, singular_values, rcond;
};
PolyfitFull polyfit_full(const Array& x, const Array& y, int64_t deg,
                         std::optional<double> rcond = std::nullopt,
                         const std::optional<Array>& w = std::nullopt);

}  // namespace graft
