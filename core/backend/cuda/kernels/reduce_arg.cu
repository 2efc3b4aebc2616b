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
  red::dispatch_ordered(dtype, go);
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
