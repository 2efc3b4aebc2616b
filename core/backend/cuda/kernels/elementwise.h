// Launchers of the CUDA elementwise kernels (the "elementwise" family of
// core/primitives/list.h). Each enqueues one kernel on `stream` and returns; nothing is
// synchronized. Pointers are device memory holding n dense elements; an output may be the same
// buffer as an input (the kInPlace primitives), but must not overlap it otherwise.
//
// Semantics are the CPU kernels' (core/backend/cpu/elementwise_kernels.cc, the functors of
// core/primitives/elementwise_{unary,binary}_ops.h): f16 / bf16 compute in f32 and round once
// to nearest even (core/dtype/half.h's rounding, NaN quieting included); integer arithmetic wraps,
// x / 0 = -1, x % 0 = x, MIN / -1 = MIN, shifts by >= the width give 0; max / min propagate
// NaN and order -0 below +0; f32 log, log1p, erf and erf_inv are XLA's algorithms bit for bit
// (core/primitives/xla_math.cc); other transcendental functions are within a few ulp.
//
// Errors: an op / dtype pair the primitive does not accept, or a failed launch, throws
// graft::Error. Built only with --config=cuda.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "core/dtype/dtype.h"
#include "core/primitives/list.h"

namespace graft::cuda {

// Whether dtype `d` belongs to class `c` (as graft::accepts in core/primitives/elementwise.h).
constexpr bool dtype_in_class(DTypeClass c, DType d) {
  const bool fl = d == DType::kF16 || d == DType::kBF16 || d == DType::kF32 || d == DType::kF64;
  const bool b = d == DType::kBool;
  switch (c) {
    case DTypeClass::kAny:
      return true;
    case DTypeClass::kNumeric:
      return !b;
    case DTypeClass::kFloating:
      return fl;
    case DTypeClass::kIntegral:
      return !fl && !b;
    case DTypeClass::kBoolOrIntegral:
      return !fl;
  }
  return false;
}

// y = op(x) for a Unary row `op`; x has `dtype`, y the same (bool for is_finite).
void launch_unary(PrimitiveId op, DType dtype, const void* x, void* y, int64_t n,
                  cudaStream_t stream);

// y = op(a, b) for a Binary row `op`; a and b have `dtype`, y the same (bool for comparisons).
void launch_binary(PrimitiveId op, DType dtype, const void* a, const void* b, void* y, int64_t n,
                   cudaStream_t stream);

// select_n(pred, on_false, on_true): y[i] = pred[i] ? on_true[i] : on_false[i], elements of
// `dtype`, c64 / c128 included (pred: bool, one byte each, 0 or 1).
void launch_select(DType dtype, const bool* pred, const void* on_false, const void* on_true,
                   void* y, int64_t n, cudaStream_t stream);

// convert_element_type: XLA's conversion (core/dtype/convert.h): float -> int saturates (NaN -> 0),
// -> bool is x != 0, int -> narrower int wraps, -> f16 / bf16 rounds to nearest even (f64
// through f32, as the CPU); real -> c64 / c128 is (x, 0), complex -> real keeps the real part
// (converted as above), c64 <-> c128 converts both parts; -> fp8 rounds to nearest even once
// (core/dtype/float8.h). from == to copies.
void launch_convert(DType from, DType to, const void* x, void* y, int64_t n, cudaStream_t stream);

}  // namespace graft::cuda
