// A dot_general / ragged_dot operand as three groups of dims (batch, rows, cols) and what it
// takes to hand it to cuBLASLt: as is (a strided batched matrix, row- or column-major), or
// gathered into a dense [batch, rows, cols] copy, converted to another dtype on the way.
// The canonicalization is the CPU's (core/backend/dot_operand.h). Host code only;
// the gather runs on the device (linalg_device.h). Built only with --config=cuda.
#pragma once

#include <cuda_runtime_api.h>

#include <array>
#include <optional>
#include <vector>

#include "core/array.h"
#include "core/backend/dot_operand.h"

namespace graft::cuda::linalg {

using Side = DotOperand;  // core/backend/dot_operand.h
using graft::dense_strides;
using graft::Strides3;

inline Side make_side(const void* data, const Aval& aval, const std::vector<int>& batch,
                      const std::vector<int>& contract, bool contract_is_rows) {
  return make_dot_operand(data, aval, batch, contract, contract_is_rows);
}

// The operand as a strided batched matrix cuBLASLt takes (a leading dimension at least the
// stored row length); nullopt when it needs a gather.
inline std::optional<Strides3> blas_view(const Side& s) { return gemm_view(s, true); }

// Writes the operand densely in [g0, g1, g2] order, as `dtype`, into `dst` (device memory of
// numel * dtype_size(dtype) bytes). Throws graft::Error when the layout has more than
// kMaxGatherRank dims after merging contiguous ones.
void gather(const Side& s, DType dtype, void* dst, cudaStream_t stream);

// Dense element conversion of n elements.
void convert(const void* src, DType src_type, void* dst, DType dst_type, int64_t n,
             cudaStream_t stream);

}  // namespace graft::cuda::linalg
