// The elementwise ops on one value, on the device (nvcc only): DeviceOp<PrimitiveId::kX> is the
// device twin of the CPU functor ew::X (core/primitives/elementwise_{unary,binary}_ops.h, which
// use Eigen and cannot run on a GPU), one specialization per Unary / Binary row of
// core/primitives/list.h; elementwise_table.h dispatches over them, generated from the list,
// and fails the build when a row has no DeviceOp here. apply() takes the computed type of each
// dtype the row accepts (f32 for f16 / bf16, double, the integers, bool) and returns the same
// type, or bool for the rows with kBoolOut (comparisons, is_finite). Semantics, op by op:
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

// T's bits as an unsigned value of at least unsigned int: narrower unsigned types would
// promote to (signed) int, where u16 * u16 overflows.
template <typename T>
using WrapU = std::common_type_t<std::make_unsigned_t<T>, unsigned>;
template <typename T>
__device__ __forceinline__ WrapU<T> wrap_u(T x) {
  return static_cast<WrapU<T>>(static_cast<std::make_unsigned_t<T>>(x));
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

// One per Unary / Binary row of core/primitives/list.h (elementwise_table.h checks).
template <P id>
struct DeviceOp;

// ---- unary ----

template <>
struct DeviceOp<P::kNeg> {
  template <typename C>
  __device__ __forceinline__ static C apply(C x) {
    if constexpr (std::is_floating_point_v<C>)
      return -x;
    else
      return static_cast<C>(WrapU<C>(0) - wrap_u(x));  // integers wrap
  }
};

template <>
struct DeviceOp<P::kAbs> {
  template <typename C>
  __device__ __forceinline__ static C apply(C x) {
    if constexpr (std::is_floating_point_v<C>)
      return m_fabs(x);
    else if constexpr (std::is_unsigned_v<C>)
      return x;
    else
      return x < 0 ? static_cast<C>(WrapU<C>(0) - wrap_u(x)) : x;  // abs(MIN) = MIN
  }
};

template <>
struct DeviceOp<P::kSign> {
  template <typename C>
  __device__ __forceinline__ static C apply(C x) {
    if constexpr (std::is_floating_point_v<C>)
      return x > C(0) ? C(1) : (x < C(0) ? C(-1) : x);  // keeps -0 and NaN
    else if constexpr (std::is_unsigned_v<C>)
      return x > 0 ? C(1) : C(0);
    else
      return x > 0 ? C(1) : (x < 0 ? static_cast<C>(-1) : C(0));
  }
};

template <>
struct DeviceOp<P::kExp> {
  template <typename C>
  __device__ __forceinline__ static C apply(C x) {
    if constexpr (std::is_same_v<C, float>) {
      if (x < -87.0f) return static_cast<float>(::exp(static_cast<double>(x)));
    }
    return m_exp(x);
  }
};

template <>
struct DeviceOp<P::kLog> {
  template <typename C>
  __device__ __forceinline__ static C apply(C x) {
    if constexpr (std::is_same_v<C, float>)
      return xla_log_f32(x);
    else
      return m_log(x);
  }
};

template <>
struct DeviceOp<P::kLog1p> {
  template <typename C>
  __device__ __forceinline__ static C apply(C x) {
    if constexpr (std::is_same_v<C, float>)
      return xla_log1p_f32(x);
    else
      return m_log1p(x);
  }
};

template <>
struct DeviceOp<P::kSqrt> {
  template <typename C>
  __device__ __forceinline__ static C apply(C x) {
    return sqrt_rn(x);
  }
};

template <>
struct DeviceOp<P::kRsqrt> {
  template <typename C>
  __device__ __forceinline__ static C apply(C x) {
    return div_rn(C(1), sqrt_rn(x));
  }
};

template <>
struct DeviceOp<P::kSquare> {
  template <typename C>
  __device__ __forceinline__ static C apply(C x) {
    if constexpr (std::is_floating_point_v<C>)
      return x * x;
    else
      return static_cast<C>(wrap_u(x) * wrap_u(x));
  }
};

template <>
struct DeviceOp<P::kLogistic> {
  // 1 / (1 + e^-x), written as e^x / (1 + e^x) below 0 so tiny results keep precision.
  template <typename C>
  __device__ __forceinline__ static C apply(C x) {
    const C e = m_exp(x >= C(0) ? -x : x);
    return x >= C(0) ? div_rn(C(1), C(1) + e) : div_rn(e, C(1) + e);
  }
};

template <>
struct DeviceOp<P::kErf> {
  template <typename C>
  __device__ __forceinline__ static C apply(C x) {
    if constexpr (std::is_same_v<C, float>)
      return xla_erf_f32(x);
    else
      return m_erf(x);
  }
};

template <>
struct DeviceOp<P::kErfInv> {
  template <typename C>
  __device__ __forceinline__ static C apply(C x) {
    if constexpr (std::is_same_v<C, float>)
      return xla_erf_inv_f32(x);
    else
      return erf_inv_f64(x);
  }
};

template <>
struct DeviceOp<P::kIsFinite> {
  template <typename C>
  __device__ __forceinline__ static bool apply(C x) {
    return ::isfinite(x);
  }
};

template <>
struct DeviceOp<P::kNot> {
  template <typename C>
  __device__ __forceinline__ static C apply(C x) {
    if constexpr (std::is_same_v<C, bool>)
      return !x;
    else
      return static_cast<C>(~x);  // bitwise on integers
  }
};

// CUDA's own function of float / double (m_<fn> above).
#define GRAFT_CUDA_MATH_OP(name, fn)          \
  template <>                                 \
  struct DeviceOp<P::k##name> {               \
    template <typename C>                     \
    __device__ __forceinline__ static C apply(C x) {          \
      return m_##fn(x);                       \
    }                                         \
  };
