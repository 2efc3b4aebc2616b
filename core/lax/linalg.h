// Matrix factorizations: lax.linalg's (namespace graft) and the jnp.linalg
// functions built on them (namespace graft::linalg), with JAX's names, defaults and
// derivatives. The primitives are in core/primitives/decomp.h; LAPACK computes them on the
// CPU. Matrices are the last two dims, leading dims are a batch. The lax forms take f32 or
// f64 only; the jnp.linalg forms first promote integers and bools to f32 (f16 / bf16 are an
// error, as JAX's LAPACK kernels have none). jnp.linalg.eig / eigvals are in
// core/numpy/linalg/eig.h.
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
struct SlogdetResult {
  Array sign, logabsdet;
};
struct LstsqResult {
  Array x, resid, rank, s;
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

namespace graft::linalg {

// jnp.linalg.cholesky(a, upper=False).
Array cholesky(const Array& a, bool upper = false);
// jnp.linalg.qr(a, mode): "reduced", "complete" or "r" (then only r).
QrResult qr(const Array& a, const std::string& mode = "reduced");
// jnp.linalg.svd(a, full_matrices=True, compute_uv=True): u, s, vh.
SvdResult svd(const Array& a, bool full_matrices = true, bool compute_uv = true);
// jnp.linalg.svdvals(x): the singular values, descending.
Array svdvals(const Array& x);
// jnp.linalg.eigh(a, UPLO="L", symmetrize_input=True) and eigvalsh(a, UPLO="L").
EighResult eigh(const Array& a, const std::string& uplo = "L", bool symmetrize_input = true);
Array eigvalsh(const Array& a, const std::string& uplo = "L");
// jnp.linalg.solve(a [..., n, n], b): b [n] (a vector) or [..., n, k]; batch dims broadcast.
Array solve(const Array& a, const Array& b);
// jnp.linalg.inv, det, slogdet (through lu).
Array inv(const Array& a);
Array det(const Array& a);
SlogdetResult slogdet(const Array& a);
// jnp.linalg.lstsq(a [m, n], b [m] or [m, k], rcond=None): x, the squared residuals (always
// computed: numpy_resid=False; shape [k], [1] for a vector b), the rank (i32) and the singular
// values, through the svd.
LstsqResult lstsq(const Array& a, const Array& b, std::optional<double> rcond = std::nullopt);
// jnp.linalg.pinv(a, rtol=None): singular values <= rtol * the largest are dropped.
Array pinv(const Array& a, std::optional<double> rtol = std::nullopt);
// jnp.linalg.cond(x, p=None): p empty, "2" or "-2" through the svd; "fro", "1", "-1", "inf",
// "-inf" as matrix_norm(x, p) * matrix_norm(inv(x), p).
Array cond(const Array& x, const std::optional<std::string>& p = std::nullopt);
// jnp.linalg.matrix_rank(M, rtol=None): the count of singular values above rtol * the largest
// (rtol defaults to max(m, n) * eps), as i32.
Array matrix_rank(const Array& m, std::optional<double> rtol = std::nullopt);
// jnp.linalg.tensorinv(a, ind=2) and tensorsolve(a, b, axes=None).
Array tensorinv(const Array& a, int64_t ind = 2);
Array tensorsolve(const Array& a, const Array& b, const std::vector<int64_t>& axes = {});

}  // namespace graft::linalg
