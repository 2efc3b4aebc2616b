// The elementwise ops by run-time primitive id, on the device (nvcc only), generated from the
// Unary / Binary rows of core/primitives/list.h as the CPU's table is
// (core/primitives/elementwise_ops.h): each row's case applies its DeviceOp
// (elementwise_scalar.h), so a kernel given a run-time op handles every op of its dtype in one
// instantiation, and one given a compile-time op folds the switch away. A row without a
// DeviceOp fails the build here, naming the row; a row's DeviceOp must compile for every dtype
// the row accepts, since every accepted (op, dtype) pair is instantiated.
#pragma once

#ifndef __CUDACC__
#error "elementwise_table.h holds CUDA device code: include it from .cu files only"
#endif

#include <type_traits>

#include "core/backend/cuda/kernels/elementwise.h"
#include "core/backend/cuda/kernels/elementwise_scalar.h"
#include "core/dtype/dtype.h"
#include "core/primitives/list.h"

namespace graft::cuda::ew {

template <P id>
concept HasDeviceOp = requires { sizeof(DeviceOp<id>); };

#define GRAFT_CUDA_CHECK_OP(name)                                                          \
  static_assert(HasDeviceOp<P::k##name>,                                                   \
                #name ": this Unary / Binary row of core/primitives/list.h has no CUDA "   \
                      "device functor: define DeviceOp<PrimitiveId::k" #name               \
                      "> in core/backend/cuda/kernels/elementwise_scalar.h");
#define GRAFT_CUDA_CHECK_ROW(name, str, family, kind, ...) \
  GRAFT_IF_##kind(GRAFT_CUDA_CHECK_OP, GRAFT_CUDA_CHECK_OP, name)
GRAFT_PRIMITIVES(GRAFT_CUDA_CHECK_ROW)
#undef GRAFT_CUDA_CHECK_ROW
#undef GRAFT_CUDA_CHECK_OP

// Whether row `id` takes values computed in C (f32 stands for f16 / bf16: both floating) and
// whether its result is bool: host constants, read by the device code below.
template <P id, typename C>
inline constexpr bool kTakes = dtype_in_class(primitive_facts(id).dtypes, dtype_v<C>);
template <P id>
inline constexpr bool kBoolResult = primitive_facts(id).has(kBoolOut);

// Whether any row of `kind` with (or without) a bool result takes C: the dtypes a launcher
// instantiates kernels for.
template <typename C>
constexpr bool any_row_takes(OpKind kind, bool bool_result) {
  for (const PrimitiveFacts& f : kPrimitiveFacts) {
    if (f.kind == kind && f.has(kBoolOut) == bool_result && dtype_in_class(f.dtypes, dtype_v<C>))
      return true;
  }
  return false;
}

// In each function below, the value after the switch is never produced: launch_unary and
// launch_binary (elementwise.h) admit only rows of their kind on dtypes of the row's class,
// and throw graft::Error for anything else before any kernel runs.

// Each function's cases: one per Unary or Binary row (GRAFT_CUDA_NONE drops the other kind).
#define GRAFT_CUDA_NONE(name)

// y = op(x) for the Unary rows with a result of x's type.
template <typename C>
__device__ __forceinline__ C unary_value(P op, C x) {
  switch (op) {
#define GRAFT_CUDA_UNARY_CASE(name)                                              \
  case P::k##name:                                                               \
    if constexpr (!kBoolResult<P::k##name> && kTakes<P::k##name, C>) {           \
      return DeviceOp<P::k##name>::apply(x);                                     \
    }                                                                            \
    break;
#define GRAFT_CUDA_ROW(name, str, family, kind, ...) \
  GRAFT_IF_##kind(GRAFT_CUDA_UNARY_CASE, GRAFT_CUDA_NONE, name)
    GRAFT_PRIMITIVES(GRAFT_CUDA_ROW)
#undef GRAFT_CUDA_ROW
#undef GRAFT_CUDA_UNARY_CASE
    default:
      break;
  }
  return x;
}

// op(x) for the Unary rows with a bool result (is_finite).
template <typename C>
__device__ __forceinline__ bool unary_predicate(P op, C x) {
  switch (op) {
#define GRAFT_CUDA_PREDICATE_CASE(name)                                          \
  case P::k##name:                                                               \
    if constexpr (kBoolResult<P::k##name> && kTakes<P::k##name, C>) {            \
      return DeviceOp<P::k##name>::apply(x);                                     \
    }                                                                            \
    break;
#define GRAFT_CUDA_ROW(name, str, family, kind, ...) \
  GRAFT_IF_##kind(GRAFT_CUDA_PREDICATE_CASE, GRAFT_CUDA_NONE, name)
    GRAFT_PRIMITIVES(GRAFT_CUDA_ROW)
#undef GRAFT_CUDA_ROW
#undef GRAFT_CUDA_PREDICATE_CASE
    default:
      break;
  }
  return false;
}

// y = op(a, b) for the Binary rows with a result of the operands' type.
template <typename C>
__device__ __forceinline__ C binary_value(P op, C a, C b) {
  switch (op) {
#define GRAFT_CUDA_BINARY_CASE(name)                                             \
  case P::k##name:                                                               \
    if constexpr (!kBoolResult<P::k##name> && kTakes<P::k##name, C>) {           \
      return DeviceOp<P::k##name>::apply(a, b);                                  \
    }                                                                            \
    break;
#define GRAFT_CUDA_ROW(name, str, family, kind, ...) \
  GRAFT_IF_##kind(GRAFT_CUDA_NONE, GRAFT_CUDA_BINARY_CASE, name)
    GRAFT_PRIMITIVES(GRAFT_CUDA_ROW)
#undef GRAFT_CUDA_ROW
#undef GRAFT_CUDA_BINARY_CASE
    default:
      break;
  }
  return a;
}

// op(a, b) for the Binary rows with a bool result (the comparisons).
template <typename C>
__device__ __forceinline__ bool compare_value(P op, C a, C b) {
  switch (op) {
#define GRAFT_CUDA_COMPARE_CASE(name)                                            \
  case P::k##name:                                                               \
    if constexpr (kBoolResult<P::k##name> && kTakes<P::k##name, C>) {            \
      return DeviceOp<P::k##name>::apply(a, b);                                  \
    }                                                                            \
    break;
#define GRAFT_CUDA_ROW(name, str, family, kind, ...) \
  GRAFT_IF_##kind(GRAFT_CUDA_NONE, GRAFT_CUDA_COMPARE_CASE, name)
    GRAFT_PRIMITIVES(GRAFT_CUDA_ROW)
#undef GRAFT_CUDA_ROW
#undef GRAFT_CUDA_COMPARE_CASE
    default:
      break;
  }
  return false;
}
#undef GRAFT_CUDA_NONE

}  // namespace graft::cuda::ew
