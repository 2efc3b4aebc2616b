// lgamma and digamma as XLA computes them (core/lax/special.h). The op order, the
// constants and the rewrites (z / 7.5 as z * (1 / 7.5)) follow the fused HLO that JAX 0.10.2
// compiles on CPU for lax.lgamma / lax.digamma (f32).
#include "core/lax/special.h"

#include <array>
#include <cmath>

#include "core/error.h"
#include "core/lax/lax.h"
#include "core/lax/util.h"
#include "core/dtype/dtype_info.h"
#include "core/primitives/call.h"
#include "core/primitives/control.h"
#include "core/lax/exact_fma.h"

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
  // XLA:CPU contracts the product and the first sum into one FMA.
  Array a = (z + c(0.5)) - t / l.log_t;
  Array log_y =
      graft::detail::fma(a, l.log_t, broadcast_to(c(0.5 * std::log(2 * kPi)), a.shape())) +
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

// JAX's _igamma_series in SAMPLE_DERIVATIVE mode: -(d/da of P(a, x)) / (d/dx of P(a, x))
// from the series of the lower incomplete gamma function, for the enabled elements.
Array igamma_series_sample_derivative(const Array& x, const Array& a, const Array& enabled) {
  DType d = x.dtype();
  const double eps = finfo(d).eps;
  auto c_ = [d](double v) { return scalar(v, d); };
  // carry: enabled, r, c, ans, dc_da, dans_da
  FlatFn cond = [](const std::vector<Array>& v) { return std::vector<Array>{any(v[0])}; };
  FlatFn body = [=](const std::vector<Array>& v) {
    const Array& on = v[0];
    Array r = v[1] + c_(1);
    Array dc_da = v[4] * (x / r) - (v[2] * x) / (r * r);
    Array dans_da = v[5] + dc_da;
    Array c = v[2] * (x / r);
    Array ans = v[3] + c;
    Array more = logical_and(on, abs(dc_da / dans_da) > c_(eps));
    return std::vector<Array>{more, where(on, r, v[1]), where(on, c, v[2]),
                              where(on, ans, v[3]), where(on, dc_da, v[4]),
                              where(on, dans_da, v[5])};
  };
  Array one = full_like(a, 1), zero = full_like(a, 0);
  std::vector<Array> out = graft::detail::bind_while(cond, body, {}, {},
                                                     {enabled, a, one, one, zero, zero});
  Array dlogax_da = log(x) - digamma_of(a + c_(1));
  return -(out[5] + out[3] * dlogax_da) * x / a;
}

// JAX's _igammac_continued_fraction in SAMPLE_DERIVATIVE mode (the upper incomplete gamma
// function's continued fraction and its derivative in a), at most 2000 terms.
Array igammac_cf_sample_derivative(const Array& x, const Array& a, const Array& enabled) {
  DType d = x.dtype();
  const double eps = finfo(d).eps;
  auto c_ = [d](double v) { return scalar(v, d); };
  // carry: enabled, ans, y, z, c (scalar), pkm1, qkm1, pkm2, qkm2, dpkm2, dqkm2, dpkm1,
  //        dqkm1, dans_da
  FlatFn cond = [c_](const std::vector<Array>& v) {
    return std::vector<Array>{logical_and(v[4] < c_(2000), any(v[0]))};
  };
  FlatFn body = [=](const std::vector<Array>& v) {
    const Array& on = v[0];
    Array c = v[4] + c_(1), y = v[2] + c_(1), z = v[3] + c_(2);
    Array yc = y * c;
    const Array &pkm1 = v[5], &qkm1 = v[6], &pkm2 = v[7], &qkm2 = v[8];
    const Array &dpkm2 = v[9], &dqkm2 = v[10], &dpkm1 = v[11], &dqkm1 = v[12];
    Array pk = pkm1 * z - pkm2 * yc;
    Array qk = qkm1 * z - qkm2 * yc;
    Array nonzero = qk != c_(0);
    Array r = pk / qk;
    Array ans = where(nonzero, r, v[1]);
    Array dpk = dpkm1 * z - pkm1 - dpkm2 * yc + pkm2 * c;
    Array dqk = dqkm1 * z - qkm1 - dqkm2 * yc + qkm2 * c;
    Array dans_new = where(nonzero, (dpk - ans * dqk) / qk, v[13]);
    Array grad_cond = where(nonzero, abs(dans_new - v[13]), full_like(v[13], 1));
    Array rescale = abs(pk) > c_(1 / eps);
    auto scaled = [&](const Array& t) { return where(rescale, t * c_(eps), t); };
    Array n_pkm2 = scaled(pkm1), n_pkm1 = scaled(pk), n_qkm2 = scaled(qkm1), n_qkm1 = scaled(qk);
    Array n_dpkm2 = scaled(dpkm1), n_dqkm2 = scaled(dqkm1), n_dpkm1 = scaled(dpk),
          n_dqkm1 = scaled(dqk);
    Array more = logical_and(on, grad_cond > c_(eps));
    return std::vector<Array>{more,
                              where(on, ans, v[1]),
                              where(on, y, v[2]),
                              where(on, z, v[3]),
                              c,
                              where(on, n_pkm1, v[5]),
                              where(on, n_qkm1, v[6]),
                              where(on, n_pkm2, v[7]),
                              where(on, n_qkm2, v[8]),
                              where(on, n_dpkm2, v[9]),
                              where(on, n_dqkm2, v[10]),
                              where(on, n_dpkm1, v[11]),
                              where(on, n_dqkm1, v[12]),
                              where(on, dans_new, v[13])};
  };
  Array y = c_(1) - a;
  Array z = x + y + c_(1);
  Array pkm1 = x + c_(1), qkm1 = z * x;
  Array ans = pkm1 / qkm1;
  Array zero = full_like(x, 0);
  Array dqkm1 = -x;
  Array dans_da = (zero - ans * dqkm1) / qkm1;
  std::vector<Array> out = graft::detail::bind_while(
      cond, body, {}, {},
      {enabled, ans, y, z, c_(0), pkm1, qkm1, full_like(x, 1), x, zero, zero, zero, dqkm1,
       dans_da});
  Array dlogax_da = log(x) - digamma_of(a);
  return -(out[13] + out[1] * dlogax_da) * x;
}

