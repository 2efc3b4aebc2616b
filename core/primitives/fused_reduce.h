// fused_reduce: a fused_elementwise group together with a reduction of one of its values over
// one run of the group's dims: trailing ones (a norm's sum of squares per row, a softmax's sum
// of exponentials, a gradient's global sum of squares), leading ones (a norm weight's gradient,
// summed over the batch and sequence) or middle ones (an MoE's sum over its top-k choices). jit's
// fusion pass builds it (transforms/passes/fuse_elementwise.cc), so the reduced value is never
// written out whole: the CPU kernel (core/backend/cpu/fused_reduce_kernel.cc) computes it piece by
// piece into a small buffer that the reduction consumes at once, and the group's other outputs as
// fused_elementwise would.
//
// Its body is [fused_elementwise F, R = reduce_{sum,max,min}(one of F's outputs)] over the
// body's inputs (F's, in order); it returns some of F's outputs (those read outside) and then
// R's output, and means "run the body": the rules replay it (core/primitives/fusion_rules.cc)
// and a backend without a kernel of its own runs the body (CUDA does).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/primitives/fusion.h"

namespace graft {

class FusedReduce : public FusionPrimitive {
 public:
  // Fails (graft::Error "fused_reduce: ...") on a body that is not of that form, or whose
  // reduced dims are not one run of F's dims (size-1 dims aside).
  explicit FusedReduce(ProgramPtr body);
  std::shared_ptr<const Primitive> with_sub_programs(std::vector<ProgramPtr> b) const override;
  Cost cost(const std::vector<Aval>& in, const std::vector<Aval>& out) const override;

  const FusedElementwise& group() const { return *group_; }
  PrimitiveId reduce_op() const { return reduce_op_; }
  // Which of the group's outputs (an index into group().outputs()) is reduced.
  int reduced() const { return reduced_; }
  // For each output but the last (the reduction's): the group output it is.
  const std::vector<int>& kept() const { return kept_; }
  // The reduction as one axis: the group's elements viewed as an [outer(), length(), inner()]
  // array, reduced over its middle axis to [outer(), inner()] (inner() == 1: rows of
  // length() consecutive elements; inner() > 1: columns).
  int64_t outer() const { return outer_; }
  int64_t length() const { return length_; }
  int64_t inner() const { return inner_; }

 private:
  std::shared_ptr<const FusedElementwise> group_;
  PrimitiveId reduce_op_;
  int reduced_ = -1;
  std::vector<int> kept_;
  int64_t outer_ = 1, length_ = 1, inner_ = 1;
};

// Whether reduce `op` over `axes` of `shape` is a reduction fused_reduce can hold: sum, max or
// min whose reduced dims of size > 1 are one run (no kept dim of size > 1 between them), at
// least one of them.
bool fusible_reduction(PrimitiveId op, const Shape& shape, const std::vector<int>& axes);

std::shared_ptr<const FusedReduce> make_fused_reduce(ProgramPtr body);

}  // namespace graft
