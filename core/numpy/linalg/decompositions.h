// jnp.linalg's functions built on lax.linalg's factorizations (core/lax/linalg.h, which
// also defines their result types), with JAX's names and defaults, in namespace
// graft::linalg, written as jax/_src/numpy/linalg.py writes them; defined in
// decompositions.cc. Unlike the lax forms they first promote integers and bools to f32
// (f16 / bf16 are an error, as JAX's LAPACK kernels have none), and solve broadcasts batch
// dimensions. The compositions of graft's ops that need no factorization (norms,
// matrix_power, ...) are core/numpy/linalg/linalg.h; eig / eigvals are
// core/numpy/linalg/eig.h.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/array.h"
#include "core/lax/linalg.h"

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

// ---- compositions of graft's ops ----

}  // namespace graft::linalg