Array in_dtype_of(const Array& r, const Array& x) {
  return r.dtype() == x.dtype() ? r : astype(r, x.dtype());
}

Array promoted(const char* op, const Array& x) {
  detail::check_valid(op, x);
  detail::refuse_complex(op, x);
  return is_floating(x.dtype()) ? x : astype(x, detail::float_dtype_for(x));
}

}  // namespace

// lgamma's tangent is digamma's, as JAX's jvp rule (not the Lanczos formula's derivative).
Array lgamma(const Array& x) {
  FlatFn fn = [](const std::vector<Array>& xs) { return std::vector<Array>{lgamma_of(xs[0])}; };
  detail::JvpRuleFn rule = [](const std::vector<Array>& ps, const std::vector<Array>& ts) {
    return std::pair{std::vector<Array>{lgamma_of(ps[0])},
                     std::vector<Array>{ts[0] * digamma_of(ps[0])}};
  };
  Array w = working("lgamma", x);
  return in_dtype_of(detail::bind_custom_jvp("lgamma", fn, rule, {w})[0], x);
}

Array digamma(const Array& x) { return in_dtype_of(digamma_of(working("digamma", x)), x); }

Array random_gamma_grad(const Array& a, const Array& x) {
  detail::check_valid("random_gamma_grad", a);
  detail::check_valid("random_gamma_grad", x);
  if (!is_floating(a.dtype()) || a.dtype() != x.dtype()) {
    fail("random_gamma_grad", "a and x must be floating arrays of one dtype, got ",
         a.aval().str(), " and ", x.aval().str());
  }
  Shape s = broadcast_shapes("random_gamma_grad", a.shape(), x.shape());
  Array aa = broadcast_to(a, s), xx = broadcast_to(x, s);
  DType d = aa.dtype();
  auto c_ = [d](double v) { return scalar(v, d); };
  Array is_nan = logical_or(isnan(aa), isnan(xx));
  Array x_is_zero = xx == c_(0);
  Array domain_error = logical_or(xx < c_(0), aa <= c_(0));
  Array use_igammac = logical_and(xx > c_(1), xx > aa);
  Array log_ax = aa * log(xx) - xx - lgamma_of(aa);
  Array underflow = log_ax < c_(-std::log(finfo(d).max));
  Array enabled = logical_not(
      logical_or(logical_or(x_is_zero, domain_error), logical_or(underflow, is_nan)));
  Array out = where(use_igammac,
                    -igammac_cf_sample_derivative(xx, aa, logical_and(enabled, use_igammac)),
                    igamma_series_sample_derivative(
                        xx, aa, logical_and(enabled, logical_not(use_igammac))));
  out = where(x_is_zero, c_(0), out);
  return where(logical_or(domain_error, is_nan), c_(NAN), out);
}

namespace scipy::special {

Array gammaln(const Array& x) { return graft::lgamma(promoted("gammaln", x)); }

Array digamma(const Array& x) { return graft::digamma(promoted("digamma", x)); }

}  // namespace scipy::special

}  // namespace graft
