// Gamma and the samplers built on it (loggamma, beta, dirichlet, chisquare, f, t,
// generalized_normal, ball), as JAX 0.10.2 computes them on CPU: Marsaglia-Tsang with one key
// per element (split(key, a.size)) and JAX's vmapped rejection loops. A vmapped while_loop
// runs until no element wants another round and keeps each element's state once its own
// condition is false, so every element sees exactly the keys and draws of an unbatched loop;
// graft builds the same two nested while_loop primitives over all elements at once.
// gamma and loggamma are differentiable in a (JAX's _gamma_grad, through random_gamma_grad).
#include <cmath>

#include "core/error.h"
#include "core/ops.h"
#include "core/lax/exact_fma.h"
#include "core/dtype/dtype_info.h"
#include "core/lax/special.h"
#include "core/primitives/call.h"
#include "core/primitives/control.h"
#include "core/random/random.h"
#include "core/random/internal.h"

namespace graft::random {

using namespace internal;  // NOLINT: the family's own helpers

namespace {

// One key per element: the two u32 words, each of shape (n,).
struct Keys {
  Array k1, k2;
};

// threefry2x32(key, 0, j) per element: split(key)[j]'s words, and for j = 0 also the block
// a scalar draw from `key` uses.
Keys block_at(const Keys& k, uint32_t j) {
  Shape s = k.k1.shape();
  auto [y1, y2] = threefry2x32(k.k1, k.k2, zeros(s, DType::kU32), full(s, j, DType::kU32));
  return {y1, y2};
}

Array uniform_of(const Keys& k, DType dtype) {  // uniform(key, (), dtype) per element
  Keys b = block_at(k, 0);
  return unit_float_words(b.k1, b.k2, dtype);
}

Array normal_of(const Keys& k, DType dtype) {  // normal(key, (), dtype) per element
  Array f = uniform_of(k, dtype);
  Array lo = scalar(next_toward(-1.0, dtype, 0.0), dtype);
  Array u = maximum(lo, f * (scalar(1, dtype) - lo) + lo);  // the span rounds to 2: exact
  return scalar(1.41421356237309504880, dtype) * erf_inv(u);
}

// a * b + c as XLA:CPU computes it: one FMA for f32 / f64.
Array mul_add(const Array& a, const Array& b, const Array& c) {
  DType d = a.dtype();
  if (d != DType::kF32 && d != DType::kF64) return a * b + c;
  Shape s = broadcast_shapes("gamma", broadcast_shapes("gamma", a.shape(), b.shape()), c.shape());
  return graft::detail::fma(broadcast_to(a, s), broadcast_to(b, s), broadcast_to(c, s));
}

// JAX's _gamma_one for every element of `alpha` (shape (n,)) with keys `k`.
Array gamma_one(const Keys& k, const Array& alpha_orig, bool log_space) {
  DType dt = alpha_orig.dtype();
  Shape s = alpha_orig.shape();
  auto c_ = [dt](double v) { return scalar(v, dt); };
  Array zero = zeros(s, dt), one = c_(1);
  // alpha < 1 is boosted to alpha + 1: Gamma(a) ~ Gamma(a + 1) * U^(1 / a).
  Array boost_mask = alpha_orig >= one;
  Array alpha = where(boost_mask, alpha_orig, alpha_orig + one);
  Array d = alpha - c_(1.0 / 3.0);
  // XLA rewrites (1/3) / sqrt(d) as (1/3) * rsqrt(d), and XLA:CPU's rsqrt is an
  // approximation (rsqrtps plus a Newton step, vendor-dependent) that graft does not copy:
  // graft's rsqrt is 1 / sqrt. So c, and through it the samples, can differ by a few ulp.
  Array c = c_(1.0 / 3.0) * rsqrt(d);

  auto rejects = [c_](const Array& d_, const Array& X, const Array& V, const Array& U) {
    Array squeeze = U >= mul_add(c_(-0.0331), X * X, c_(1));
    Array log_test = log(U) >= mul_add(d_, (c_(1) - V) + log(V), X * c_(0.5));
    return logical_and(squeeze, log_test);
  };
  // Inner loop: draw x ~ N(0, 1) until v = 1 + x c > 0. Carry [k1, k2, x, v].
  FlatFn inner_cond = [](const std::vector<Array>& in) {
    return std::vector<Array>{any(in[3] <= scalar(0, in[3].dtype()))};
  };
  FlatFn inner_body = [dt, c](const std::vector<Array>& in) {
    Array active = in[3] <= scalar(0, dt);
    Keys key{in[0], in[1]};
    Keys next = block_at(key, 0), sub = block_at(key, 1);
    Array x = normal_of(sub, dt);
    Array v = mul_add(x, c, scalar(1, dt));
    return std::vector<Array>{where(active, next.k1, in[0]), where(active, next.k2, in[1]),
                              where(active, x, in[2]), where(active, v, in[3])};
  };
  // Outer loop: carry [k1, k2, X, V, U]; starts in a state that rejects (X 0, V 1, U 2).
  FlatFn outer_cond = [rejects, d](const std::vector<Array>& in) {
    return std::vector<Array>{any(rejects(d, in[2], in[3], in[4]))};
  };
  FlatFn outer_body = [=](const std::vector<Array>& in) {
    Array active = rejects(d, in[2], in[3], in[4]);
    Keys key{in[0], in[1]};
    Keys next = block_at(key, 0), x_key = block_at(key, 1), u_key = block_at(key, 2);
    std::vector<Array> xv = graft::detail::bind_while(
        inner_cond, inner_body, {}, {}, {x_key.k1, x_key.k2, zeros(s, dt), full(s, -1, dt)});
    Array X = xv[2] * xv[2];
    Array V = xv[3] * xv[3] * xv[3];
    Array U = uniform_of(u_key, dt);
    std::vector<Array> out = {next.k1, next.k2, X, V, U};
    for (size_t i = 0; i < out.size(); ++i) out[i] = where(active, out[i], in[i]);
    return out;
  };
  Keys key = block_at(k, 0), subkey = block_at(k, 1);
  std::vector<Array> fin = graft::detail::bind_while(outer_cond, outer_body, {}, {},
                                              {key.k1, key.k2, zero, full(s, 1, dt), full(s, 2, dt)});
  Array V = fin[3];
  Array u = uniform_of(subkey, dt);
  if (log_space) {
    // log U for the boost, as -exponential(subkey) = log1p(-u).
    Array log_samples = log1p(-u);
    Array log_boost = where(logical_or(boost_mask, log_samples == c_(0)), zero,
                            log_samples * (one / alpha_orig));
    return (log(d) + log(V)) + log_boost;
  }
  Array samples = one - u;
  Array boost = where(boost_mask, full(s, 1, dt), power(samples, one / alpha_orig));
  return d * V * boost;
}

Array gamma_impl(std::string_view op, const Array& key, const Array& a, OptShape shape,
                 DType dtype, bool log_space) {
  check_key(op, key);
  check_float(op, dtype);
  if (!a.valid()) fail(op, "got an empty Array handle as a");
  Shape s = shape ? *shape : a.shape();
  if (shape) param_shape(op, shape, {&a});
  Array alpha = broadcast_to(param(op, a, dtype), s);
  int64_t n = numel(s);
  if (n == 0) return zeros(s, dtype);
  Array keys = random::split(key, n);
  Keys k{reshape(slice(keys, {0, 0}, {n, 1}), {n}), reshape(slice(keys, {0, 1}, {n, 2}), {n})};
  // Differentiable in a as JAX's _gamma_grad: d sample / d a = random_gamma_grad(a, sample)
  // (for loggamma, divided by the sample, exp of the result with 0 raised to the tiniest).
  FlatFn fn = [k, log_space](const std::vector<Array>& xs) {
    return std::vector<Array>{gamma_one(k, xs[0], log_space)};
  };
  graft::detail::JvpRuleFn rule = [k, log_space](const std::vector<Array>& ps,
                                                 const std::vector<Array>& ts) {
    Array sample = gamma_one(k, ps[0], log_space);
    Array g;
    if (log_space) {
      Array e = exp(sample);
      e = where(e == scalar(0, e.dtype()), scalar(finfo(e.dtype()).tiny, e.dtype()), e);
      g = random_gamma_grad(ps[0], e) / e;
    } else {
      g = random_gamma_grad(ps[0], sample);
    }
    return std::pair{std::vector<Array>{sample}, std::vector<Array>{ts[0] * g}};
  };
  Array out = graft::detail::bind_custom_jvp(std::string(op), fn, rule, {reshape(alpha, {n})})[0];
  return reshape(out, s);
}

}  // namespace

Array gamma(const Array& key, const Array& a, OptShape shape, DType dtype) {
  return gamma_impl("gamma", key, a, shape, dtype, false);
}

Array loggamma(const Array& key, const Array& a, OptShape shape, DType dtype) {
  return gamma_impl("loggamma", key, a, shape, dtype, true);
}

Array beta(const Array& key, const Array& a, const Array& b, OptShape shape, DType dtype) {
  check_key("beta", key);
  check_float("beta", dtype);
  Shape s = param_shape("beta", shape, {&a, &b});
  Array keys = random::split(key, 2);
  Array ga = loggamma(key_at(keys, 0), broadcast_to(param("beta", a, dtype), s), s, dtype);
  Array gb = loggamma(key_at(keys, 1), broadcast_to(param("beta", b, dtype), s), s, dtype);
  // gamma_a / (gamma_a + gamma_b) without losing precision.
  Array m = maximum(ga, gb);
  Array sa = exp(ga - m), sb = exp(gb - m);
  return sa / (sa + sb);
}

Array dirichlet(const Array& key, const Array& alpha, OptShape shape, DType dtype) {
  check_key("dirichlet", key);
  check_float("dirichlet", dtype);
  if (!alpha.valid()) fail("dirichlet", "got an empty Array handle as alpha");
  if (alpha.ndim() < 1) fail("dirichlet", "alpha must have at least one dimension, got ", alpha.aval().str());
  Shape batch(alpha.shape().begin(), alpha.shape().end() - 1);
  Shape s = shape ? *shape : batch;
  if (shape) {
    Shape b = broadcast_shapes("dirichlet", s, batch);
    if (b != s) fail("dirichlet", "alpha's batch shape ", shape_str(batch), " must broadcast into ", shape_str(s));
  }
  s.push_back(alpha.shape().back());
  // Gamma in log space (small alpha underflows otherwise), normalized by a softmax.
  return softmax(loggamma(key, param("dirichlet", alpha, dtype), s, dtype), -1);
}

Array chisquare(const Array& key, const Array& df, OptShape shape, DType dtype) {
  check_key("chisquare", key);
  check_float("chisquare", dtype);
  Shape s = param_shape("chisquare", shape, {&df});
  Array two = scalar(2, dtype);
  Array half_df = param("chisquare", df, dtype) / two;
  return exp(loggamma(key, half_df, s, dtype)) * two;
}

Array f(const Array& key, const Array& dfnum, const Array& dfden, OptShape shape, DType dtype) {
  check_key("f", key);
  check_float("f", dtype);
  Shape s = param_shape("f", shape, {&dfnum, &dfden});
  Array num_df = param("f", dfnum, dtype), den_df = param("f", dfden, dtype);
  Array keys = random::split(key, 2);  // (key_dfd, key_dfn)
  Array chi_num = chisquare(key_at(keys, 1), num_df, s, dtype);
  Array chi_den = chisquare(key_at(keys, 0), den_df, s, dtype);
  return (chi_num / num_df) / (chi_den / den_df);
}

Array t(const Array& key, const Array& df, OptShape shape, DType dtype) {
  check_key("t", key);
  check_float("t", dtype);
  Shape s = param_shape("t", shape, {&df});
  Array keys = random::split(key, 2);
  Array n = normal(key_at(keys, 0), s, dtype);
  Array half_df = param("t", df, dtype) / scalar(2, dtype);
  Array g = gamma(key_at(keys, 1), half_df, s, dtype);
  return n * sqrt(half_df / g);
}

Array generalized_normal(const Array& key, const Array& p, const Shape& shape, DType dtype) {
  check_key("generalized_normal", key);
  check_float("generalized_normal", dtype);
  check_shape("generalized_normal", shape);
  Array keys = random::split(key, 2);
  Array inv_p = astype(Array(1.0) / param("generalized_normal", p, p.dtype()), dtype);
  Array g = gamma(key_at(keys, 0), inv_p, shape, dtype);
  Array r = rademacher(key_at(keys, 1), shape, dtype);
  return r * power(g, inv_p);
}

Array ball(const Array& key, int64_t d, const Array& p, const Shape& shape, DType dtype) {
  check_key("ball", key);
  check_float("ball", dtype);
  check_shape("ball", shape);
  if (d < 0) fail("ball", "d must be non-negative, got ", d);
  Array keys = random::split(key, 2);
  Shape gs = shape;
  gs.push_back(d);
  Array g = generalized_normal(key_at(keys, 0), p, gs, dtype);
  Array e = exponential(key_at(keys, 1), shape, dtype);
  Array pp = param("ball", p, dtype);
  Array inv_p = astype(Array(1.0) / param("ball", p, p.dtype()), dtype);
  Array r = power(sum(power(abs(g), pp), {-1}) + e, inv_p);
  return g / expand_dims(r, {-1});
}

}  // namespace graft::random
