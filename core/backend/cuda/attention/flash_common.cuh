// Device helpers shared by flash_forward.cu and flash_backward.cu (flash_attention.h): element
// conversions, warp reductions, the kernels' geometry and shared-memory tile loads. Each block
// runs kThreads threads over tiles in shared memory (row stride D + 1, so that threads reading
// different rows hit different banks); element loops are flat (thread i takes elements i,
// i + kThreads, ...), which keeps every D and tile size on one code path. Correctness first:
// no tensor cores, no register blocking. Included by .cu files only.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "core/backend/cuda/attention/flash_attention.h"

namespace graft::cuda::attention {
namespace {

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;

__device__ int64_t imin(int64_t a, int64_t b) { return a < b ? a : b; }
__device__ int64_t imax(int64_t a, int64_t b) { return a > b ? a : b; }
template <typename A>
__device__ A load(const float* p) {
  return static_cast<A>(*p);
}
template <typename A>
__device__ A load(const double* p) {
  return static_cast<A>(*p);
}
template <typename A>
__device__ A load(const __half* p) {
  return static_cast<A>(__half2float(*p));
}
template <typename A>
__device__ A load(const __nv_bfloat16* p) {
  return static_cast<A>(__bfloat162float(*p));
}

__device__ void store(float* p, float x) { *p = x; }
__device__ void store(double* p, double x) { *p = x; }
__device__ void store(__half* p, float x) { *p = __float2half_rn(x); }
__device__ void store(__nv_bfloat16* p, float x) { *p = __float2bfloat16_rn(x); }

__device__ float exp_acc(float x) { return expf(x); }
__device__ double exp_acc(double x) { return exp(x); }
__device__ float log_acc(float x) { return logf(x); }
__device__ double log_acc(double x) { return log(x); }

template <typename A>
__device__ A neg_inf() {
  return -static_cast<A>(INFINITY);
}

template <typename A>
__device__ A warp_max(A v) {
  for (int o = 16; o > 0; o >>= 1) v = max(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}
template <typename A>
__device__ A warp_sum(A v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

struct Geo {
  int64_t B, T, H, S, KV, D, G;
  double scale;
  int bq, bk, dp;  // tiles, padded row stride
};

// rows [0, n) of a [n, D] tile whose row r is at src + r * row_stride: dst[r * dp + d] =
// mul * src.
template <typename T, typename A>
__device__ void load_tile(A* dst, const T* src, int64_t row_stride, int n, const Geo& g, A mul) {
  const int D = static_cast<int>(g.D);
  for (int i = threadIdx.x; i < n * D; i += kThreads) {
    const int r = i / D, d = i - r * D;
    dst[r * g.dp + d] = load<A>(src + r * row_stride + d) * mul;
  }
}

template <typename A>
__device__ A dot(const A* a, const A* b, int D) {
  A acc = 0;
  for (int d = 0; d < D; ++d) acc += a[d] * b[d];
  return acc;
}

Geo geo(const FlashGeometry& f, const FlashTiles& t) {
  return {
      f.B, f.T, f.H, f.S, f.KV, f.D, f.H / f.KV, f.scale, t.bq, t.bk, static_cast<int>(f.D) + 1};
}

int64_t blocks(int64_t n, int64_t tile) { return (n + tile - 1) / tile; }

// Checks the grid and lets `kernel` use `smem` bytes of dynamic shared memory (above 48 KiB
// a kernel must opt in).
template <typename K>
cudaError_t prepare(K kernel, int64_t grid, size_t smem) {
  if (grid > 0x7fffffff) return cudaErrorInvalidConfiguration;
  return cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                              static_cast<int>(smem));
}

}  // namespace
}  // namespace graft::cuda::attention
