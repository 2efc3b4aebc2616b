// reduce_max / reduce_min / reduce_and / reduce_or (called by launch_reduce, reduce_sum.cu).
// bool reduces as u8 (its bytes are 0 or 1: max is or, min is and, and bitwise and / or are
// the logical ones); and / or on signed integers reduce the unsigned type of their width.
#include "core/backend/cuda/kernels/reduce_device.h"

namespace graft::cuda::red {
namespace {

template <Op kOp>
void run_extremum(DType dtype, const ReducePlan& p, const void* x, void* out, void* scratch,
                  cudaStream_t stream) {
  auto go = [&]<typename T>() { run(ValueR<kOp, T>{}, p, x, out, scratch, stream); };
  red::dispatch_ordered(dtype, go);
}

template <Op kOp>
void run_bitwise(DType dtype, const ReducePlan& p, const void* x, void* out, void* scratch,
                 cudaStream_t stream) {
  auto go = [&]<typename T>() { run(ValueR<kOp, T>{}, p, x, out, scratch, stream); };
  switch (dtype) {
    case DType::kBool:
    case DType::kU8:
      return go.template operator()<uint8_t>();
    case DType::kI8:
      return go.template operator()<uint8_t>();
    case DType::kI16:
    case DType::kU16:
      return go.template operator()<uint16_t>();
    case DType::kU32:
    case DType::kI32:
      return go.template operator()<uint32_t>();
    case DType::kI64:
    case DType::kU64:
      return go.template operator()<uint64_t>();
    default:
      graft::fail(kOp == Op::kAnd ? "reduce_and" : "reduce_or", "has no CUDA kernel for ",
                  dtype_name(dtype));
  }
}

}  // namespace

void launch_extrema(PrimitiveId op, DType dtype, const ReducePlan& plan, const void* x, void* out,
                    void* scratch, cudaStream_t stream) {
  switch (op) {
    case PrimitiveId::kReduceMax:
      return run_extremum<Op::kMax>(dtype, plan, x, out, scratch, stream);
    case PrimitiveId::kReduceMin:
      return run_extremum<Op::kMin>(dtype, plan, x, out, scratch, stream);
    case PrimitiveId::kReduceAnd:
      return run_bitwise<Op::kAnd>(dtype, plan, x, out, scratch, stream);
    case PrimitiveId::kReduceOr:
      return run_bitwise<Op::kOr>(dtype, plan, x, out, scratch, stream);
    default:
      graft::fail(kPrimitiveNames[static_cast<int>(op)], "is not a reduction");
  }
}

}  // namespace graft::cuda::red
