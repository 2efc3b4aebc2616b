#include "core/primitives/fused_reduce.h"

#include <algorithm>

#include "core/error.h"
#include "core/primitives/reduce.h"

namespace graft {
namespace {

bool is_row_op(PrimitiveId op) {
  return op == PrimitiveId::kReduceSum || op == PrimitiveId::kReduceMax ||
         op == PrimitiveId::kReduceMin;
}

}  // namespace

bool fusible_reduction(PrimitiveId op, const Shape& shape, const std::vector<int>& axes) {
  if (!is_row_op(op)) return false;
  bool reduced_seen = false, kept_after = false, gap = false;
  for (int d = 0; d < static_cast<int>(shape.size()); ++d) {
    if (shape[d] == 1) continue;
    const bool reduced = std::find(axes.begin(), axes.end(), d) != axes.end();
    if (reduced) {
      gap = gap || kept_after;
      reduced_seen = true;
    } else if (reduced_seen) {
      kept_after = true;
    }
  }
  return reduced_seen && !gap;
}

FusedReduce::FusedReduce(ProgramPtr body) : FusionPrimitive(PrimitiveId::kFusedReduce, body) {
  const Program& b = *body;
  if (!b.constants.empty()) fail(name(), "body has constants (they must be inputs)");
  if (b.instrs.size() != 2 || b.instrs[0].prim->id() != PrimitiveId::kFusedElementwise ||
      !is_row_op(b.instrs[1].prim->id())) {
    fail(name(), "body must be a fused_elementwise and a reduce_sum, reduce_max or reduce_min");
  }
  const Instr &fi = b.instrs[0], &ri = b.instrs[1];
  if (fi.in != b.inputs) fail(name(), "the group must read the body's inputs, in order");
  group_ = std::static_pointer_cast<const FusedElementwise>(fi.prim);
  reduce_op_ = ri.prim->id();
  for (size_t o = 0; o < fi.out.size(); ++o) {
    if (ri.in.at(0) == fi.out[o]) reduced_ = static_cast<int>(o);
  }
  if (reduced_ < 0) fail(name(), "the reduction must read an output of the group");
  const auto& axes = static_cast<const Reduce&>(*ri.prim).axes();
  const Shape& shape = group_->shape();
  if (!fusible_reduction(reduce_op_, shape, axes)) {
    fail(name(), "reduces axes ", shape_str(Shape(axes.begin(), axes.end())), " of ",
         shape_str(shape), ": only one run of dims of size > 1 is fused");
  }
  bool reduced_seen = false;
  for (int d = 0; d < static_cast<int>(shape.size()); ++d) {
    const bool reduced = std::find(axes.begin(), axes.end(), d) != axes.end();
    if (shape[d] == 1) continue;
    reduced_seen = reduced_seen || reduced;
    (reduced ? length_ : (reduced_seen ? inner_ : outer_)) *= shape[d];
  }
  if (b.outputs.empty() || b.outputs.back() != ri.out.at(0)) {
    fail(name(), "the reduction's result must be the body's last output");
  }
  for (size_t k = 0; k + 1 < b.outputs.size(); ++k) {
    auto it = std::find(fi.out.begin(), fi.out.end(), b.outputs[k]);
    if (it == fi.out.end()) fail(name(), "body output ", k, " is not an output of the group");
    const int o = static_cast<int>(it - fi.out.begin());
    if (std::find(kept_.begin(), kept_.end(), o) != kept_.end()) {
      fail(name(), "body returns one value twice");
    }
    kept_.push_back(o);
  }
  for (int o = 0; o < static_cast<int>(fi.out.size()); ++o) {
    if (o != reduced_ && std::find(kept_.begin(), kept_.end(), o) == kept_.end()) {
      fail(name(), "group output ", o, " is neither returned nor reduced");
    }
  }
}

Cost FusedReduce::cost(const std::vector<Aval>& in, const std::vector<Aval>& out) const {
  Cost c = Primitive::cost(in, out);  // bytes: the inputs, the kept outputs and the reduction
  c.flops = static_cast<double>(numel(group_->shape()) *
                                static_cast<int64_t>(group_->steps().size() + 1));
  return c;
}

std::shared_ptr<const FusedReduce> make_fused_reduce(ProgramPtr body) {
  return std::make_shared<const FusedReduce>(std::move(body));
}

}  // namespace graft
