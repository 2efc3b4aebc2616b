// Complex arithmetic over the parts (core/lax/complex.h's detail helpers): what the
// elementwise ops and the complex functions compute on complex operands.
#include "core/lax/complex.h"
#include "core/lax/lax.h"

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
Array complex_divide(const Array& a, const Array& b) {
  Array ar = real(a), ai = imag(a), br = real(b), bi = imag(b);
  Array den = br * br + bi * bi;
  return complex((ar * br + ai * bi) / den, (ai * br - ar * bi) / den);
}
Array complex_neg(const Array& z) { return complex(-real(z), -imag(z)); }
Array complex_abs(const Array& z) { return hypot(real(z), imag(z)); }
Array complex_exp(const Array& z) {
  Array m = exp(real(z)), t = imag(z);
  return complex(m * cos(t), m * sin(t));
}

}  // namespace detail

}  // namespace graft
