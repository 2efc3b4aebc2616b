// A dot_general / ragged_dot operand as three groups of dims (batch, rows, cols) and how a
// GEMM library can take it: as a strided batched matrix (row- or column-major) with no copy,
// or after a permute-copy into dense [batch, rows, cols] order. Shared by the backends' linalg
// kernels (CPU: oneDNN; CUDA: cuBLASLt), which differ only in how they copy.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <vector>

#include "core/array.h"

namespace graft {

using Strides3 = std::array<int64_t, 3>;

struct DotOperand {
  const void* data;
  DType dtype;
  Shape shape, strides;  // strides in elements (row-major for a graft buffer)
  std::array<std::vector<int>, 3> groups;
  std::array<int64_t, 3> size{1, 1, 1};  // elements per group
};

// lhs: groups (batch, free, contract) = [B, M, K]; rhs (contract_is_rows): (batch, contract,
// free) = [B, K, N]. Dims in each group keep their order in `batch` / `contract` / the shape.
DotOperand make_dot_operand(const void* data, const Aval& aval, const std::vector<int>& batch,
                            const std::vector<int>& contract, bool contract_is_rows);

// {batch, row, col} strides for handing the operand to a GEMM without copying: one of the
// inner two strides is 1 (row-major or transposed); nullopt when the layout needs a
// permute-copy. `leading_dim_fits`: also require the other inner stride to be at least the
// stored row (column) length, as BLAS leading dimensions must be.
std::optional<Strides3> gemm_view(const DotOperand& s, bool leading_dim_fits = false);

// The strides of the dense [g0, g1, g2] copy.
inline Strides3 dense_strides(const DotOperand& s) { return {s.size[1] * s.size[2], s.size[2], 1}; }

}  // namespace graft
