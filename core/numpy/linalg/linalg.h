// The jnp.linalg functions that are compositions of graft's ops, with JAX's names and
// defaults, in namespace graft::linalg. The ones built on the factorizations (cholesky, qr,
// svd, eigh, solve, inv, det, lstsq, ...) are in core/numpy/linalg/decompositions.h; the matrix
// norms of ord 2, -2 and "nuc" and matrix_power's negative powers are built on them.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/array.h"
#include "core/lax/lax.h"  // Axes
#include "core/numpy/linalg/decompositions.h"
#include "core/shape.h"

namespace graft::linalg {

// jnp.linalg.vector_norm(x, ord=2, axis=None, keepdims=False): ord is any p > 0, inf, -inf
// or 0 (the count of non-zeros); axes empty means all of x.
Array vector_norm(const Array& x, double ord = 2.0, const Axes& axes = {}, bool keepdims = false);
// jnp.linalg.matrix_norm(x, ord="fro") over the last two dims: "fro" (or "f"), "nuc" (the
// sum of the singular values), the induced norms 1, -1 ("1", "-1": max / min column sum),
// inf, -inf ("inf", "-inf": row sums) and 2, -2 ("2", "-2": the largest / smallest singular
// value). The singular-value orders are differentiable where the svd is (distinct singular
// values); for a complex x they are an error (graft's svd is real only).
Array matrix_norm(const Array& x, const std::string& ord = "fro", bool keepdims = false);
// jnp.linalg.norm(x, ord=None, axis=None, keepdims=False): without ord and axis, the 2-norm of
// all of x (any rank); else over one axis a vector_norm (ord a number, "inf" or "-inf"), over
// two a matrix_norm (ord as matrix_norm's; none is "fro"); axis none means all of x's (1 or 2)
// dims.
Array norm(const Array& x, const std::optional<std::string>& ord = std::nullopt,
           const std::optional<Axes>& axis = std::nullopt, bool keepdims = false);
// jnp.linalg.matrix_power(a, n): a's n-th power by JAX's products (repeated squaring); n = 0
// is the identity, n < 0 the |n|-th power of inv(a).
Array matrix_power(const Array& a, int64_t n);
// jnp.linalg.multi_dot: the product of the matrices, the first and last may be 1-D.
Array multi_dot(const std::vector<Array>& arrays);
// jnp.linalg.vecdot(x1, x2, axis=-1): graft::vecdot.
Array vecdot(const Array& x1, const Array& x2, int64_t axis = -1);
// jnp.linalg.diagonal / trace: of the last two dims, with an offset.
Array diagonal(const Array& x, int64_t offset = 0);
Array trace(const Array& x, int64_t offset = 0);
// jnp.linalg.tensordot and cross (3-vectors along the last axis).
Array tensordot(const Array& x1, const Array& x2, int64_t axes = 2);
Array cross(const Array& x1, const Array& x2);

}  // namespace graft::linalg

namespace graft {

// jnp.matrix_transpose: swaps the last two dims (rank >= 2).
Array matrix_transpose(const Array& x);
// jnp.vecdot(x1, x2, axis=-1): sum(conj(x1) * x2) over `axis`, broadcasting the other dims.
Array vecdot(const Array& x1, const Array& x2, int64_t axis = -1);
// jnp.matvec(x1 [..., m, n], x2 [..., n]) -> [..., m]; jnp.vecmat(x1 [..., m], x2 [..., m, n])
// -> [..., n]; batch dims broadcast.
Array matvec(const Array& x1, const Array& x2);
Array vecmat(const Array& x1, const Array& x2);

}  // namespace graft
