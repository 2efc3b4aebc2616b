// jax.lax.lgamma / jax.lax.digamma and jax.scipy.special.gammaln / digamma, computed as XLA
// computes them (the CHLO decompositions, read from JAX 0.10.2's compiled HLO on CPU): Lanczos'
// approximation (g = 7, 9 terms) with Euler's reflection below 0.5, written over graft's
// elementwise ops (no new primitive), so grad / vmap / jit work through them. Their f32
// values equal JAX's bit for bit on the points tests/core/random/random_dist_test.cc checks (they
// pass through log1p, log, sin and cos, whose kernels could differ in a last bit elsewhere). lgamma's derivative is digamma (a custom
// jvp, as JAX's rule); digamma's is its formula's derivative (JAX: polygamma(1, x)).
//
// f16 / bf16 compute in f32 and round once, as XLA. Included from core/ops.h.
// Errors: graft::Error "[lgamma] ..." / "[digamma] ..." for an empty handle or, in the lax
// forms, a non-floating x.
#pragma once

#include "core/array.h"

namespace graft {

// log|Gamma(x)| (floating x): +inf at 0, the negative integers and +-inf.
Array lgamma(const Array& x);
// d/dx log Gamma(x) (floating x): NaN at 0 and the negative integers.
Array digamma(const Array& x);
// jax.lax.random_gamma_grad: d sample / d a of a Gamma(a) sample x (implicit differentiation
// of the CDF, -dP(a, x)/da / dP(a, x)/dx, by JAX's series / continued fraction, as while_loop
// primitives). a and x of one floating dtype; NaN for a <= 0 or x < 0; 0 at x = 0.
Array random_gamma_grad(const Array& a, const Array& x);

namespace scipy::special {
// As lax.lgamma / lax.digamma, with integer and bool x promoted to f32 (jax.scipy.special).
Array gammaln(const Array& x);
Array digamma(const Array& x);
}  // namespace scipy::special

}  // namespace graft
