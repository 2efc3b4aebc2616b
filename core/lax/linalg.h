// Matrix factorizations: lax.linalg's (namespace graft), with JAX's names, defaults and
// derivatives. The primitives are in core/primitives/decomp.h; LAPACK computes them on the
// CPU. Matrices are the last two dims, leading dims are a batch. The lax forms take f32 or
// f64 only. The jnp.linalg functions built on them are core/numpy/linalg/decompositions.h;
// jnp.linalg.eig / eigvals are in core/numpy/linalg/eig.h.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/array.h"
#include "core/lax/lax.h"  // Axes; lax.h includes this header at its end

namespace graft {

struct QrResult {
  Array q, r;  // q is empty for jnp.linalg.qr's mode "r"
};
struct SvdResult {
  Array u, s, vh;  // u and vh are empty without compute_uv
};
struct EighResult {
  Array eigenvalues, eigenvectors;
};
struct LuResult {
  Array lu, pivots, permutation;
};
// jnp.linalg.lstsq's and slogdet's results (core/numpy/linalg/decompositions.h).
struct LstsqResult {
  Array x, resid, rank, s;
};
struct SlogdetResult {
  Array sign, logabsdet;
};

// lax.linalg.cholesky: the lower factor L of x = L L^T (NaNs where x is not positive
// definite); x is first replaced by (x + x^T) / 2 unless symmetrize_input is false.
Array cholesky(const Array& x, bool symmetrize_input = true);
// lax.linalg.qr: q [..., m, m] and r [..., m, n] (full_matrices), else [..., m, k], [..., k, n].
QrResult qr(const Array& x, bool full_matrices = true);
// lax.linalg.svd: x = u diag(s) vh, s descending.
SvdResult svd(const Array& x, bool full_matrices = true, bool compute_uv = true);
// lax.linalg.eigh (returned by name: eigenvectors v in columns, eigenvalues w ascending);
// reads the lower (or upper) triangle after symmetrizing x unless symmetrize_input is false.
EighResult eigh(const Array& x, bool lower = true, bool symmetrize_input = true);
// lax.linalg.lu: P x = L U with partial pivoting (see Lu in core/primitives/decomp.h).
LuResult lu(const Array& x);
// lax.linalg.triangular_solve (its defaults: the right side, the upper triangle).
Array triangular_solve(const Array& a, const Array& b, bool left_side = false, bool lower = false,
                       bool transpose_a = false, bool unit_diagonal = false);
// x with a x = b, for a [..., n, n] and b [..., n, k] of the same batch and float dtype: lu,
// the pivots applied to b, two triangular solves (what jnp.linalg.solve does after promoting
// and broadcasting; the eig primitive's rule uses it).
Array lu_solve(const Array& a, const Array& b);

}  // namespace graft
