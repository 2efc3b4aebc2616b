// launch_unary (elementwise.h): one map kernel per storage dtype that switches on the op at
// run time (a uniform branch per element), plus compile-time instantiations of the ops a model
// runs most, on f32 / bf16 / f16, so the hot paths carry no switch. f16 / bf16 widen to f32,
// compute, and round once. The rows with a bool result (is_finite) have a kernel of their own.
// The ops come from elementwise_table.h, generated from core/primitives/list.h.
#include "core/backend/cuda/kernels/elementwise.h"
#include "core/backend/cuda/kernels/elementwise_device.h"
#include "core/backend/cuda/kernels/elementwise_table.h"
#include "core/error.h"

namespace graft::cuda {
namespace {

using ew::P;

template <typename T>
struct UnaryFn {
  P op;
  __device__ T operator()(T x) const { return ew::narrow<T>(ew::unary_value(op, ew::widen(x))); }
};

template <P kOp, typename T>
struct UnaryOf {
  __device__ T operator()(T x) const { return ew::narrow<T>(ew::unary_value(kOp, ew::widen(x))); }
};

template <typename T>
struct PredicateFn {
  P op;
  __device__ bool operator()(T x) const { return ew::unary_predicate(op, ew::widen(x)); }
};

// Launches the compile-time instantiation for `op` if it is one of kOps.
template <typename T, P... kOps>
bool launch_hot(P op, const T* x, T* y, int64_t n, cudaStream_t stream) {
  return ((op == kOps && (ew::launch_map(n, stream, UnaryOf<kOps, T>{}, y, x), true)) || ...);
}

template <typename T>
void launch_typed(P op, const void* xv, void* yv, int64_t n, cudaStream_t stream) {
  using C = ew::compute_t<T>;
  const T* x = static_cast<const T*>(xv);
  if (primitive_facts(op).has(kBoolOut)) {
    if constexpr (ew::any_row_takes<C>(OpKind::kUnary, true)) {
      ew::launch_map(n, stream, PredicateFn<T>{op}, static_cast<bool*>(yv), x);
    }
    return;
  }
  if constexpr (ew::any_row_takes<C>(OpKind::kUnary, false)) {
    T* y = static_cast<T*>(yv);
    if constexpr (std::is_same_v<T, float> || ew::kIsHalf<T>) {
      if (launch_hot<T, P::kNeg, P::kExp, P::kLog, P::kRsqrt, P::kTanh, P::kLogistic>(op, x, y,
                                                                                      n, stream)) {
        return;
      }
    }
    ew::launch_map(n, stream, UnaryFn<T>{op}, y, x);
  }
}

}  // namespace

void launch_unary(PrimitiveId op, DType dtype, const void* x, void* y, int64_t n,
                  cudaStream_t stream) {
  const PrimitiveFacts& facts = primitive_facts(op);
  if (facts.kind != OpKind::kUnary || !dtype_in_class(facts.dtypes, dtype)) {
    graft::fail(kPrimitiveNames[static_cast<int>(op)], "has no CUDA kernel for ",
                dtype_name(dtype));
  }
  if (n <= 0) return;
  dispatch_dtype(dtype, [&]<typename T>() { launch_typed<T>(op, x, y, n, stream); });
}

}  // namespace graft::cuda
