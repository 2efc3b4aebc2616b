// The factorizations' own device kernels (decomp_device.cu), for what cuSOLVER leaves to its
// caller: moving matrices between graft's row-major layout and cuSOLVER's column-major one,
// keeping one triangle, NaNs for a matrix whose factorization failed, and LU's pivots turned
// into a permutation. Plain types only (no graft header in the .cu file). Enqueued on
// `stream`; launch errors surface at the caller's next check. Built only with --config=cuda.
#pragma once

#include <cstdint>

#include <cuda_runtime_api.h>

namespace graft::cuda::decomp {

// Which part of a matrix a copy keeps (the rest becomes 0).
enum class Keep { kAll, kUpper, kLower };  // kUpper: j >= i, kLower: j <= i

// dst[b, i, j] for b < batch, i < rows, j < cols, each side addressed by its own strides (in
// elements): 0 outside `keep`; inside it, NaN wherever info[b] != 0 (info may be null: a
// failed factorization keeps the zeros of its triangle, as JAX's), else src's element
// (b, i, j), 0 outside src_rows x src_cols, the identity when src is null. src == dst with
// equal strides is allowed (each element is read and written by one thread).
struct MatrixCopy {
  int64_t batch = 1, rows = 0, cols = 0;
  int64_t src_batch = 0, src_row = 0, src_col = 0, src_rows = 0, src_cols = 0;
  int64_t dst_batch = 0, dst_row = 0, dst_col = 0;
  Keep keep = Keep::kAll;
  const int* info = nullptr;
};
void copy_matrix(const float* src, float* dst, const MatrixCopy& c, cudaStream_t stream);
void copy_matrix(const double* src, double* dst, const MatrixCopy& c, cudaStream_t stream);

// From getrf's 1-based ipiv [batch, k]: pivots [batch, k] (0-based) and the permutation
// [batch, m] that applies them in order to 0..m-1 (as the CPU kernel computes them).
void lu_pivots(const int* ipiv, int64_t batch, int64_t m, int64_t k, int32_t* pivots,
               int32_t* permutation, cudaStream_t stream);

}  // namespace graft::cuda::decomp