GRAFT_CUDA_MATH_OP(Expm1, expm1)
GRAFT_CUDA_MATH_OP(Sin, sin)
GRAFT_CUDA_MATH_OP(Cos, cos)
GRAFT_CUDA_MATH_OP(Tanh, tanh)
GRAFT_CUDA_MATH_OP(Floor, floor)
GRAFT_CUDA_MATH_OP(Ceil, ceil)
GRAFT_CUDA_MATH_OP(Round, rint)  // half to even
#undef GRAFT_CUDA_MATH_OP

// The f64 function, an f32 value rounded once from it (the CPU's ViaF64).
#define GRAFT_CUDA_VIA_F64_OP(name, fn)                                 \
  template <>                                                           \
  struct DeviceOp<P::k##name> {                                         \
    template <typename C>                                               \
    __device__ __forceinline__ static C apply(C x) {                                    \
      return via_f64(x, [](double v) { return ::fn(v); });              \
    }                                                                   \
  };
GRAFT_CUDA_VIA_F64_OP(Tan, tan)
GRAFT_CUDA_VIA_F64_OP(Atan, atan)
GRAFT_CUDA_VIA_F64_OP(Asin, asin)
GRAFT_CUDA_VIA_F64_OP(Acos, acos)
GRAFT_CUDA_VIA_F64_OP(Sinh, sinh)
GRAFT_CUDA_VIA_F64_OP(Cosh, cosh)
GRAFT_CUDA_VIA_F64_OP(Asinh, asinh)
GRAFT_CUDA_VIA_F64_OP(Acosh, acosh)
GRAFT_CUDA_VIA_F64_OP(Atanh, atanh)
#undef GRAFT_CUDA_VIA_F64_OP

// ---- binary: XLA's integer semantics (wrapping + - *, x / 0 = -1, x % 0 = x, MIN / -1 = MIN,
// MIN % -1 = 0, shifts by >= the width or negative give 0); bool max / or are ||, min / and
// are &&, xor is != ----

template <>
struct DeviceOp<P::kAdd> {
  template <typename C>
  __device__ __forceinline__ static C apply(C a, C b) {
    if constexpr (std::is_floating_point_v<C>)
      return a + b;
    else
      return static_cast<C>(wrap_u(a) + wrap_u(b));
  }
};

template <>
struct DeviceOp<P::kSub> {
  template <typename C>
  __device__ __forceinline__ static C apply(C a, C b) {
    if constexpr (std::is_floating_point_v<C>)
      return a - b;
    else
      return static_cast<C>(wrap_u(a) - wrap_u(b));
  }
};

template <>
struct DeviceOp<P::kMul> {
  template <typename C>
  __device__ __forceinline__ static C apply(C a, C b) {
    if constexpr (std::is_floating_point_v<C>)
      return a * b;
    else
      return static_cast<C>(wrap_u(a) * wrap_u(b));
  }
};

