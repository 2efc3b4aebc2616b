// Float ops whose edge cases JAX pins down exactly, shared by the unfused kernels and the fused
// interpreter (fusion_codegen.cc emits the same operations), so every path gives the same bits:
//  - sqrt is correctly rounded (IEEE sqrt instruction). Eigen's AVX packet sqrt under
//    EIGEN_FAST_MATH is rsqrt plus one Newton step: 1 ulp off for 10 of sqrt(1..31) and NaN
//    at +inf. rsqrt is 1 / sqrt(x) (two IEEE operations, the same on every CPU and in every
//    lane; XLA's approximation is not correctly rounded either, and rsqrtps differs between
//    vendors): rsqrt(+inf) = 0, rsqrt(+-0) = +-inf, negative -> NaN, as JAX.
//  - max / min propagate a NaN (the first operand's if both are) and order -0 below +0:
//    max(0, -0) = max(-0, 0) = +0, min(0, -0) = min(-0, 0) = -0, as lax.max / lax.min.
//  - sign(+-0) is +-0 and sign(NaN) is NaN (the operand itself), as jnp.sign.
#pragma once

#include <immintrin.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <type_traits>

namespace graft::cpu {

inline void sqrt_f32(const float* x, float* y, int64_t n) {
  int64_t i = 0;
#ifdef __AVX__
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, _mm256_sqrt_ps(_mm256_loadu_ps(x + i)));
#endif
  for (; i < n; ++i) y[i] = std::sqrt(x[i]);  // sqrtss: the same bits
}

inline void rsqrt_f32(const float* x, float* y, int64_t n) {
  int64_t i = 0;
#ifdef __AVX__
  const __m256 one = _mm256_set1_ps(1.0f);
  for (; i + 8 <= n; i += 8) {
    _mm256_storeu_ps(y + i, _mm256_div_ps(one, _mm256_sqrt_ps(_mm256_loadu_ps(x + i))));
  }
#endif
  for (; i < n; ++i) y[i] = 1.0f / std::sqrt(x[i]);
}

// f64 (and any other type): the scalar IEEE operations.
template <typename C>
void sqrt_values(const C* x, C* y, int64_t n) {
  if constexpr (std::is_same_v<C, float>) {
    sqrt_f32(x, y, n);
  } else {
    for (int64_t i = 0; i < n; ++i) y[i] = std::sqrt(x[i]);
  }
}
template <typename C>
void rsqrt_values(const C* x, C* y, int64_t n) {
  if constexpr (std::is_same_v<C, float>) {
    rsqrt_f32(x, y, n);
  } else {
    for (int64_t i = 0; i < n; ++i) y[i] = C(1) / std::sqrt(x[i]);
  }
}

// The bits of x & y (max of two equal values: -0 only if both are) or x | y (min).
template <typename C>
C and_bits(C x, C y) {
  using U = std::conditional_t<sizeof(C) == 8, uint64_t, uint32_t>;
  return std::bit_cast<C>(static_cast<U>(std::bit_cast<U>(x) & std::bit_cast<U>(y)));
}
template <typename C>
C or_bits(C x, C y) {
  using U = std::conditional_t<sizeof(C) == 8, uint64_t, uint32_t>;
  return std::bit_cast<C>(static_cast<U>(std::bit_cast<U>(x) | std::bit_cast<U>(y)));
}

template <typename C>
C max_value(C x, C y) {
  if (std::isnan(x)) return x;
  if (x == y) return and_bits(x, y);
  return x > y ? x : y;  // y when y is NaN
}
template <typename C>
C min_value(C x, C y) {
  if (std::isnan(x)) return x;
  if (x == y) return or_bits(x, y);
  return x < y ? x : y;
}

template <typename C>
C sign_value(C x) {
  return x > 0 ? C(1) : (x < 0 ? C(-1) : x);
}

}  // namespace graft::cpu
