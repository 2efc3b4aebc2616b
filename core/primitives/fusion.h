// fused_elementwise: a chain of elementwise primitives (unary, binary, select_n,
// convert_element_type) over arrays of one shape, run as one loop (the jit fusion pass,
// transforms/passes/fuse_elementwise.cc, builds it). It keeps the original primitives, so its
// meaning is "replay them"; the CPU kernel (core/backend/cpu/fusion_kernels.cc) evaluates the
// steps tile by tile without materializing intermediates.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/primitive.h"

namespace graft {

// Whether fused_elementwise's kernel evaluates `p` applied to `in` (giving `out`): the kFuse
// rows of core/primitives/list.h (unary and binary ops, select_n, convert_element_type) on
// f16, bf16, f32, f64 and bool (integer dtypes, shifts, bitcasts and stop_gradient stay
// unfused).
bool fusion_supports(const Primitive& p, const std::vector<Aval>& in, const Aval& out);

// One elementwise application. Operand slots: [0, num_inputs) are the fused group's inputs,
// num_inputs + k is step k's result (k earlier than this step).
struct FusedStep {
  std::shared_ptr<const Primitive> prim;
  std::vector<int> args;
  Aval aval;  // the step's output
};

// Inputs have the group's shape, or are rank-0 scalars broadcast to it (absorbed
// broadcast_in_dim of a scalar). Outputs are slots of steps.
class FusedElementwise : public Primitive {
 public:
  FusedElementwise(Shape shape, std::vector<Aval> in, std::vector<FusedStep> steps,
                   std::vector<int> outputs);
  std::vector<Aval> infer(const std::vector<Aval>& in) const override;
  std::string params() const override;
  bool same_params(const Primitive& o) const override;
  Cost cost(const std::vector<Aval>& in, const std::vector<Aval>& out) const override;

  // Applies the original primitives to `inputs` (scalar inputs broadcast first): the
  // un-fused program, which the transform rules differentiate and batch.
  std::vector<Array> replay(const std::vector<Array>& inputs) const;

  const Shape& shape() const { return shape_; }
  const std::vector<Aval>& in_avals() const { return in_; }
  const std::vector<FusedStep>& steps() const { return steps_; }
  const std::vector<int>& outputs() const { return outputs_; }

  // What a backend derives from this group, computed by `make` on the first call and kept
  // with the primitive (the CPU's compiled loop): a cached jit program pays for it once, not
  // on every call.
  const void* backend_data(const std::function<const void*()>& make) const;

 private:
  Shape shape_;
  std::vector<Aval> in_;
  std::vector<FusedStep> steps_;
  std::vector<int> outputs_;
  struct Once {
    std::once_flag flag;
    const void* data = nullptr;
  };
  std::shared_ptr<Once> backend_ = std::make_shared<Once>();
};

}  // namespace graft
