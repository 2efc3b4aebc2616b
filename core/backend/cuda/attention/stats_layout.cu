// One thread per element; these arrays are [B, T, H], small next to attention's products.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "core/backend/cuda/attention/stats_layout.h"

namespace graft::cuda::attention {
namespace {

constexpr int kThreads = 256;

__device__ float to_f32(float x) { return x; }
__device__ float to_f32(double x) { return static_cast<float>(x); }
__device__ float to_f32(__half x) { return __half2float(x); }
__device__ float to_f32(__nv_bfloat16 x) { return __bfloat162float(x); }
template <typename T>
__device__ T from_f32(float x);
template <>
__device__ float from_f32<float>(float x) {
  return x;
}
template <>
__device__ double from_f32<double>(float x) {
  return x;
}
template <>
__device__ __half from_f32<__half>(float x) {
  return __float2half_rn(x);
}
template <>
__device__ __nv_bfloat16 from_f32<__nv_bfloat16>(float x) {
  return __float2bfloat16_rn(x);
}

// i runs over [B, T, H]; its [B, H, T] index is ((b * H + h) * T + t).
__device__ int64_t bht_index(int64_t i, int64_t T, int64_t H) {
  const int64_t h = i % H, t = (i / H) % T, b = i / (H * T);
  return (b * H + h) * T + t;
}

template <typename T>
__global__ void to_lse(int64_t n, int64_t Tq, int64_t H, const float* stats, T* lse) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x;
  if (i < n) lse[i] = from_f32<T>(stats[bht_index(i, Tq, H)]);
}

template <typename T>
__global__ void to_stats(int64_t n, int64_t Tq, int64_t H, const T* lse, float* stats) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x;
  if (i < n) stats[bht_index(i, Tq, H)] = to_f32(lse[i]);
}

template <typename T>
cudaError_t run(bool forward, int64_t n, int64_t Tq, int64_t H, const void* src, void* dst,
                cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  const unsigned grid = static_cast<unsigned>((n + kThreads - 1) / kThreads);
  if (forward) {
    to_lse<T><<<grid, kThreads, 0, stream>>>(n, Tq, H, static_cast<const float*>(src),
                                             static_cast<T*>(dst));
  } else {
    to_stats<T><<<grid, kThreads, 0, stream>>>(n, Tq, H, static_cast<const T*>(src),
                                               static_cast<float*>(dst));
  }
  return cudaGetLastError();
}

cudaError_t dispatch(Elem e, bool forward, int64_t n, int64_t Tq, int64_t H, const void* src,
                     void* dst, cudaStream_t stream) {
  switch (e) {
    case Elem::kF16:
      return run<__half>(forward, n, Tq, H, src, dst, stream);
    case Elem::kBF16:
      return run<__nv_bfloat16>(forward, n, Tq, H, src, dst, stream);
    case Elem::kF32:
      return run<float>(forward, n, Tq, H, src, dst, stream);
    case Elem::kF64:
      return run<double>(forward, n, Tq, H, src, dst, stream);
  }
  return cudaErrorInvalidValue;
}

}  // namespace

cudaError_t stats_to_lse(Elem e, int64_t B, int64_t T, int64_t H, const float* stats, void* lse,
                         cudaStream_t stream) {
  return dispatch(e, true, B * T * H, T, H, stats, lse, stream);
}

cudaError_t lse_to_stats(Elem e, int64_t B, int64_t T, int64_t H, const void* lse, float* stats,
                         cudaStream_t stream) {
  return dispatch(e, false, B * T * H, T, H, lse, stats, stream);
}

}  // namespace graft::cuda::attention
