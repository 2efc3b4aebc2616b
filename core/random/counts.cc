// Counting samplers of jax.random: poisson (Knuth below lam = 10, Hormann's transformed
// rejection above), binomial (inversion for n * min(p, 1 - p) <= 10, BTRS above) and
// multinomial (a binomial per category), as JAX 0.10.2 computes them (jax/_src/random/core.py
// _poisson*, _binomial*, _btrs, multinomial). Their loops run one key for all elements: a
// while_loop primitive whose body splits the carried key and draws a whole array, and that
// continues while any element wants another round. As in JAX, an element that already
// accepted keeps taking later accepted draws (k_out = select(accept, k, k_out)), which
// graft copies so that the values equal JAX's. JAX's iteration caps (max_iters = the dtype's
// largest value) are never reached and are left out.
#include <cmath>

#include "core/error.h"
#include "core/ops.h"
#include "core/lax/special.h"
#include "core/primitives/control.h"
#include "core/random/random.h"
#include "core/random/internal.h"

namespace graft::random {

using namespace internal;  // NOLINT: the family's own helpers

namespace {

Array key_row(const Array& keys, int64_t i) { return key_at(keys, i); }

// The carry of a sampler loop: the key first, then the sampler's arrays.
using Carry = std::vector<Array>;

// JAX's _poisson_knuth: count uniforms until their product falls below exp(-lam).
Array poisson_knuth(const Array& key, const Array& lam, DType dtype) {
  Shape s = lam.shape();
  Array neg_lam = -lam;
  FlatFn cond = [neg_lam](const Carry& c) { return Carry{any(c[2] > neg_lam)}; };
  FlatFn body = [neg_lam, s](const Carry& c) {
    Array keys = random::split(c[0], 2);  // (rng, subkey)
    Array k = where(c[2] > neg_lam, c[1] + scalar(1, c[1].dtype()), c[1]);
    Array u = random::uniform(key_row(keys, 1), s, DType::kF32);
    return Carry{key_row(keys, 0), k, c[2] + log(u)};
  };
  Carry out = graft::detail::bind_while(cond, body, {}, {},
                                        {key, zeros(s, dtype), zeros(s, DType::kF32)});
  return out[1] - scalar(1, dtype);
}

// JAX's _poisson_rejection (Hormann's PTRS) for lam (f32) >= 10.
Array poisson_rejection(const Array& key, const Array& lam, DType dtype) {
  Shape s = lam.shape();
  DType d = lam.dtype();
  auto c_ = [d](double v) { return scalar(v, d); };
  Array log_lam = log(lam);
  Array b = c_(0.931) + c_(2.53) * sqrt(lam);
  Array a = c_(-0.059) + c_(0.02483) * b;
  Array inv_alpha = c_(1.1239) + c_(1.1328) / (b - c_(3.4));
  Array v_r = c_(0.9277) - c_(3.6224) / (b - c_(2));
  FlatFn cond = [](const Carry& c) { return Carry{any(logical_not(c[2]))}; };
  FlatFn body = [=](const Carry& c) {
    Array keys = random::split(c[0], 3);  // (key, subkey_0, subkey_1)
    Array u = random::uniform(key_row(keys, 1), s, d) - c_(0.5);
    Array v = random::uniform(key_row(keys, 2), s, d);
    Array us = c_(0.5) - abs(u);
    Array k = floor((c_(2) * a / us + b) * u + lam + c_(0.43));
    Array sl = log(v * inv_alpha / (a / (us * us) + b));
    Array t = -lam + k * log_lam - lgamma(k + c_(1));
    Array accept1 = logical_and(us >= c_(0.07), v <= v_r);
    Array reject = logical_or(k < c_(0), logical_and(us < c_(0.013), v > us));
    Array accept = logical_or(accept1, logical_and(logical_not(reject), sl <= t));
    return Carry{key_row(keys, 0), where(accept, k, c[1]), logical_or(c[2], accept)};
  };
  Carry out = graft::detail::bind_while(cond, body, {}, {},
                                        {key, full(s, -1, d), zeros(s, DType::kBool)});
  return astype(out[1], dtype);
}

// JAX's _stirling_approx_tail: the tail of Stirling's series, tabulated for k <= 9. (JAX
// clamps k to [0, 9] before the series too, so above 9 it gives the value at 9.)
Array stirling_tail(const Array& k) {
  DType d = k.dtype();
  auto c_ = [d](double v) { return scalar(v, d); };
  Array table = astype(array<double>({0.0810614667953272, 0.0413406959554092,
                                      0.0276779256849983, 0.02079067210376509,
                                      0.0166446911898211, 0.0138761288230707,
                                      0.0118967099458917, 0.0104112652619720,
                                      0.00925546218271273, 0.00833056343336287}),
                       d);
  Array use_table = k <= c_(9);
  Array kc = clip(k, c_(0), c_(9));
  Array kp1 = kc + c_(1);
  Array kp1sq = kp1 * kp1;
  Array approx = (c_(1.0 / 12) - (c_(1.0 / 360) - c_(1.0 / 1260) / kp1sq) / kp1sq) / kp1;
  Array idx = reshape(astype(floor(kc), DType::kI32), {numel(k.shape())});
  Array tabulated = reshape(take(table, idx), k.shape());
  return where(use_table, tabulated, approx);
}

// JAX's _binomial_inversion: sum geometric waiting times until they pass count.
Array binomial_inversion(const Array& key, const Array& count, const Array& prob) {
  Shape s = prob.shape();
  DType d = prob.dtype();
  Array log1m = log1p(-prob);
  FlatFn cond = [count](const Carry& c) { return Carry{any(c[2] <= count)}; };
  FlatFn body = [=](const Carry& c) {
    Array keys = random::split(c[0], 2);  // (subkey, key)
    Array n = where(c[2] <= count, c[1] + scalar(1, d), c[1]);
    Array u = random::uniform(key_row(keys, 0), s, d);
    Array geom = ceil(log(u) / log1m);
    return Carry{key_row(keys, 1), n, c[2] + geom};
  };
  Carry out = graft::detail::bind_while(cond, body, {}, {}, {key, zeros(s, d), zeros(s, d)});
  return out[1] - scalar(1, d);
}

// JAX's _btrs: Hormann's transformed rejection with squeeze.
Array binomial_btrs(const Array& key, const Array& count, const Array& prob) {
  Shape s = prob.shape();
  DType d = prob.dtype();
  auto c_ = [d](double v) { return scalar(v, d); };
  Array stddev = sqrt(count * prob * (c_(1) - prob));
  Array b = c_(1.15) + c_(2.53) * stddev;
  Array a = c_(-0.0873) + c_(0.0248) * b + c_(0.01) * prob;
  Array c = count * prob + c_(0.5);
  Array v_r = c_(0.92) - c_(4.2) / b;
  Array r = prob / (c_(1) - prob);
  Array alpha = (c_(2.83) + c_(5.1) / b) * stddev;
  Array m = floor((count + c_(1)) * prob);
  // The terms of the bound that do not depend on the draw.
  Array ub_fixed_m = (m + c_(0.5)) * log((m + c_(1)) / (r * (count - m + c_(1))));
  Array tail_m = stirling_tail(m), tail_nm = stirling_tail(count - m);
  FlatFn cond = [](const Carry& cr) { return Carry{any(logical_not(cr[2]))}; };
  FlatFn body = [=](const Carry& cr) {
    Array keys = random::split(cr[0], 3);  // (key, subkey_0, subkey_1)
    Array u = random::uniform(key_row(keys, 1), s, d);
    Array v = random::uniform(key_row(keys, 2), s, d);
    u = u - c_(0.5);
    Array us = c_(0.5) - abs(u);
    Array accept1 = logical_and(us >= c_(0.07), v <= v_r);
    Array k = floor((c_(2) * a / us + b) * u + c);
    Array reject = logical_or(k < c_(0), k > count);
    Array lv = log(v * alpha / (a / (us * us) + b));
    Array ub = ub_fixed_m + (count + c_(1)) * log((count - m + c_(1)) / (count - k + c_(1))) +
               (k + c_(0.5)) * log(r * (count - k + c_(1)) / (k + c_(1))) + tail_m + tail_nm -
               stirling_tail(k) - stirling_tail(count - k);
    Array accept = logical_or(accept1, logical_and(logical_not(reject), lv <= ub));
    return Carry{key_row(keys, 0), where(accept, k, cr[1]), logical_or(cr[2], accept)};
  };
  Carry out = graft::detail::bind_while(cond, body, {}, {},
                                        {key, full(s, -1, d), zeros(s, DType::kBool)});
  return out[1];
}

// promote_dtypes_inexact of a parameter: a floating array keeps its dtype, a C++ number
// (weak) or an integer becomes f32.
DType inexact_dtype(const Array& p) {
  return is_floating(p.dtype()) && !p.aval().weak ? p.dtype() : DType::kF32;
}

}  // namespace

Array poisson(const Array& key, const Array& lam, OptShape shape, DType dtype) {
  check_key("poisson", key);
  if (!is_integral(dtype) || dtype == DType::kBool) {
    fail("poisson", "dtype must be an integer type, got ", dtype_name(dtype));
  }
  Shape s = param_shape("poisson", shape, {&lam});
  Array l = broadcast_to(param("poisson", lam, DType::kF32), s);
  if (numel(s) == 0) return zeros(s, dtype);
  Array use_knuth = logical_or(isnan(l), l < scalar(10, DType::kF32));
  Array lam_knuth = where(use_knuth, l, scalar(0, DType::kF32));
  Array lam_rejection = where(use_knuth, scalar(1e5, DType::kF32), l);
  Array result = where(use_knuth, poisson_knuth(key, lam_knuth, dtype),
                       poisson_rejection(key, lam_rejection, dtype));
  return where(l == scalar(0, DType::kF32), zeros(s, dtype), result);
}

Array binomial(const Array& key, const Array& n, const Array& p, OptShape shape, DType dtype) {
  check_key("binomial", key);
  check_float("binomial", dtype);
  Shape s = param_shape("binomial", shape, {&n, &p});
  DType d = inexact_dtype(p);
  Array prob = broadcast_to(param("binomial", p, d), s);
  Array count = broadcast_to(param("binomial", n, d), s);
  if (numel(s) == 0) return zeros(s, dtype);
  auto c_ = [d](double v) { return scalar(v, d); };
  Array p_lt_half = prob < c_(0.5);
  Array q = where(p_lt_half, prob, c_(1) - prob);
  Array count_nan_or_neg = logical_or(isnan(count), count < c_(0));
  Array count_inf = isinf(count);
  Array q_is_nan = isnan(q);
  Array q_lt_0 = q < c_(0);
  q = where(logical_or(q_is_nan, q_lt_0), c_(0.01), q);
  Array use_inversion = logical_or(count_nan_or_neg, count * q <= c_(10));
  count = floor(count);  // as np.random.binomial for a float count
  Array count_inv = where(use_inversion, count, c_(0));
  Array count_btrs = where(use_inversion, c_(1e4), count);
  Array q_btrs = where(use_inversion, c_(0.5), q);
  Array samples = astype(where(use_inversion, binomial_inversion(key, count_inv, q),
                               binomial_btrs(key, count_btrs, q_btrs)),
                         dtype);
  // NaN for a NaN or negative q or count, inf for an infinite count, and n - k where p > 1/2.
  Array invalid = logical_or(logical_or(q_lt_0, q_is_nan), count_nan_or_neg);
  samples = where(invalid, scalar(NAN, dtype), samples);
  samples = where(logical_and(count_inf, logical_not(invalid)), scalar(INFINITY, dtype), samples);
  Array keep = logical_or(logical_or(p_lt_half, count_nan_or_neg), logical_or(q_is_nan, count_inf));
  return where(keep, samples, astype(count, dtype) - samples);
}

Array multinomial(const Array& key, const Array& n, const Array& p, OptShape shape,
                  DType dtype) {
  check_key("multinomial", key);
  check_float("multinomial", dtype);
  if (!n.valid() || !p.valid()) fail("multinomial", "got an empty Array handle as n or p");
  if (p.ndim() < 1) fail("multinomial", "p must have at least one dimension (the outcomes), got ", p.aval().str());
  Shape s = shape ? *shape : p.shape();
  if (s.empty()) fail("multinomial", "shape must include the outcome axis, got ()");
  check_shape("multinomial", s);
  DType d = promote_types({inexact_dtype(n)}, {inexact_dtype(p)}).dtype;
  Shape batch(s.begin(), s.end() - 1);
  Shape nb = broadcast_shapes("multinomial", batch, n.shape());
  Shape pb = broadcast_shapes("multinomial", s, p.shape());
  if (nb != batch || pb != s) {
    fail("multinomial", "n ", n.aval().str(), " and p ", p.aval().str(),
         " must broadcast to the batch shape ", shape_str(batch), " and the shape ", shape_str(s));
  }
  Array remainder = broadcast_to(astype(n, d), batch);
  Array probs = moveaxis(broadcast_to(astype(p, d), s), -1, 0);
  // ratio_i = p_i / (p_i + ... + p_last): the share of what remains that outcome i takes.
  Array remaining = cumsum(probs, 0, /*reverse=*/true);
  Array ratios = probs / where(remaining == scalar(0, d), scalar(1, d), remaining);
  const int64_t k = s.back();
  Array keys = random::split(key, k);
  // JAX scans over (ratios, keys); the steps are unrolled here (k is static), same values.
  std::vector<Array> counts;
  for (int64_t i = 0; i < k; ++i) {
    Shape start(s.size(), 0), limit = ratios.shape();
    start[0] = i;
    limit[0] = i + 1;
    Array ratio = reshape(slice(ratios, start, limit), batch);
    Array count = binomial(key_row(keys, i), remainder, clip(ratio, scalar(0, d), scalar(1, d)),
                           std::nullopt, d);
    remainder = remainder - count;
    counts.push_back(count);
  }
  return astype(stack(counts, -1), dtype);
}

}  // namespace graft::random
