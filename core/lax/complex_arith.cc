// Complex arithmetic over the parts (core/lax/complex.h's detail helpers): what the
// elementwise ops and the complex functions compute on complex operands.
#include <cmath>

#include "core/lax/complex.h"
#include "core/lax/lax.h"
#include "core/lax/math.h"

namespace graft {

namespace detail {

Array complex_add(const Array& a, const Array& b) {
  return complex(real(a) + real(b), imag(a) + imag(b));
}
Array complex_subtract(const Array& a, const Array& b) {
  return complex(real(a) - real(b), imag(a) - imag(b));
}
Array complex_multiply(const Array& a, const Array& b) {
  Array ar = real(a), ai = imag(a), br = real(b), bi = imag(b);
  return complex(ar * br - ai * bi, ar * bi + ai * br);
}
// Smith's division, as XLA's: scaled by b's part of larger magnitude p (q the other, t = q / p,
// |t| <= 1), so that |b|^2 is never formed and neither overflows nor underflows:
//   |br| >= |bi|:  ((ar + ai t) + (ai - ar t) i) / (br + bi t)
//   |br| <  |bi|:  ((ai + ar t) - (ar - ai t) i) / (bi + br t)
// (u, v) is (ar, ai) or (ai, ar) to write both as one. Where that gives NaN in both parts,
// XLA's corner cases: a / 0 is copysign(inf, br) * a (a not all NaN); an infinite a over a
// finite b is inf with the signs of the parts; a finite a over an infinite b is 0 with signs.
// Each corner's factor is 0 outside its own elements, so that their infinities reach no other
// element's gradient.
Array complex_divide(const Array& a, const Array& b) {
  const Array ar = real(a), ai = imag(a), br = real(b), bi = imag(b);
  const Array swap = less(abs(br), abs(bi));
  const Array p = where(swap, bi, br), q = where(swap, br, bi);
  const Array u = where(swap, ai, ar), v = where(swap, ar, ai);
  const Array t = q / p, d = p + q * t;
  const Array re = (u + v * t) / d;
  const Array im = where(swap, -((v - u * t) / d), (v - u * t) / d);

  const Array zero = zeros_like(ar), one = ones_like(ar), inf = full_like(ar, INFINITY);
  const Array both_nan = logical_and(isnan(re), isnan(im));
  const Array a_finite = logical_and(isfinite(ar), isfinite(ai));
  const Array b_finite = logical_and(isfinite(br), isfinite(bi));
  const Array a_inf = logical_or(isinf(ar), isinf(ai)), b_inf = logical_or(isinf(br), isinf(bi));
  const Array zero_den =
      logical_and(logical_and(equal(br, zero), equal(bi, zero)),
                  logical_not(logical_and(isnan(ar), isnan(ai))));
  const Array inf_num = logical_and(a_inf, b_finite), inf_den = logical_and(b_inf, a_finite);
  const auto unit = [&](const Array& x) { return copysign(where(isinf(x), one, zero), x); };
  const Array k1 = where(zero_den, copysign(inf, br), zero);
  const Array k2 = where(inf_num, inf, zero);
  const Array sar = unit(ar), sai = unit(ai), sbr = unit(br), sbi = unit(bi);
  const Array corner_re = where(
      zero_den, k1 * ar,
      where(inf_num, k2 * (sar * br + sai * bi), zero * (ar * sbr + ai * sbi)));
  const Array corner_im = where(
      zero_den, k1 * ai,
      where(inf_num, k2 * (sai * br - sar * bi), zero * (ai * sbr - ar * sbi)));
  const Array corner = logical_and(both_nan, logical_or(zero_den, logical_or(inf_num, inf_den)));
  return complex(where(corner, corner_re, re), where(corner, corner_im, im));
}
Array complex_neg(const Array& z) { return complex(-real(z), -imag(z)); }
Array complex_abs(const Array& z) { return hypot(real(z), imag(z)); }
Array complex_exp(const Array& z) {
  Array m = exp(real(z)), t = imag(z);
  return complex(m * cos(t), m * sin(t));
}

}  // namespace detail

}  // namespace graft
