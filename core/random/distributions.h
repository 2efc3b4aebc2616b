// The distributions of jax.random beyond the basics in core/random/random.h, with JAX's signatures:
// parameters are arrays (C++ numbers convert) that broadcast against `shape`; when `shape` is
// nullopt it is the parameters' broadcast shape; otherwise broadcasting the parameters into
// it must give `shape` exactly (JAX's _check_shape). Parameters are converted to `dtype`.
// Each follows JAX 0.10.2's algorithm and key use (tools/jax_random_algorithms.md, section
// 18); tests/core/random/random_dist_test.cc states per function whether graft's f32 values equal
// JAX's bit for bit or within which tolerance, and why.
// Errors: graft::Error "[op] ..." for a bad key, shape, dtype or parameter.
#pragma once

#include <optional>
#include <string>

#include "core/array.h"

namespace graft::random {

using OptShape = std::optional<Shape>;

// ---- one uniform or normal draw, transformed (core/random/continuous.cc)
Array exponential(const Array& key, const Shape& shape = {}, DType dtype = DType::kF32);
Array laplace(const Array& key, const Shape& shape = {}, DType dtype = DType::kF32);
Array logistic(const Array& key, const Shape& shape = {}, DType dtype = DType::kF32);
Array cauchy(const Array& key, const Shape& shape = {}, DType dtype = DType::kF32);
Array rayleigh(const Array& key, const Array& scale, OptShape shape = std::nullopt,
               DType dtype = DType::kF32);
Array weibull_min(const Array& key, const Array& scale, const Array& concentration,
                  const Shape& shape = {}, DType dtype = DType::kF32);
Array pareto(const Array& key, const Array& b, OptShape shape = std::nullopt,
             DType dtype = DType::kF32);
// The norm of 3 standard normals: draws normal(key, (*shape, 3)).
Array maxwell(const Array& key, const Shape& shape = {}, DType dtype = DType::kF32);
// Result shape: shape + broadcast(loc, scale) (shape () means the parameters' shape), as JAX.
Array double_sided_maxwell(const Array& key, const Array& loc, const Array& scale,
                           const Shape& shape = {}, DType dtype = DType::kF32);
Array lognormal(const Array& key, const Array& sigma = 1.0, OptShape shape = std::nullopt,
                DType dtype = DType::kF32);
Array triangular(const Array& key, const Array& left, const Array& mode, const Array& right,
                 OptShape shape = std::nullopt, DType dtype = DType::kF32);
Array wald(const Array& key, const Array& mean, OptShape shape = std::nullopt,
           DType dtype = DType::kF32);

// ---- discrete (core/random/discrete.cc)
// -1 or +1 with equal probability, in `dtype` (i32 by default, as JAX's int).
Array rademacher(const Array& key, const Shape& shape = {}, DType dtype = DType::kI32);
// Trials until the first success, >= 1 (integer dtype, i32 by default).
Array geometric(const Array& key, const Array& p, OptShape shape = std::nullopt,
                DType dtype = DType::kI32);
// jax.random.choice over arange(n) (i32) or over x's slices along `axis` (the result has
// `shape` in place of that axis). `p` (1-D, n or x.shape[axis] long) weights the items;
// without replacement it uses the Gumbel top-k trick, as JAX.
Array choice(const Array& key, int64_t n, const Shape& shape = {}, bool replace = true,
             const std::optional<Array>& p = std::nullopt);
Array choice(const Array& key, const Array& x, const Shape& shape = {}, bool replace = true,
             const std::optional<Array>& p = std::nullopt, int64_t axis = 0);

// ---- counts (core/random/counts.cc), JAX's loops with one key for all elements.
// Poisson(lam) (lam converted to f32) as an integer dtype: Knuth's product of uniforms below
// lam = 10, Hormann's transformed rejection (on lgamma) above; 0 where lam is 0.
Array poisson(const Array& key, const Array& lam, OptShape shape = std::nullopt,
              DType dtype = DType::kI32);
// Binomial(n, p) as a float dtype (n and p converted to p's inexact dtype, f32 for C++ numbers):
// inversion where n * min(p, 1 - p) <= 10, BTRS above; n is floored; NaN for a NaN or
// negative n or a p that is NaN or outside [0, 1], inf for an infinite n, as JAX.
Array binomial(const Array& key, const Array& n, const Array& p, OptShape shape = std::nullopt,
               DType dtype = DType::kF32);
// Counts of n trials over the outcomes on p's last axis: a binomial per outcome on what
// remains. `shape` is the whole result shape, outcome axis included, as JAX's code uses it
// (default p.shape); n broadcasts to shape[:-1], p to shape.
Array multinomial(const Array& key, const Array& n, const Array& p,
                  OptShape shape = std::nullopt, DType dtype = DType::kF32);

// ---- gamma and what is built on it (core/random/gamma.cc): Marsaglia-Tsang with JAX's
// rejection loops (while_loop primitives) and one key per element, split(key, a.size).
// Differentiable w.r.t. `a` as JAX (d sample / d a by random_gamma_grad, core/lax/special.h).
Array gamma(const Array& key, const Array& a, OptShape shape = std::nullopt,
            DType dtype = DType::kF32);
Array loggamma(const Array& key, const Array& a, OptShape shape = std::nullopt,
               DType dtype = DType::kF32);
Array beta(const Array& key, const Array& a, const Array& b, OptShape shape = std::nullopt,
           DType dtype = DType::kF32);
// alpha (..., k); the result is shape + (k,) (shape defaults to alpha.shape[:-1]).
Array dirichlet(const Array& key, const Array& alpha, OptShape shape = std::nullopt,
                DType dtype = DType::kF32);
Array chisquare(const Array& key, const Array& df, OptShape shape = std::nullopt,
                DType dtype = DType::kF32);
Array f(const Array& key, const Array& dfnum, const Array& dfden, OptShape shape = std::nullopt,
        DType dtype = DType::kF32);
Array t(const Array& key, const Array& df, OptShape shape = std::nullopt,
        DType dtype = DType::kF32);
Array generalized_normal(const Array& key, const Array& p, const Shape& shape = {},
                         DType dtype = DType::kF32);
// Uniform in the unit Lp ball of dimension d: shape + (d,).
Array ball(const Array& key, int64_t d, const Array& p = 2.0, const Shape& shape = {},
           DType dtype = DType::kF32);

// ---- built on jnp.linalg (core/random/linalg.cc), as JAX composes them: the same keys and
// draws, values within the factorizations' rounding of JAX's.
// A uniformly random orthogonal n x m matrix (semi-orthogonal when m != n; m defaults to n):
// shape + (n, m), Q of a normal matrix's QR with the signs of R's diagonal (Mezzadri).
Array orthogonal(const Array& key, int64_t n, const Shape& shape = {}, DType dtype = DType::kF32,
                 std::optional<int64_t> m = std::nullopt);
// mean (..., n), cov (..., n, n): batch + (n,), batch = shape or the broadcast of the batch
// shapes; method "cholesky" (default), "svd" or "eigh" factors cov; dtype defaults to the
// promoted (inexact) dtype of mean and cov.
Array multivariate_normal(const Array& key, const Array& mean, const Array& cov,
                          OptShape shape = std::nullopt,
                          std::optional<DType> dtype = std::nullopt,
                          const std::string& method = "cholesky");

// ---- keys as data: graft keys are already their u32[..., 2] data (JAX's raw keys), so these
// check the layout and return the same array.
Array key_data(const Array& keys);
Array wrap_key_data(const Array& key_bits);

}  // namespace graft::random
