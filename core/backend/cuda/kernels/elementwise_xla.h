// Device ports of XLA:CPU's f32 log, log1p, erf and erf_inv (core/primitives/xla_math.cc),
// operation for operation: the host code marks with std::fmaf exactly the multiply-adds XLA
// fuses and compiles with fp-contract=off, so here every operation is an explicit
// round-to-nearest intrinsic (__fmaf_rn where the host has fmaf, __fmul_rn / __fadd_rn / ...
// elsewhere), which nvcc never contracts. The results are the CPU's bits, which are JAX's
// (jax.random's normal / truncated_normal / gumbel draws depend on them).
// Also erf_inv for f64 (elementwise_math.h's erf_inv_f64: Newton-refined Giles).
// nvcc only.
#pragma once

#ifndef __CUDACC__
#error "elementwise_xla.h holds CUDA device code: include it from .cu files only"
#endif

#include <cuda_runtime.h>

#include <cstdint>

namespace graft::cuda::ew {

__device__ __forceinline__ float xla_log_f32(float x) {
  constexpr float kMinNormal = 1.17549435e-38f;
  const float kInf = __int_as_float(0x7f800000);
  const float kNaN = __int_as_float(0x7fc00000);
  const bool sub = x < kMinNormal;
  float t = sub ? __fmul_rn(x, 33554432.0f) : x;
  t = t > kMinNormal ? t : kMinNormal;
  float e =
      __fadd_rn(1.0f, static_cast<float>(static_cast<int32_t>(__float_as_uint(t) >> 23) - 127));
  e = sub ? __fsub_rn(e, 25.0f) : e;
  t = __uint_as_float((__float_as_uint(t) & 0x807FFFFFu) | 0x3F000000u);  // in [0.5, 1)
  const bool m = t < 0.707106781186547524f;
  const float t1 = m ? t : 0.0f;
  t = __fsub_rn(t, 1.0f);
  e = __fsub_rn(e, m ? 1.0f : 0.0f);
  t = __fadd_rn(t, t1);
  const float x2 = __fmul_rn(t, t);
  const float x3 = __fmul_rn(x2, t);
  float y = __fmaf_rn(t, 7.0376836292E-2f, -1.1514610310E-1f);
  float y1 = __fmaf_rn(t, -1.2420140846E-1f, 1.4249322787E-1f);
  float y2 = __fmaf_rn(t, 2.0000714765E-1f, -2.4999993993E-1f);
  y = __fmaf_rn(y, t, 1.1676998740E-1f);
  y1 = __fmaf_rn(y1, t, -1.6668057665E-1f);
  y2 = __fmaf_rn(y2, t, 3.3333331174E-1f);
  y = __fmaf_rn(y, x3, y1);
  y = __fmaf_rn(y, x3, y2);
  y = __fmaf_rn(y, x3, __fmul_rn(-2.12194440e-4f, e));
  t = __fsub_rn(t, __fmul_rn(0.5f, x2));
  t = __fadd_rn(t, y);
  t = __fadd_rn(t, __fmul_rn(0.693359375f, e));
  t = x == 0.0f ? -kInf : t;
  t = x == kInf ? kInf : t;
  return x >= 0.0f ? t : kNaN;  // negative or NaN
}

__device__ __forceinline__ float xla_log1p_f32(float x) {
  float num = 4.5270000862445199635215E-5f;
  num = __fmaf_rn(num, x, 4.9854102823193375972212E-1f);
  num = __fmaf_rn(num, x, 6.5787325942061044846969E0f);
  num = __fmaf_rn(num, x, 2.9911919328553073277375E1f);
  num = __fmaf_rn(num, x, 6.0949667980987787057556E1f);
  num = __fmaf_rn(num, x, 5.7112963590585538103336E1f);
  num = __fmaf_rn(num, x, 2.0039553499201281259648E1f);
  float den = 1.0f;
  den = __fmaf_rn(den, x, 1.5062909083469192043167E1f);
  den = __fmaf_rn(den, x, 8.3047565967967209469434E1f);
  den = __fmaf_rn(den, x, 2.2176239823732856465394E2f);
  den = __fmaf_rn(den, x, 3.0909872225312059774938E2f);
  den = __fmaf_rn(den, x, 2.1642788614495947685003E2f);
  den = __fmaf_rn(den, x, 6.0118660497603843919306E1f);
  const float x2 = __fmul_rn(x, x);
  float s = __fmul_rn(__fmul_rn(x, x2), __fdiv_rn(num, den));
  s = __fmaf_rn(-0.5f, x2, s);
  s = __fadd_rn(x, s);
  const float large = xla_log_f32(__fadd_rn(x, 1.0f));
  return ::fabsf(x) < 0.41421356237309504880f ? s : large;
}

__device__ __forceinline__ float xla_erf_f32(float x) {
  const float x2 = __fmul_rn(x, x);
  float p = __fmaf_rn(x2, 0.00022905065861350646f, 0.0034082910107109506f);
  p = __fmaf_rn(x2, p, 0.050955695062380861f);
  p = __fmaf_rn(x2, p, 0.18520832239976145f);
  p = __fmaf_rn(x2, p, 1.128379143519084f);
  p = __fmul_rn(x, p);
  float q = __fmaf_rn(x2, -1.1791602954361697e-7f, 0.000023547966471313185f);
  q = __fmaf_rn(x2, q, 0.0010179625278914885f);
  q = __fmaf_rn(x2, q, 0.014070470171167667f);
  q = __fmaf_rn(x2, q, 0.11098505178285362f);
  q = __fmaf_rn(x2, q, 0.49746925110067538f);
  q = __fmaf_rn(x2, q, 1.0f);
  const float r = __fdiv_rn(p, q);
  return ::fabsf(x) >= 3.832506856900711f ? ::copysignf(1.0f, x) : r;
}

__device__ __forceinline__ float xla_erf_inv_f32(float x) {
  constexpr float kSmall[] = {2.81022636e-08f,  3.43273939e-07f, -3.5233877e-06f,
                              -4.39150654e-06f, 0.00021858087f,  -0.00125372503f,
                              -0.00417768164f,  0.246640727f,    1.50140941f};
  constexpr float kLarge[] = {-0.000200214257f, 0.000100950558f, 0.00134934322f,
                              -0.00367342844f,  0.00573950773f,  -0.0076224613f,
                              0.00943887047f,   1.00167406f,     2.83297682f};
  const float w = -xla_log1p_f32(__fmul_rn(x, -x));
  const float sqrt_w = __fsqrt_rn(w);
  const bool small = w < 5.0f;
  const float t = small ? __fsub_rn(w, 2.5f) : __fsub_rn(sqrt_w, 3.0f);
  float p = small ? kSmall[0] : kLarge[0];
#pragma unroll
  for (int k = 1; k < 9; ++k) p = __fmaf_rn(p, t, small ? kSmall[k] : kLarge[k]);
  const float r = __fmul_rn(p, x);
  return ::fabsf(x) == 1.0f ? __fmul_rn(x, __int_as_float(0x7f800000)) : r;
}

// Giles' f32 approximation as the host's erf_inv_giles_f32 (a starting point only).
__device__ __forceinline__ float erf_inv_giles_f32(float x) {
  float w = -::log1pf(-x * x);
  float p;
  if (w < 5.0f) {
    w = w - 2.5f;
    p = 2.81022636e-08f;
    p = 3.43273939e-07f + p * w;
    p = -3.5233877e-06f + p * w;
    p = -4.39150654e-06f + p * w;
    p = 0.00021858087f + p * w;
    p = -0.00125372503f + p * w;
    p = -0.00417768164f + p * w;
    p = 0.246640727f + p * w;
    p = 1.50140941f + p * w;
  } else {
    w = ::sqrtf(w) - 3.0f;
    p = -0.000200214257f;
    p = 0.000100950558f + p * w;
    p = 0.00134934322f + p * w;
    p = -0.00367342844f + p * w;
    p = 0.00573950773f + p * w;
    p = -0.0076224613f + p * w;
    p = 0.00943887047f + p * w;
    p = 1.00167406f + p * w;
    p = 2.83297682f + p * w;
  }
  if (::fabsf(x) == 1.0f) return x * __int_as_float(0x7f800000);
  return p * x;
}

// erf^-1 for f64: three Newton steps from Giles' f32 estimate, as the CPU.
__device__ __forceinline__ double erf_inv_f64(double x) {
  if (::fabs(x) >= 1.0) {
    return ::fabs(x) == 1.0 ? x * __longlong_as_double(0x7ff0000000000000LL)
                            : __longlong_as_double(0x7ff8000000000000LL);
  }
  double y = erf_inv_giles_f32(static_cast<float>(x));
  constexpr double kTwoOverSqrtPi = 1.1283791670955125738961589;
#pragma unroll 1
  for (int i = 0; i < 3; ++i) {
    const double err = ::erf(y) - x;
    y -= err / (kTwoOverSqrtPi * ::exp(-y * y));
  }
  return y;
}

}  // namespace graft::cuda::ew
