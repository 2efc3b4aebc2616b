// The jax.numpy names that need complex results from real inputs:
// jnp.linalg.eig / eigvals (through the eig primitive, LAPACK geev, CPU only; real inputs),
// jnp.poly (the coefficients of the polynomial with the given roots, or of a square matrix's
// characteristic polynomial) and jnp.roots (eigenvalues of the companion matrix). Included at
// the end of core/ops.h.
#pragma once

#include "core/lax/lax.h"

namespace graft::linalg {

struct EigResult {
  Array eigenvalues, eigenvectors;
};
// jnp.linalg.eig(a): eigenvalues w [..., n] and right eigenvectors v [..., n, n] (columns,
// unit norm) of a general square matrix, both complex, in LAPACK's order. a is f32, f64,
// c64 or c128 (integers become f32); not differentiable (an error under grad / jvp, as
// JAX's eig with eigenvectors).
EigResult eig(const Array& a);
// jnp.linalg.eigvals(a): the eigenvalues only; differentiable (JAX's rule, diag(V^-1 dA V)).
Array eigvals(const Array& a);

}  // namespace graft::linalg

namespace graft {

// jnp.poly(seq_of_zeros): for 1-D roots r, the coefficients (highest power first) of
// prod_k (x - r_k), as a real or complex array like the roots (integers become f32); for a
// square matrix, of its characteristic polynomial (from its eigenvalues: complex).
Array poly(const Array& seq_of_zeros);
// jnp.roots(p) (strip_zeros=True): the roots of the polynomial with coefficients p (1-D, real
// or complex, highest power first), complex, in LAPACK's order; leading zeros of p are dropped, so
// p must be concrete (not traced). Fewer than 2 coefficients give no roots.
Array roots(const Array& p);

}  // namespace graft
