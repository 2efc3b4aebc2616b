// lgamma and digamma as XLA computes them (core/ops_lax_special.h). The op order, the
// constants and the rewrites (z / 7.5 as z * (1 / 7.5)) follow the fused HLO that JAX 0.10.2
// compiles on CPU for lax.lgamma / lax.digamma (f32).
#include "core/ops_lax_special.h"

#include <array>
#include <cmath>

#include "core/error.h"
#include "core/ops.h"
#include "core/ops_util.h"
#include "core/primitives/elementwise.h"  // StopGradient
#include "core/random.h"  // random::detail::fma

namespace graft {

namespace {

constexpr double kPi = 3.14159265358979323846;
constexpr double kLanczosGamma = 7;  // the g of the coefficients below
constexpr double kBaseLanczosCoeff = 0.99999999999980993227684700473478;
constexpr std::array<double, 8> kLanczosCoefficients = {
    676.520368121885098567009190444019, -1259.13921672240287047156078755283,
    771.3234287776530788486528258894,   -176.61502916214059906584551354,
    12.507343278686904814458936853,     -0.13857109526572011689554707,
    9.984369578019570859563e-6,         1.50563273514931155834e-7};

// x checked and in the dtype the formula runs in: f16 / bf16 go through f32.
Array working(const char* op, const Array& x) {
  detail::check_valid(op, x);
  if (!is_floating(x.dtype())) fail(op, "x must be floating, got ", dtype_name(x.dtype()));
  if (x.dtype() == DType::kF16 || x.dtype() == DType::kBF16) return astype(x, DType::kF32);
  return x;
}

// The shared start of both: reflect below 0.5 (z = -x) or shift (z = x - 1), and
// log(t) = log(g + 1/2 + z) as log(g + 1/2) + log1p(z / (g + 1/2)).
struct Lanczos {
  Array reflect, z, log_t;
};

Lanczos lanczos_start(const Array& x) {
  DType d = x.dtype();
  auto c = [d](double v) { return scalar(v, d); };
  Lanczos l;
  l.reflect = x < c(0.5);
  l.z = where(l.reflect, -x, x + c(-1));
  l.log_t = log1p(l.z * c(1 / (kLanczosGamma + 0.5))) + c(std::log(kLanczosGamma + 0.5));
  return l;
}

// x where the reflection is used, and 1/4 elsewhere: the reflection's sin(pi x) is 0 at the
// integers, and a pole in the branch that where() drops would still make its gradient NaN.
Array reflection_input(const Array& reflect, const Array& x) {
  return where(reflect, x, scalar(0.25, x.dtype()));
}

// a * b + c with the value of one FMA, as XLA:CPU contracts it, and the derivative of the
// plain expression (random::detail::fma rounds through bit operations, which have none):
// plain + (fma - plain) is the FMA's value exactly, the two being within an ulp.
Array contracted_mul_add(const Array& a, const Array& b, const Array& c) {
  Array plain = a * b + c;
  Array fused = random::detail::fma(a, b, broadcast_to(c, plain.shape()));
  return plain + bind1(std::make_shared<const StopGradient>(), {fused - plain});
}

// lgamma in f32 / f64 (XLA's Lgamma).
Array lgamma_of(const Array& x) {
  DType d = x.dtype();
  auto c = [d](double v) { return scalar(v, d); };
  Lanczos l = lanczos_start(x);
  const Array& z = l.z;
  Array sum = c(kLanczosCoefficients[0]) / (z + c(1)) + c(kBaseLanczosCoeff);
  for (size_t i = 1; i < kLanczosCoefficients.size(); ++i) {
    sum = sum + c(kLanczosCoefficients[i]) / (z + c(static_cast<double>(i + 1)));
  }
  // (z + 1/2) log t - t, computed as (z + 1/2 - t / log t) log t so t log t cannot overflow.
  Array t = z + c(kLanczosGamma + 0.5);
  Array log_y = contracted_mul_add((z + c(0.5)) - t / l.log_t, l.log_t,
                                   c(0.5 * std::log(2 * kPi))) +
                log(sum);
  // Reflection: log(pi) - log|sin(pi x)| - lgamma(1 - x), with sin(pi x) taken at the
  // fractional part of |x| folded into [0, 1/2] (exact 0 at the integers, no overflow).
  Array ax = abs(reflection_input(l.reflect, x));
  Array frac = ax - floor(ax);
  Array reduced = where(c(0.5) < frac, c(1) - frac, frac);
  Array log_sin = log(sin(reduced * c(kPi)));
  Array reflection = where(isfinite(log_sin), (c(std::log(kPi)) - log_sin) - log_y, -log_sin);
  Array result = where(l.reflect, reflection, log_y);
  return where(abs(x) == c(INFINITY), c(INFINITY), result);
}

// digamma in f32 / f64 (XLA's Digamma).
Array digamma_of(const Array& x) {
  DType d = x.dtype();
  auto c = [d](double v) { return scalar(v, d); };
  Lanczos l = lanczos_start(x);
  const Array& z = l.z;
  Array num = c(0), denom;
  for (size_t i = 0; i < kLanczosCoefficients.size(); ++i) {
    Array zi = z + c(static_cast<double>(i + 1));
    num = num - c(kLanczosCoefficients[i]) / (zi * zi);
  }
  for (size_t i = 0; i < kLanczosCoefficients.size(); ++i) {
    Array term = c(kLanczosCoefficients[i]) / (z + c(static_cast<double>(i + 1)));
    denom = i == 0 ? term + c(kBaseLanczosCoeff) : denom + term;
  }
  Array y = (l.log_t + num / denom) - c(kLanczosGamma) / (z + c(kLanczosGamma + 0.5));
  // Reflection: digamma(1 - x) - pi cot(pi x), with x moved into [-1/2, 1/2] first.
  Array xr = reflection_input(l.reflect, x);
  Array reduced = xr + abs(floor(xr + c(0.5)));
  Array angle = reduced * c(kPi);
  Array reflection = y - (cos(angle) * c(kPi)) / sin(angle);
  Array result = where(l.reflect, reflection, y);
  Array pole = logical_and(x <= c(0), x == floor(x));
  return where(pole, c(NAN), result);
}

Array in_dtype_of(const Array& r, const Array& x) {
  return r.dtype() == x.dtype() ? r : astype(r, x.dtype());
}

Array promoted(const char* op, const Array& x) {
  detail::check_valid(op, x);
  return is_floating(x.dtype()) ? x : astype(x, detail::float_dtype_for(x));
}

}  // namespace

Array lgamma(const Array& x) { return in_dtype_of(lgamma_of(working("lgamma", x)), x); }

Array digamma(const Array& x) { return in_dtype_of(digamma_of(working("digamma", x)), x); }

namespace scipy::special {

Array gammaln(const Array& x) { return graft::lgamma(promoted("gammaln", x)); }

Array digamma(const Array& x) { return graft::digamma(promoted("digamma", x)); }

}  // namespace scipy::special

}  // namespace graft
