// The elementwise ops on one value, on the device (nvcc only): unary_value / binary_value /
// compare_value switch on the primitive id, so a kernel given a run-time op handles every op
// of its dtype in one instantiation, and one given a compile-time op (the hot ones) folds the
// switch away. They mirror the CPU functors of core/primitives/elementwise_{unary,binary}_ops.h
// (which use Eigen and cannot run on a GPU), case by case:
//  - exact ops (neg, abs, sign, square, sqrt, rsqrt = 1 / sqrt, floor, ceil, round half to
//    even, + - * /, fmod, max / min, comparisons, integer and bitwise ops) give the CPU's bits
//    (a NaN's payload aside);
//  - f32 log, log1p, erf, erf_inv: XLA's algorithms (elementwise_xla.h), the CPU's bits;
//  - f32 tan, atan, asin, acos, sinh, cosh, asinh, acosh, atanh, pow: the f64 function rounded
//    once, as the CPU (within an ulp of it); exp, expm1, sin, cos, tanh, logistic: CUDA's
//    functions (a few ulp from the CPU's Eigen ones); exp below -87 is f64 exp rounded, as
//    on the CPU, so subnormal results agree.
#pragma once

#ifndef __CUDACC__
#error "elementwise_scalar.h holds CUDA device code: include it from .cu files only"
#endif

#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

#include "core/backend/cuda/kernels/elementwise_xla.h"
#include "core/primitives/list.h"