template <>
struct DeviceOp<P::kDiv> {
  template <typename C>
  __device__ __forceinline__ static C apply(C a, C b) {
    if constexpr (std::is_floating_point_v<C>) {
      return div_rn(a, b);
    } else {
      if (b == 0) return static_cast<C>(-1);
      if constexpr (std::is_signed_v<C>) {
        if (b == -1) return static_cast<C>(WrapU<C>(0) - wrap_u(a));
      }
      return static_cast<C>(a / b);
    }
  }
};

template <>
struct DeviceOp<P::kRem> {
  template <typename C>
  __device__ __forceinline__ static C apply(C a, C b) {
    if constexpr (std::is_same_v<C, float>) {
      return ::fmodf(a, b);  // exact: the dividend's sign
    } else if constexpr (std::is_same_v<C, double>) {
      return ::fmod(a, b);
    } else {
      if (b == 0) return a;
      if constexpr (std::is_signed_v<C>) {
        if (b == -1) return C(0);
      }
      return static_cast<C>(a % b);
    }
  }
};

template <>
struct DeviceOp<P::kPow> {
  template <typename C>
  __device__ __forceinline__ static C apply(C a, C b) {
    if constexpr (std::is_same_v<C, float>)
      return static_cast<float>(::pow(static_cast<double>(a), static_cast<double>(b)));
    else if constexpr (std::is_same_v<C, double>)
      return ::pow(a, b);
    else
      return int_pow(a, b);
  }
};

template <>
struct DeviceOp<P::kMax> {
  template <typename C>
  __device__ __forceinline__ static C apply(C a, C b) {
    if constexpr (std::is_same_v<C, bool>)
      return a || b;
    else if constexpr (std::is_floating_point_v<C>)
      return max_value(a, b);
    else
      return a > b ? a : b;
  }
};

template <>
struct DeviceOp<P::kMin> {
  template <typename C>
  __device__ __forceinline__ static C apply(C a, C b) {
    if constexpr (std::is_same_v<C, bool>)
      return a && b;
    else if constexpr (std::is_floating_point_v<C>)
      return min_value(a, b);
    else
      return a < b ? a : b;
  }
};

template <>
struct DeviceOp<P::kAnd> {
  template <typename C>
  __device__ __forceinline__ static C apply(C a, C b) {
    if constexpr (std::is_same_v<C, bool>)
      return a && b;
    else
      return static_cast<C>(a & b);
  }
};

template <>
struct DeviceOp<P::kOr> {
  template <typename C>
  __device__ __forceinline__ static C apply(C a, C b) {
    if constexpr (std::is_same_v<C, bool>)
      return a || b;
    else
      return static_cast<C>(a | b);
  }
};

template <>
struct DeviceOp<P::kXor> {
  template <typename C>
  __device__ __forceinline__ static C apply(C a, C b) {
    if constexpr (std::is_same_v<C, bool>)
      return a != b;
    else
      return static_cast<C>(a ^ b);
  }
};

template <>
struct DeviceOp<P::kShiftLeft> {
  template <typename C>
  __device__ __forceinline__ static C apply(C a, C b) {
    if (wrap_u(b) >= sizeof(C) * 8) return C(0);
    return static_cast<C>(wrap_u(a) << b);
  }
};

template <>
struct DeviceOp<P::kShiftRightLogical> {
  template <typename C>
  __device__ __forceinline__ static C apply(C a, C b) {
    if (wrap_u(b) >= sizeof(C) * 8) return C(0);
    return static_cast<C>(wrap_u(a) >> b);
  }
};

// Comparisons: IEEE (only ne is true on NaN).
#define GRAFT_CUDA_COMPARE_OP(name, op)        \
  template <>                                  \
  struct DeviceOp<P::k##name> {                \
    template <typename C>                      \
    __device__ __forceinline__ static bool apply(C a, C b) {   \
      return a op b;                           \
    }                                          \
  };
GRAFT_CUDA_COMPARE_OP(Eq, ==)
GRAFT_CUDA_COMPARE_OP(Ne, !=)
GRAFT_CUDA_COMPARE_OP(Lt, <)
GRAFT_CUDA_COMPARE_OP(Le, <=)
GRAFT_CUDA_COMPARE_OP(Gt, >)
GRAFT_CUDA_COMPARE_OP(Ge, >=)
#undef GRAFT_CUDA_COMPARE_OP

}  // namespace graft::cuda::ew
