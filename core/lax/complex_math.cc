// The complex cases of jax.numpy's elementwise functions: each written over the real and
// imaginary parts with real primitives, so grad (JAX's convention for complex cotangents),
// vmap and jit come from the parts' rules. Formulas are the textbook ones, arranged to avoid
// cancellation where the parts' signs allow (log1p, expm1, asinh by symmetry); branch cuts are
// the principal ones, as XLA's. On a cut, log's imaginary part follows the zero's sign (C99,
// numpy and XLA agree); sqrt's does not (XLA's, not C99's: sqrt(-1 - 0j) = +1j).
#include <cstdint>
#include <memory>
#include <numbers>

#include "core/error.h"
#include "core/lax/lax.h"
#include "core/lax/util.h"
#include "core/primitives/elementwise.h"

namespace graft::detail {
namespace {

using P = PrimitiveId;

// i z, and -i z: a quarter turn of the parts.
Array times_i(const Array& z) { return complex(-imag(z), real(z)); }
Array times_minus_i(const Array& z) { return complex(imag(z), -real(z)); }

Array complex_log(const Array& z) {
  Array x = real(z), y = imag(z);
  return complex(log(hypot(x, y)), arctan2(y, x));
}

// log(1 + z): |1 + z|^2 = 1 + (x (2 + x) + y^2), so the real part keeps its digits for small z.
Array complex_log1p(const Array& z) {
  Array x = real(z), y = imag(z);
  return complex(0.5 * log1p(x * (2.0 + x) + y * y), arctan2(y, 1.0 + x));
}

// exp(z) - 1: the real part is expm1(x) cos(y) + (cos(y) - 1), with cos(y) - 1 = -2 sin^2(y/2).
Array complex_expm1(const Array& z) {
  Array x = real(z), y = imag(z);
  return complex(expm1(x) * cos(y) - 2.0 * square(sin(0.5 * y)), exp(x) * sin(y));
}

// The principal root: t = sqrt((|z| + |x|) / 2) is the part of larger magnitude; the other is
// |y| / (2 t). The imaginary part is negative only where y < 0: a signed zero does not pick
// the side of the cut, as in XLA (sqrt(-1 - 0j) = +1j, where C99's csqrt gives -1j). 0 at 0,
// with finite untaken branches.
Array complex_sqrt(const Array& z) {
  Array x = real(z), y = imag(z);
  Array t = sqrt(0.5 * (hypot(x, y) + abs(x)));
  Array zero = equal(t, 0.0);
  Array other = abs(y) / (2.0 * where(zero, ones_like(t), t));
  other = where(zero, zeros_like(t), other);
  Array nonneg = greater_equal(x, 0.0);
  Array im = where(nonneg, other, t);
  return complex(where(nonneg, t, other), where(less(y, 0.0), -im, im));
}

Array complex_sin(const Array& z) {
  Array x = real(z), y = imag(z);
  return complex(sin(x) * cosh(y), cos(x) * sinh(y));
}
Array complex_cos(const Array& z) {
  Array x = real(z), y = imag(z);
  return complex(cos(x) * cosh(y), -(sin(x) * sinh(y)));
}
Array complex_sinh(const Array& z) {
  Array x = real(z), y = imag(z);
  return complex(sinh(x) * cos(y), cosh(x) * sin(y));
}
Array complex_cosh(const Array& z) {
  Array x = real(z), y = imag(z);
  return complex(cosh(x) * cos(y), sinh(x) * sin(y));
}

// tanh(x + iy) = (sinh 2x + i sin 2y) / (cosh 2x + cos 2y); past |x| = 20 it is sign(x) to
// every digit of f64, and the formula would divide inf by inf.
Array complex_tanh(const Array& z) {
  Array x = real(z), y = imag(z);
  Array big = greater(abs(x), 20.0);
  Array xs = where(big, zeros_like(x), x);
  Array d = cosh(2.0 * xs) + cos(2.0 * y);
  return complex(where(big, sign(x), sinh(2.0 * xs) / d),
                 where(big, zeros_like(y), sin(2.0 * y) / d));
}

// asinh(z) = log(z + sqrt(z^2 + 1)), taken on the right half plane (asinh is odd) where the
// sum does not cancel.
Array complex_asinh(const Array& z) {
  Array flip = less(real(z), 0.0);
  Array w = where(flip, -z, z);
  Array wx = real(w), wy = imag(w);
  Array w2p1 = complex(wx * wx - wy * wy + 1.0, 2.0 * wx * wy);
  Array r = complex_log(w + complex_sqrt(w2p1));
  return where(flip, -r, r);
}
// atanh(z) = (log1p(z) - log1p(-z)) / 2.
Array complex_atanh(const Array& z) { return 0.5 * (complex_log1p(z) - complex_log1p(-z)); }
// acosh(z) = log(z + sqrt(z + 1) sqrt(z - 1)) (Kahan's form: the cut on (-inf, 1]).
Array complex_acosh(const Array& z) {
  return complex_log(z + complex_sqrt(z + 1.0) * complex_sqrt(z - 1.0));
}

Array complex_sign(const Array& z) {
  Array m = abs(z);
  Array zero = equal(m, 0.0);
  Array q = z / where(zero, ones_like(m), m);
  return where(zero, zeros_like(z), q);
}

// a ** n for a concrete integer n: repeated squaring, as lax.integer_pow.
Array integer_power(const Array& a, int64_t n) {
  Array result = ones_like(a), base = a;
  for (uint64_t k = n < 0 ? -static_cast<uint64_t>(n) : n; k > 0; k >>= 1) {
    if (k & 1) result = result * base;
    if (k > 1) base = base * base;
  }
  return n < 0 ? 1.0 / result : result;
}

}  // namespace

Array complex_unary(const char* op, PrimitiveId id, const Array& z) {
  switch (id) {
    case P::kNeg:
      return complex_neg(z);
    case P::kAbs:
      return complex_abs(z);
    case P::kSign:  // piecewise constant to JAX: a zero derivative
      return bind1(std::make_shared<const StopGradient>(), {complex_sign(z)});
    case P::kSquare:
      return complex_multiply(z, z);
    case P::kExp:
      return complex_exp(z);
    case P::kExpm1:
      return complex_expm1(z);
    case P::kLog:
      return complex_log(z);
    case P::kLog1p:
      return complex_log1p(z);
    case P::kSqrt:
      return complex_sqrt(z);
    case P::kRsqrt:
      return 1.0 / complex_sqrt(z);
    case P::kSin:
      return complex_sin(z);
    case P::kCos:
      return complex_cos(z);
    case P::kTan:  // tan(z) = -i tanh(i z)
      return times_minus_i(complex_tanh(times_i(z)));
    case P::kSinh:
      return complex_sinh(z);
    case P::kCosh:
      return complex_cosh(z);
    case P::kTanh:
      return complex_tanh(z);
    case P::kAsin:  // asin(z) = -i asinh(i z)
      return times_minus_i(complex_asinh(times_i(z)));
    case P::kAcos: {  // pi/2 - asin(z)
      Array s = times_minus_i(complex_asinh(times_i(z)));
      return complex(std::numbers::pi / 2 - real(s), -imag(s));
    }
    case P::kAtan:  // atan(z) = -i atanh(i z)
      return times_minus_i(complex_atanh(times_i(z)));
    case P::kAsinh:
      return complex_asinh(z);
    case P::kAcosh:
      return complex_acosh(z);
    case P::kAtanh:
      return complex_atanh(z);
    case P::kLogistic:
      return 1.0 / (1.0 + complex_exp(complex_neg(z)));
    default:
      refuse_complex(op, z);
      return z;  // not reached
  }
}

// a ** b with a complex operand. A concrete integer scalar exponent multiplies (as
// jnp.power's integer_pow); otherwise exp(b log a), with 0 ** b = 0 (b != 0) and x ** 0 = 1.
Array complex_power(const Array& a, const Array& b) {
  std::vector<Array> xs = promote_and_broadcast("power", {a, b});
  const Array &x = xs[0], &y = xs[1];
  if (is_integral(b.dtype()) && b.ndim() == 0 && !b.is_tracer()) {
    return integer_power(x, b.item<int64_t>());
  }
  Array base_zero = equal(x, 0.0), exp_zero = equal(y, 0.0);
  Array safe = where(base_zero, ones_like(x), x);
  Array r = complex_exp(complex_multiply(y, complex_log(safe)));
  r = where(base_zero, zeros_like(r), r);
  return where(exp_zero, ones_like(r), r);
}

// Comparisons and max / min of complex values order them lexicographically (real part, then
// imaginary part), as jnp does; equality is of both parts.
Array complex_compare(PrimitiveId id, const Array& a, const Array& b) {
  Array ax = real(a), ay = imag(a), bx = real(b), by = imag(b);
  switch (id) {
    case P::kEq:
      return logical_and(equal(ax, bx), equal(ay, by));
    case P::kNe:
      return logical_or(not_equal(ax, bx), not_equal(ay, by));
    case P::kLt:
      return where(equal(ax, bx), less(ay, by), less(ax, bx));
    case P::kLe:
      return where(equal(ax, bx), less_equal(ay, by), less(ax, bx));
    case P::kGt:
      return where(equal(ax, bx), greater(ay, by), greater(ax, bx));
    case P::kGe:
      return where(equal(ax, bx), greater_equal(ay, by), greater(ax, bx));
    case P::kMax:
      return where(complex_compare(P::kLt, a, b), b, a);
    case P::kMin:
      return where(complex_compare(P::kLt, b, a), b, a);
    default:
      refuse_complex(kPrimitiveNames[static_cast<int>(id)], a);
      return a;  // not reached
  }
}

}  // namespace graft::detail
