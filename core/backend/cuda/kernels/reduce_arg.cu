// launch_arg (reduce.h): argmax / argmin along one axis, through the reduction kernels of
// reduce_device.h with the (value, index) reducer ArgR; the index dtype (i32 / i64) is a
// run-time flag of the reducer, so each operand dtype has one instantiation per direction.
#include "core/backend/cuda/kernels/reduce_device.h"

namespace graft::cuda {
namespace {

template <bool kMax>
void run_arg(DType dtype, bool index64, const ReducePlan& p, const void* x, void* out,
             void* scratch, cudaStream_t stream) {
  auto go = [&]<typename T>() {
    red::run(red::ArgR<kMax, T>{index64}, p, x, out, scratch, stream);
  };
  switch (dtype) {
    case DType::kBool:
    case DType::kU8:
      return go.template operator()<uint8_t>();
    case DType::kU32:
      return go.template operator()<uint32_t>();
    case DType::kI32:
      return go.template operator()<int32_t>();
    case DType::kI64:
      return go.template operator()<int64_t>();
    case DType::kI8:
      return go.template operator()<int8_t>();
    case DType::kI16:
      return go.template operator()<int16_t>();
    case DType::kU16:
      return go.template operator()<uint16_t>();
    case DType::kU64:
      return go.template operator()<uint64_t>();
    case DType::kC64:
    case DType::kC128:
      graft::fail("reduce", "has no CUDA kernel for ", dtype_name(dtype));
    case DType::kF16:
      return go.template operator()<f16>();
    case DType::kBF16:
      return go.template operator()<bf16>();
    case DType::kF32:
      return go.template operator()<float>();
    case DType::kF64:
      return go.template operator()<double>();
  }
}

}  // namespace

void launch_arg(PrimitiveId op, DType dtype, DType index_dtype, const ReducePlan& plan,
                const void* x, void* out, void* scratch, cudaStream_t stream) {
  if ((op != PrimitiveId::kArgmax && op != PrimitiveId::kArgmin) ||
      (index_dtype != DType::kI32 && index_dtype != DType::kI64)) {
    graft::fail(kPrimitiveNames[static_cast<int>(op)], "has no CUDA kernel for index dtype ",
                dtype_name(index_dtype));
  }
  if (plan.kind == ReducePlan::Kind::kNone) return;
  if (plan.kind != ReducePlan::Kind::kRows && plan.kind != ReducePlan::Kind::kCols) {
    graft::fail(kPrimitiveNames[static_cast<int>(op)], "needs a plan from plan_arg");
  }
  const bool index64 = index_dtype == DType::kI64;
  if (op == PrimitiveId::kArgmax) {
    run_arg<true>(dtype, index64, plan, x, out, scratch, stream);
  } else {
    run_arg<false>(dtype, index64, plan, x, out, scratch, stream);
  }
}

}  // namespace graft::cuda
