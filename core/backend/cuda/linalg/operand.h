// A dot_general / ragged_dot operand as three groups of dims (batch, rows, cols) and what it
// takes to hand it to cuBLASLt: as is (a strided batched matrix, row- or column-major), or
// gathered into a dense [batch, rows, cols] copy, converted to another dtype on the way.
// Mirrors the CPU's canonicalization (core/backend/cpu/linalg_kernels.cc). Host code only;
// the gather runs on the device (linalg_device.h). Built only with --config=cuda.
#pragma once

#include <array>
#include <optional>
#include <vector>

#include <cuda_runtime_api.h>

#include "core/array.h"

namespace graft::cuda::linalg {

using Strides3 = std::array<int64_t, 3>;

struct Side {
  const void* data;
  DType dtype;
  Shape shape, strides;
  std::array<std::vector<int>, 3> groups;
  std::array<int64_t, 3> size{1, 1, 1};
};

// lhs: groups (batch, free, contract) = [B, M, K]; rhs (contract_is_rows): (batch, contract,
// free) = [B, K, N]. Dims in each group keep their order in `batch` / `contract` / the shape.
Side make_side(const void* data, const Aval& aval, const std::vector<int>& batch,
               const std::vector<int>& contract, bool contract_is_rows);

// The operand as a strided batched matrix {batch, row, col} strides in elements, with the row
// or the col stride 1 and the other at least the matrix's stored row length (what cuBLASLt
// takes); nullopt when it needs a gather.
std::optional<Strides3> blas_view(const Side& s);

Strides3 dense_strides(const Side& s);

// Writes the operand densely in [g0, g1, g2] order, as `dtype`, into `dst` (device memory of
// numel * dtype_size(dtype) bytes). Throws graft::Error when the layout has more than
// kMaxGatherRank dims after merging contiguous ones.
void gather(const Side& s, DType dtype, void* dst, cudaStream_t stream);

// Dense element conversion of n elements.
void convert(const void* src, DType src_type, void* dst, DType dst_type, int64_t n,
             cudaStream_t stream);

}  // namespace graft::cuda::linalg