namespace graft::cuda::ew {

using P = PrimitiveId;

// The float and double overloads of the libm functions used below.
#define GRAFT_CUDA_MATH(name)                                                 \
  __device__ __forceinline__ float m_##name(float x) { return ::name##f(x); } \
  __device__ __forceinline__ double m_##name(double x) { return ::name(x); }
GRAFT_CUDA_MATH(exp)
GRAFT_CUDA_MATH(expm1)
GRAFT_CUDA_MATH(log)
GRAFT_CUDA_MATH(log1p)
GRAFT_CUDA_MATH(sin)
GRAFT_CUDA_MATH(cos)
GRAFT_CUDA_MATH(tanh)
GRAFT_CUDA_MATH(erf)
GRAFT_CUDA_MATH(floor)
GRAFT_CUDA_MATH(ceil)
GRAFT_CUDA_MATH(rint)
GRAFT_CUDA_MATH(fabs)
#undef GRAFT_CUDA_MATH

__device__ __forceinline__ float sqrt_rn(float x) { return __fsqrt_rn(x); }
__device__ __forceinline__ double sqrt_rn(double x) { return __dsqrt_rn(x); }
__device__ __forceinline__ float div_rn(float a, float b) { return __fdiv_rn(a, b); }
__device__ __forceinline__ double div_rn(double a, double b) { return __ddiv_rn(a, b); }

// f32 through the f64 function, rounded once (the CPU's ViaF64); f64 directly.
template <typename C, typename F>
__device__ __forceinline__ C via_f64(C x, F f) {
  return static_cast<C>(f(static_cast<double>(x)));
}

// max / min: a NaN in x wins, then one in y; equal values combine their bits (so
// max(-0, +0) = +0 and min(-0, +0) = -0 either way round), as the CPU's max_value.
template <typename C>
__device__ __forceinline__ C max_value(C x, C y) {
  if (x != x) return x;
  if (x == y) {
    if constexpr (sizeof(C) == 4)
      return __uint_as_float(__float_as_uint(x) & __float_as_uint(y));
    else
      return __longlong_as_double(__double_as_longlong(x) & __double_as_longlong(y));
  }
  return x > y ? x : y;  // y when y is NaN
}
template <typename C>
__device__ __forceinline__ C min_value(C x, C y) {
  if (x != x) return x;
  if (x == y) {
    if constexpr (sizeof(C) == 4)
      return __uint_as_float(__float_as_uint(x) | __float_as_uint(y));
    else
      return __longlong_as_double(__double_as_longlong(x) | __double_as_longlong(y));
  }
  return x < y ? x : y;
}

template <typename C>
__device__ __forceinline__ C unary_float(P op, C x) {
  constexpr bool kF32 = std::is_same_v<C, float>;
  switch (op) {
    case P::kNeg:
      return -x;
    case P::kAbs:
      return m_fabs(x);
    case P::kSign:
      return x > C(0) ? C(1) : (x < C(0) ? C(-1) : x);
    case P::kExp:
      if constexpr (kF32) {
        if (x < -87.0f) return static_cast<float>(::exp(static_cast<double>(x)));
      }
      return m_exp(x);
    case P::kExpm1:
      return m_expm1(x);
    case P::kLog:
      if constexpr (kF32)
        return xla_log_f32(x);
      else
        return m_log(x);
    case P::kLog1p:
      if constexpr (kF32)
        return xla_log1p_f32(x);
      else
        return m_log1p(x);
    case P::kSqrt:
      return sqrt_rn(x);
    case P::kRsqrt:
      return div_rn(C(1), sqrt_rn(x));
    case P::kSquare:
      return x * x;
    case P::kSin:
      return m_sin(x);
    case P::kCos:
      return m_cos(x);
    case P::kTan:
      return via_f64(x, [](double v) { return ::tan(v); });
    case P::kAtan:
      return via_f64(x, [](double v) { return ::atan(v); });
    case P::kAsin:
      return via_f64(x, [](double v) { return ::asin(v); });
    case P::kAcos:
      return via_f64(x, [](double v) { return ::acos(v); });
    case P::kSinh:
      return via_f64(x, [](double v) { return ::sinh(v); });
    case P::kCosh:
      return via_f64(x, [](double v) { return ::cosh(v); });
    case P::kAsinh:
      return via_f64(x, [](double v) { return ::asinh(v); });
    case P::kAcosh:
      return via_f64(x, [](double v) { return ::acosh(v); });
    case P::kAtanh:
      return via_f64(x, [](double v) { return ::atanh(v); });
    case P::kTanh:
      return m_tanh(x);
    case P::kLogistic: {
      // 1 / (1 + e^-x), written as e^x / (1 + e^x) below 0 so tiny results keep precision.
      const C e = m_exp(x >= C(0) ? -x : x);
      return x >= C(0) ? div_rn(C(1), C(1) + e) : div_rn(e, C(1) + e);
    }
    case P::kErf:
      if constexpr (kF32)
        return xla_erf_f32(x);
      else
        return m_erf(x);
    case P::kErfInv:
      if constexpr (kF32)
        return xla_erf_inv_f32(x);
      else
        return erf_inv_f64(x);
    case P::kFloor:
      return m_floor(x);
    case P::kCeil:
      return m_ceil(x);
    case P::kRound:
      return m_rint(x);  // half to even
    default:
      return x;  // not a float unary op: the launcher rejects it first
  }
}

// T's bits as an unsigned value of at least unsigned int: narrower unsigned types would
// promote to (signed) int, where u16 * u16 overflows.
template <typename T>
using WrapU = std::common_type_t<std::make_unsigned_t<T>, unsigned>;
template <typename T>
__device__ __forceinline__ WrapU<T> wrap_u(T x) {
  return static_cast<WrapU<T>>(static_cast<std::make_unsigned_t<T>>(x));
}

// Integer negation, abs, square wrap (computed unsigned); not is bitwise.
template <typename T>
__device__ __forceinline__ T unary_int(P op, T x) {
  using U = WrapU<T>;
  switch (op) {
    case P::kNeg:
      return static_cast<T>(U(0) - U(x));
    case P::kAbs:
      if constexpr (std::is_unsigned_v<T>)
        return x;
      else
        return x < 0 ? static_cast<T>(U(0) - U(x)) : x;
    case P::kSign:
      if constexpr (std::is_unsigned_v<T>)
        return x > 0 ? T(1) : T(0);
      else
        return x > 0 ? T(1) : (x < 0 ? static_cast<T>(-1) : T(0));
    case P::kSquare:
      return static_cast<T>(wrap_u(x) * wrap_u(x));
    case P::kNot:
      return static_cast<T>(~x);
    default:
      return x;
  }
}

// The op on a computed value (float, double, an integer, or bool: only `not`).
template <typename C>
__device__ __forceinline__ C unary_value(P op, C x) {
  if constexpr (std::is_same_v<C, bool>) {
    return !x;
  } else if constexpr (std::is_floating_point_v<C>) {
    return unary_float(op, x);
  } else {
    return unary_int(op, x);
  }
}

template <typename T>
__device__ __forceinline__ T int_pow(T base, T exp) {
  if constexpr (std::is_signed_v<T>) {
    if (exp < 0) return base == 1 ? T(1) : (base == -1 ? ((exp & 1) ? T(-1) : T(1)) : T(0));
  }
  using U = WrapU<T>;
  U result = 1, b = wrap_u(base);
  for (U e = wrap_u(exp); e != 0; e >>= 1) {
    if (e & 1) result = static_cast<U>(result * b);
    b = static_cast<U>(b * b);
  }
  return static_cast<T>(result);
}

template <typename C>
__device__ __forceinline__ C binary_float(P op, C a, C b) {
  switch (op) {
    case P::kAdd:
      return a + b;
    case P::kSub:
      return a - b;
    case P::kMul:
      return a * b;
    case P::kDiv:
      return div_rn(a, b);
    case P::kRem:
      if constexpr (std::is_same_v<C, float>)
        return ::fmodf(a, b);  // exact: the dividend's sign
      else
        return ::fmod(a, b);
    case P::kPow:
      if constexpr (std::is_same_v<C, float>) {
        return static_cast<float>(::pow(static_cast<double>(a), static_cast<double>(b)));
      } else {
        return ::pow(a, b);
      }
    case P::kMax:
      return max_value(a, b);
    case P::kMin:
      return min_value(a, b);
    default:
      return a;
  }
}

// XLA's integer semantics: wrapping + - *, x / 0 = -1, x % 0 = x, MIN / -1 = MIN, MIN % -1 = 0,
// shifts by >= the width (or negative) give 0.
template <typename T>
__device__ __forceinline__ T binary_int(P op, T a, T b) {
  using U = WrapU<T>;
  switch (op) {
    case P::kAdd:
      return static_cast<T>(wrap_u(a) + wrap_u(b));
    case P::kSub:
      return static_cast<T>(wrap_u(a) - wrap_u(b));
    case P::kMul:
      return static_cast<T>(wrap_u(a) * wrap_u(b));
    case P::kDiv:
      if (b == 0) return static_cast<T>(-1);
      if constexpr (std::is_signed_v<T>) {
        if (b == -1) return static_cast<T>(U(0) - wrap_u(a));
      }
      return static_cast<T>(a / b);
    case P::kRem:
      if (b == 0) return a;
      if constexpr (std::is_signed_v<T>) {
        if (b == -1) return T(0);
      }
      return static_cast<T>(a % b);
    case P::kPow:
      return int_pow(a, b);
    case P::kMax:
      return a > b ? a : b;
    case P::kMin:
      return a < b ? a : b;
    case P::kAnd:
      return static_cast<T>(a & b);
    case P::kOr:
      return static_cast<T>(a | b);
    case P::kXor:
      return static_cast<T>(a ^ b);
    case P::kShiftLeft:
      if (wrap_u(b) >= sizeof(T) * 8) return T(0);
      return static_cast<T>(wrap_u(a) << b);
    case P::kShiftRightLogical:
      if (wrap_u(b) >= sizeof(T) * 8) return T(0);
      return static_cast<T>(wrap_u(a) >> b);
    default:
      return a;
  }
}

// bool: max / or are ||, min / and are &&, xor is !=.
__device__ __forceinline__ bool binary_bool(P op, bool a, bool b) {
  switch (op) {
    case P::kMax:
    case P::kOr:
      return a || b;
    case P::kMin:
    case P::kAnd:
      return a && b;
    case P::kXor:
      return a != b;
    default:
      return a;
  }
}

template <typename C>
__device__ __forceinline__ C binary_value(P op, C a, C b) {
  if constexpr (std::is_same_v<C, bool>) {
    return binary_bool(op, a, b);
  } else if constexpr (std::is_floating_point_v<C>) {
    return binary_float(op, a, b);
  } else {
    return binary_int(op, a, b);
  }
}

// Comparisons: IEEE (only ne is true on NaN).
template <typename C>
__device__ __forceinline__ bool compare_value(P op, C a, C b) {
  switch (op) {
    case P::kEq:
      return a == b;
    case P::kNe:
      return a != b;
    case P::kLt:
      return a < b;
    case P::kLe:
      return a <= b;
    case P::kGt:
      return a > b;
    case P::kGe:
      return a >= b;
    default:
      return false;
  }
}

}  // namespace graft::cuda::ew
