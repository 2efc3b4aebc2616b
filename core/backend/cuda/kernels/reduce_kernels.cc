// The reduce family's CUDA kernel-table entries: plan on the host from the primitive's
// parameters and the operand's shape (reduce_plan.cc), take the scratch the plan asks for from
// the call (released in stream order after the kernel), and enqueue the launcher of reduce.h
// on the call's stream. Dtype checks mirror the CPU kernel table's (reduce_sum / prod / cumsum
// reject bool, reduce_and / or take bool and integers).
#include "core/backend/cuda/kernel.h"
#include "core/backend/cuda/kernels/reduce.h"
#include "core/primitives/reduce.h"

namespace graft::cuda {
namespace {

void* scratch_for(Call& c, size_t bytes) { return bytes == 0 ? nullptr : c.scratch(bytes); }

void reduce_kernel(Call& c) {
  const DType dtype = c.in_aval(0).dtype;
  const ReducePlan plan = plan_reduce(c.in_aval(0).shape, c.params<Reduce>().axes(), dtype);
  launch_reduce(c.prim.id(), dtype, plan, c.in_raw(0), c.out_raw(0),
                scratch_for(c, plan.scratch_bytes), c.stream());
}

void arg_kernel(Call& c) {
  const auto& p = c.params<ArgReduce>();
  const ReducePlan plan = plan_arg(c.in_aval(0).shape, p.axis());
  launch_arg(c.prim.id(), c.in_aval(0).dtype, c.out_aval().dtype, plan, c.in_raw(0), c.out_raw(0),
             scratch_for(c, plan.scratch_bytes), c.stream());
}

void cumsum_kernel(Call& c) {
  const auto& p = c.params<Cumsum>();
  const DType dtype = c.in_aval(0).dtype;
  if (dtype == DType::kBool) {
    graft::fail(c.prim.name(), "has no CUDA kernel for ", c.in_aval(0).str());
  }
  const CumsumPlan plan = plan_cumsum(c.in_aval(0).shape, p.axis(), p.reverse(), dtype);
  launch_cumsum(dtype, plan, c.in_raw(0), c.out_raw(0), scratch_for(c, plan.scratch_bytes),
                c.stream());
}

}  // namespace

void register_reduce_kernels(KernelTable& table) {
  for (PrimitiveId id :
       {PrimitiveId::kReduceSum, PrimitiveId::kReduceProd, PrimitiveId::kReduceMax,
        PrimitiveId::kReduceMin, PrimitiveId::kReduceAnd, PrimitiveId::kReduceOr}) {
    table[static_cast<int>(id)] = &reduce_kernel;
  }
  table[static_cast<int>(PrimitiveId::kArgmax)] = &arg_kernel;
  table[static_cast<int>(PrimitiveId::kArgmin)] = &arg_kernel;
  table[static_cast<int>(PrimitiveId::kCumsum)] = &cumsum_kernel;
}

}  // namespace graft::cuda
