// Device kernels of the factorizations (see decomp_device.h): grid-stride loops, simple on
// purpose (they move each matrix once around a cuSOLVER call that dominates the time).
#include <cmath>
#include <cstdint>

#include "core/backend/cuda/decomp/decomp_device.h"

namespace graft::cuda::decomp {
namespace {

constexpr int kThreads = 256;

unsigned blocks_for(int64_t n) {
  const int64_t b = (n + kThreads - 1) / kThreads;
  return static_cast<unsigned>(b < 65536 ? (b > 0 ? b : 1) : 65536);
}

template <typename T>
__global__ void copy_matrix_kernel(const T* src, T* dst, MatrixCopy c) {
  const int64_t per = c.rows * c.cols, n = c.batch * per;
  for (int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; e < n;
       e += int64_t(gridDim.x) * blockDim.x) {
    const int64_t b = e / per, i = (e % per) / c.cols, j = e % c.cols;
    T v;
    const bool outside = (c.keep == Keep::kUpper && j < i) || (c.keep == Keep::kLower && j > i);
    if (outside) {
      v = T(0);
    } else if (c.info != nullptr && c.info[b] != 0) {
      v = T(NAN);
    } else if (src == nullptr) {
      v = T(i == j ? 1 : 0);
    } else if (i >= c.src_rows || j >= c.src_cols) {
      v = T(0);
    } else {
      v = src[b * c.src_batch + i * c.src_row + j * c.src_col];
    }
    dst[b * c.dst_batch + i * c.dst_row + j * c.dst_col] = v;
  }
}

template <typename T>
void launch_copy(const T* src, T* dst, const MatrixCopy& c, cudaStream_t stream) {
  const int64_t n = c.batch * c.rows * c.cols;
  if (n == 0) return;
  copy_matrix_kernel<T><<<blocks_for(n), kThreads, 0, stream>>>(src, dst, c);
}

// One thread per matrix: the swaps are sequential by nature.
__global__ void lu_pivots_kernel(const int* ipiv, int64_t batch, int64_t m, int64_t k,
                                 int32_t* pivots, int32_t* perm) {
  for (int64_t b = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; b < batch;
       b += int64_t(gridDim.x) * blockDim.x) {
    int32_t* pm = perm + b * m;
    for (int64_t i = 0; i < m; ++i) pm[i] = static_cast<int32_t>(i);
    for (int64_t i = 0; i < k; ++i) {
      int32_t p = ipiv[b * k + i] - 1;  // cuSOLVER counts from 1, as LAPACK
      if (p < 0 || p >= m) p = static_cast<int32_t>(i);  // never index outside (a failed call)
      pivots[b * k + i] = p;
      const int32_t t = pm[i];
      pm[i] = pm[p];
      pm[p] = t;
    }
  }
}

}  // namespace

void copy_matrix(const float* src, float* dst, const MatrixCopy& c, cudaStream_t stream) {
  launch_copy(src, dst, c, stream);
}
void copy_matrix(const double* src, double* dst, const MatrixCopy& c, cudaStream_t stream) {
  launch_copy(src, dst, c, stream);
}

void lu_pivots(const int* ipiv, int64_t batch, int64_t m, int64_t k, int32_t* pivots,
               int32_t* permutation, cudaStream_t stream) {
  if (batch == 0 || m == 0) return;
  lu_pivots_kernel<<<blocks_for(batch), kThreads, 0, stream>>>(ipiv, batch, m, k, pivots,
                                                               permutation);
}

}  // namespace graft::cuda::decomp
