// Triangles and diagonals of matrices: tri, tril, triu and diagonal, the views the
// factorizations' derivative rules (core/primitives/decomp_rules.cc) need, as JAX's
// lax.linalg has its own _tril / _triu. jax.numpy's functions of these names are these
// (core/ops.h includes this header through core/lax/lax.h).
#pragma once

#include <cstdint>
#include <optional>

#include "core/array.h"

namespace graft {

// tri[i, j] = (j <= i + k), shape [n, m] (m defaults to n).
Array tri(int64_t n, std::optional<int64_t> m = std::nullopt, int64_t k = 0,
          DType dtype = DType::kF32);
// Zero above (tril) / below (triu) the k-th diagonal of the last two dims (rank >= 2).
Array tril(const Array& m, int64_t k = 0);
Array triu(const Array& m, int64_t k = 0);
// The `offset` diagonal of the (axis1, axis2) planes, as the last dim of the result.
Array diagonal(const Array& a, int64_t offset = 0, int64_t axis1 = 0, int64_t axis2 = 1);

}  // namespace graft
