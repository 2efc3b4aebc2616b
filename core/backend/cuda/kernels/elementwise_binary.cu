// launch_binary (elementwise.h): per storage dtype one map kernel switching on the op at run
// time and one for the comparisons (bool out), plus compile-time instantiations of add, sub,
// mul, div, max and min on f32 / bf16 / f16. Operands have the output's shape (graft
// broadcasts with explicit broadcast_in_dim before a binary primitive, so a rank-0 operand
// here means a rank-0 output), exactly as the CPU kernel indexes them. The ops come from
// elementwise_table.h, generated from core/primitives/list.h.
#include "core/backend/cuda/kernels/elementwise.h"
#include "core/backend/cuda/kernels/elementwise_device.h"
#include "core/backend/cuda/kernels/elementwise_table.h"
#include "core/error.h"

namespace graft::cuda {
namespace {

using ew::P;

template <typename T>
struct BinaryFn {
  P op;
  __device__ T operator()(T a, T b) const {
    return ew::narrow<T>(ew::binary_value(op, ew::widen(a), ew::widen(b)));
  }
};

template <P kOp, typename T>
struct BinaryOf {
  __device__ T operator()(T a, T b) const {
    return ew::narrow<T>(ew::binary_value(kOp, ew::widen(a), ew::widen(b)));
  }
};

template <typename T>
struct CompareFn {
  P op;
  __device__ bool operator()(T a, T b) const {
    return ew::compare_value(op, ew::widen(a), ew::widen(b));
  }
};

template <typename T, P... kOps>
bool launch_hot(P op, const T* a, const T* b, T* y, int64_t n, cudaStream_t stream) {
  return ((op == kOps && (ew::launch_map(n, stream, BinaryOf<kOps, T>{}, y, a, b), true)) || ...);
}

template <typename T>
void launch_typed(P op, const void* av, const void* bv, void* yv, int64_t n, cudaStream_t stream) {
  using C = ew::compute_t<T>;
  const T* a = static_cast<const T*>(av);
  const T* b = static_cast<const T*>(bv);
  if (primitive_facts(op).has(kBoolOut)) {
    if constexpr (ew::any_row_takes<C>(OpKind::kBinary, true)) {
      ew::launch_map(n, stream, CompareFn<T>{op}, static_cast<bool*>(yv), a, b);
    }
    return;
  }
  if constexpr (ew::any_row_takes<C>(OpKind::kBinary, false)) {
    T* y = static_cast<T*>(yv);
    if constexpr (std::is_same_v<T, float> || ew::kIsHalf<T>) {
      if (launch_hot<T, P::kAdd, P::kSub, P::kMul, P::kDiv, P::kMax, P::kMin>(op, a, b, y, n,
                                                                              stream)) {
        return;
      }
    }
    ew::launch_map(n, stream, BinaryFn<T>{op}, y, a, b);
  }
}

}  // namespace

void launch_binary(PrimitiveId op, DType dtype, const void* a, const void* b, void* y, int64_t n,
                   cudaStream_t stream) {
  const PrimitiveFacts& facts = primitive_facts(op);
  if (facts.kind != OpKind::kBinary || !dtype_in_class(facts.dtypes, dtype)) {
    graft::fail(kPrimitiveNames[static_cast<int>(op)], "has no CUDA kernel for ",
                dtype_name(dtype));
  }
  if (n <= 0) return;
  dispatch_dtype(dtype, [&]<typename T>() { launch_typed<T>(op, a, b, y, n, stream); });
}

}  // namespace graft::cuda
