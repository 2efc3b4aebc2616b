// fused_elementwise: a chain of elementwise primitives (unary, binary, select_n,
// convert_element_type) over arrays of one shape, run as one loop (the jit fusion pass,
// transforms/passes/fuse_elementwise.cc, builds it). It holds the chain as a body Program
// (a ControlPrimitive, core/primitives/control.h), so its meaning is "run the body": the
// rules (core/primitives/fusion_rules.cc) replay it, the printer shows it nested and
// same_params compares it structurally. The CPU kernel (core/backend/cpu/fusion_kernels.cc)
// evaluates the derived steps() tile by tile without materializing intermediates.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/ir/primitive.h"
#include "core/primitives/control.h"

namespace graft {

// Whether fused_elementwise's kernel evaluates `p` applied to `in` (giving `out`): the kFuse
// rows of core/primitives/list.h (unary and binary ops, select_n, convert_element_type) on
// f16, bf16, f32, f64 and bool (integer dtypes, shifts, bitcasts and stop_gradient stay
// unfused).
bool fusion_supports(const Primitive& p, const std::vector<Aval>& in, const Aval& out);

// Precision inside a group, as XLA's default (xla_allow_excess_precision): f16 / bf16 values
// are carried in f32 from step to step and rounded to their type only where they leave the
// group (its outputs) or where the body converts to that type from another one
// (convert_element_type). So a jitted result can differ from the eager one (which rounds after
// every op) by the rounding of intermediates, as jax.jit's does from eager JAX. Every backend's
// fused kernel follows this rule: true when step `op` (operand dtype `operand`, result
// `result`) rounds its f32 value to `result`.
bool rounds_to_half(PrimitiveId op, DType operand, DType result);

// One elementwise application of the kernels' view of the body. Operand slots:
// [0, num_inputs) are the group's inputs, num_inputs + k is step k's result (k earlier).
struct FusedStep {
  std::shared_ptr<const Primitive> prim;
  std::vector<int> args;
  Aval aval;  // the step's output
};

// How the kernels read group input i at element e of the group (row-major): input element
// (e / div) % size, size being the input's element count. An input of the group's shape is
// read at e (div 1); a scalar (size 1) is one value; a broadcast one (a norm's per-row
// statistic [B, T] over [B, T, D], a weight [D] over [B, T, D]) repeats its elements in runs
// of div (its dims are a contiguous run of the group's, the group's dims after them making
// div) and wraps around after size of them, so it is never materialized at the group's shape.
struct FusedRead {
  int64_t div = 1;
  int64_t size = 0;
};

// The read of an operand of shape `from` broadcast by broadcast_in_dim(to, dims), when the
// operand's dims of size > 1 map to a contiguous run of to's dims; else nullopt.
std::optional<FusedRead> broadcast_read(const Shape& from, const Shape& to,
                                        const std::vector<int>& dims);

// The fusion primitives (fused_elementwise here, fused_reduce in fused_reduce.h): one body,
// built by jit's fusion pass, that says everything (no parameters of their own). Their rules
// replay the body (core/primitives/fusion_rules.cc).
class FusionPrimitive : public ControlPrimitive {
 public:
  // Fails (graft::Error "<name>: needs a body") on a null body.
  FusionPrimitive(PrimitiveId id, ProgramPtr body);
  std::string params() const override { return ""; }  // everything is in the body
  std::vector<SubProgram> sub_programs() const override { return {{"body", bodies()[0]}}; }
  GRAFT_TRANSFORM_RULES;

  const Program& body() const { return *bodies()[0]; }
};

// Body inputs are the group's inputs: arrays of the group's shape, or arrays that one
// broadcast_in_dim of the body spreads to it in the form broadcast_read accepts (scalars
// among them; the kernels read them in place, see FusedRead). Every other body instruction is
// fusible (fusion_supports) on arrays of the group's shape; body outputs are the group's
// outputs. No constants.
class FusedElementwise : public FusionPrimitive {
 public:
  // Fails (graft::Error "fused_elementwise: ...") on a body that breaks those rules.
  FusedElementwise(ProgramPtr body, Shape shape);
  std::shared_ptr<const Primitive> with_sub_programs(std::vector<ProgramPtr> b) const override;
  Cost cost(const std::vector<Aval>& in, const std::vector<Aval>& out) const override;

  const Shape& shape() const { return shape_; }

  // The body as the kernels iterate it, derived once: its instructions but the broadcasts of
  // inputs, with operands as slots, the slot of each output and how each input is read.
  const std::vector<FusedStep>& steps() const { return steps_; }
  const std::vector<int>& outputs() const { return outputs_; }
  const std::vector<FusedRead>& reads() const { return reads_; }
  // How the kernels take input i: one value for every element, or a broadcast of a smaller
  // array read as reads()[i] says; else at the group's own index.
  bool scalar_input(size_t i) const { return reads_[i].size == 1 && numel(shape_) > 1; }
  bool broadcast_input(size_t i) const {
    return !scalar_input(i) && reads_[i].size != numel(shape_);
  }

  // The CPU backend keeps its compiled loop in ControlPrimitive::backend_data(0, ...): the
  // kernel never runs the body through the executor (run_body), whose buffer plan would
  // use that same slot.

 private:
  Shape shape_;
  std::vector<FusedStep> steps_;
  std::vector<int> outputs_;
  std::vector<FusedRead> reads_;
};

// A fused_elementwise of `body` over arrays of `shape` (see FusedElementwise for the rules).
std::shared_ptr<const FusedElementwise> make_fused_elementwise(ProgramPtr body, Shape shape);

}  // namespace graft
