// Device-side building blocks of the CUDA elementwise kernels (nvcc only; the reduce and
// random kernels use them too):
//  - f16 / bf16 storage widened to f32 and rounded back exactly as core/dtype/half.h does on the
//    host (round to nearest even, subnormals, overflow to inf, NaN -> quiet NaN with
//    f16: sign | 0x7e00, bf16: the top half | 0x40), so GPU and CPU round to the same bits;
//  - widen / narrow between a storage type and the type arithmetic happens in;
//  - map kernels: y[i] = f(x[i]...) over n elements, grid-stride, with 16-byte vector loads and
//    stores when every pointer is aligned for them (scalar loop otherwise, and for the tail).
// Threading: launch_map enqueues on the given stream and returns; errors throw graft::Error.
#pragma once

#ifndef __CUDACC__
#error "elementwise_device.h holds CUDA device code: include it from .cu files only"
#endif

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "core/backend/cuda/runtime/check.h"
#include "core/dtype/half.h"

namespace graft::cuda::ew {

// ---- f16 / bf16: bit-exact ports of core/dtype/half.h (explicit _rn intrinsics) ----

__device__ __forceinline__ float f16_to_float(uint16_t h) {
  const uint32_t sign = (h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1fu;
  const uint32_t mant = h & 0x3ffu;
  if (exp == 0x1f) return __uint_as_float(sign | 0x7f800000u | (mant << 13));
  if (exp == 0) {
    const float v = __fmul_rn(static_cast<float>(mant), 1.0f / 16777216.0f);
    return sign ? -v : v;
  }
  return __uint_as_float(sign | ((exp + 112) << 23) | (mant << 13));
}

__device__ __forceinline__ uint16_t float_to_f16(float f) {
  const uint32_t x = __float_as_uint(f);
  const uint32_t sign = (x >> 16) & 0x8000u;
  uint32_t abs = x & 0x7fffffffu;
  if (abs >= 0x7f800000u) {  // inf or NaN (any NaN becomes sign | 0x7e00)
    return static_cast<uint16_t>(sign | 0x7c00u | (abs > 0x7f800000u ? 0x200u : 0u));
  }
  if (abs >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // rounds to inf
  if (abs < 0x38800000u) {  // subnormal or zero in f16: scale the lsb to 1.0, round (RNE)
    const float a = __fmul_rn(__uint_as_float(abs), 16777216.0f);
    const float r = __fsub_rn(__fadd_rn(a, 8388608.0f), 8388608.0f);
    return static_cast<uint16_t>(sign | static_cast<uint32_t>(r));
  }
  const uint32_t mant_odd = (abs >> 13) & 1u;
  abs += 0xc8000fffu + mant_odd;  // rebias the exponent and round
  return static_cast<uint16_t>(sign | (abs >> 13));
}

__device__ __forceinline__ float bf16_to_float(uint16_t b) {
  return __uint_as_float(static_cast<uint32_t>(b) << 16);
}

__device__ __forceinline__ uint16_t float_to_bf16(float f) {
  uint32_t x = __float_as_uint(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40u);
  x += 0x7fffu + ((x >> 16) & 1u);
  return static_cast<uint16_t>(x >> 16);
}

// ---- storage <-> compute types ----

template <typename T>
inline constexpr bool kIsHalf = std::is_same_v<T, f16> || std::is_same_v<T, bf16>;

// The type values are computed in: f32 for f16 / bf16, the type itself otherwise.
template <typename T>
using compute_t = std::conditional_t<kIsHalf<T>, float, T>;

template <typename T>
__device__ __forceinline__ compute_t<T> widen(T v) {
  if constexpr (std::is_same_v<T, f16>) {
    return f16_to_float(v.bits);
  } else if constexpr (std::is_same_v<T, bf16>) {
    return bf16_to_float(v.bits);
  } else {
    return v;
  }
}

// Rounds (f16 / bf16) or casts a computed value into storage type T.
template <typename T, typename C>
__device__ __forceinline__ T narrow(C v) {
  if constexpr (std::is_same_v<T, f16>) {
    T h;
    h.bits = float_to_f16(static_cast<float>(v));
    return h;
  } else if constexpr (std::is_same_v<T, bf16>) {
    T h;
    h.bits = float_to_bf16(static_cast<float>(v));
    return h;
  } else {
    return static_cast<T>(v);
  }
}

// ---- map kernels ----

// V elements of T, loaded and stored as one (up to 16-byte) vector access.
template <typename T, int V>
struct alignas(sizeof(T) * V) Pack {
  T v[V];
};

// Elements per thread step: 16 bytes of the widest operand.
template <typename R, typename... In>
constexpr int lanes_for() {
  size_t widest = sizeof(R);
  ((widest = sizeof(In) > widest ? sizeof(In) : widest), ...);
  return static_cast<int>(16 / widest);
}

inline constexpr int kThreads = 256;
inline constexpr int64_t kMaxBlocks = 4096;  // grid-stride beyond (16 per SM on an H100)

inline bool aligned_to(const void* p, size_t bytes) {
  return reinterpret_cast<uintptr_t>(p) % bytes == 0;
}
inline int blocks_for(int64_t work) {
  return static_cast<int>(std::clamp<int64_t>((work + kThreads - 1) / kThreads, 1, kMaxBlocks));
}

// Packs [0, n_vec) vectorized, then elements [n_vec * V, n) one by one. Reads of pack i
// happen before its write, so y may be one of the inputs.
template <int V, typename F, typename R, typename A>
__global__ void __launch_bounds__(kThreads)
    map1_kernel(int64_t n, int64_t n_vec, F f, R* y, const A* a) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  const int64_t t = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  for (int64_t i = t; i < n_vec; i += stride) {
    const Pack<A, V> pa = reinterpret_cast<const Pack<A, V>*>(a)[i];
    Pack<R, V> out;
#pragma unroll
    for (int k = 0; k < V; ++k) out.v[k] = f(pa.v[k]);
    reinterpret_cast<Pack<R, V>*>(y)[i] = out;
  }
  for (int64_t i = n_vec * V + t; i < n; i += stride) y[i] = f(a[i]);
}

template <int V, typename F, typename R, typename A, typename B>
__global__ void __launch_bounds__(kThreads)
    map2_kernel(int64_t n, int64_t n_vec, F f, R* y, const A* a, const B* b) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  const int64_t t = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  for (int64_t i = t; i < n_vec; i += stride) {
    const Pack<A, V> pa = reinterpret_cast<const Pack<A, V>*>(a)[i];
    const Pack<B, V> pb = reinterpret_cast<const Pack<B, V>*>(b)[i];
    Pack<R, V> out;
#pragma unroll
    for (int k = 0; k < V; ++k) out.v[k] = f(pa.v[k], pb.v[k]);
    reinterpret_cast<Pack<R, V>*>(y)[i] = out;
  }
  for (int64_t i = n_vec * V + t; i < n; i += stride) y[i] = f(a[i], b[i]);
}

template <int V, typename F, typename R, typename A, typename B, typename C>
__global__ void __launch_bounds__(kThreads)
    map3_kernel(int64_t n, int64_t n_vec, F f, R* y, const A* a, const B* b, const C* c) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  const int64_t t = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  for (int64_t i = t; i < n_vec; i += stride) {
    const Pack<A, V> pa = reinterpret_cast<const Pack<A, V>*>(a)[i];
    const Pack<B, V> pb = reinterpret_cast<const Pack<B, V>*>(b)[i];
    const Pack<C, V> pc = reinterpret_cast<const Pack<C, V>*>(c)[i];
    Pack<R, V> out;
#pragma unroll
    for (int k = 0; k < V; ++k) out.v[k] = f(pa.v[k], pb.v[k], pc.v[k]);
    reinterpret_cast<Pack<R, V>*>(y)[i] = out;
  }
  for (int64_t i = n_vec * V + t; i < n; i += stride) y[i] = f(a[i], b[i], c[i]);
}

// Host side: y[i] = f(in[i]...) for i < n on `stream` (1 to 3 inputs).
template <typename F, typename R, typename... In>
void launch_map(int64_t n, cudaStream_t stream, F f, R* y, const In*... in) {
  static_assert(sizeof...(In) >= 1 && sizeof...(In) <= 3);
  if (n <= 0) return;
  constexpr int V = lanes_for<R, In...>();
  const bool vec =
      aligned_to(y, sizeof(Pack<R, V>)) && (aligned_to(in, sizeof(Pack<In, V>)) && ...);
  const int64_t n_vec = vec ? n / V : 0;
  const int blocks = blocks_for(vec ? n_vec + n % V : n);
  if constexpr (sizeof...(In) == 1) {
    map1_kernel<V><<<blocks, kThreads, 0, stream>>>(n, n_vec, f, y, in...);
  } else if constexpr (sizeof...(In) == 2) {
    map2_kernel<V><<<blocks, kThreads, 0, stream>>>(n, n_vec, f, y, in...);
  } else {
    map3_kernel<V><<<blocks, kThreads, 0, stream>>>(n, n_vec, f, y, in...);
  }
  check(cudaGetLastError(), "elementwise kernel launch");
}

}  // namespace graft::cuda::ew
