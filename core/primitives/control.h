// Control-flow primitives: scan, cond and while_loop. Each holds its traced bodies as closed
// programs (core/ir/program.h; values a body closed over that belong to an outer trace were
// lifted into explicit inputs, "consts"), compared structurally, printed nested, and rewritten
// by jit's passes. Their builders and rules are core/primitives/{scan,cond,while}_rules.cc;
// the CPU kernels (core/backend/cpu/control_kernels.cc) run each body through the executor,
// planned once per primitive. transforms/control_flow.h is the user-facing API.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "core/ir/program.h"
#include "core/ir/primitive.h"

namespace graft {

using ProgramPtr = std::shared_ptr<const Program>;

class ControlPrimitive : public Primitive {
 public:
  ControlPrimitive(PrimitiveId id, std::vector<ProgramPtr> bodies, std::vector<Aval> in_avals,
                   std::vector<Aval> out_avals)
      : Primitive(id),
        bodies_(std::move(bodies)),
        in_avals_(std::move(in_avals)),
        out_avals_(std::move(out_avals)) {}

  // The avals it was built with; the inputs must match them (shape and dtype).
  std::vector<Aval> infer(const std::vector<Aval>& in) const override;
  // Same kind, avals, parameters (params()) and structurally equal bodies.
  bool same_params(const Primitive& o) const override;

  const std::vector<Aval>& in_avals() const { return in_avals_; }
  const std::vector<Aval>& out_avals() const { return out_avals_; }
  const std::vector<ProgramPtr>& bodies() const { return bodies_; }
  // A body's side effects (debug_print) are the primitive's: bind runs it at once on values
  // and records it for jit on tracers, and jit's passes keep it.
  bool has_side_effects() const override { return effects_; }
  // The named axes its bodies communicate over, worked out once (bind and vmap ask for every
  // equation).
  AxisMask axis_names() const override { return axis_names_; }

  // The builders (bind_scan, bind_cond, bind_while) make these with their rules and
  // with_sub_programs (core/primitives/{scan,cond,while}_rules.cc).

  // What a backend derives from body i (the CPU's buffer plan), made by `make` on first use
  // and kept with the primitive, so a loop plans its body once, not per iteration.
  const void* backend_data(size_t i,
                           const std::function<std::shared_ptr<const void>()>& make) const;

 private:
  static bool any_effects(const std::vector<ProgramPtr>& bodies) {
    for (const ProgramPtr& b : bodies) {
      for (const Instr& instr : b->instrs) {
        if (instr.prim->has_side_effects()) return true;
      }
    }
    return false;
  }

  std::vector<ProgramPtr> bodies_;
  std::vector<Aval> in_avals_, out_avals_;
  static AxisMask body_axis_names(const std::vector<ProgramPtr>& bodies) {
    AxisMask m = 0;
    for (const ProgramPtr& b : bodies) {
      for (const Instr& instr : b->instrs) m |= instr.prim->axis_names();
    }
    return m;
  }

  bool effects_ = any_effects(bodies_);
  AxisMask axis_names_ = body_axis_names(bodies_);
  struct Once {
    std::once_flag flag;
    std::shared_ptr<const void> data;
  };
  std::shared_ptr<std::vector<Once>> backend_ = std::make_shared<std::vector<Once>>(bodies_.size());
};

// Inputs: consts, initial carry, xs (leading axis = length). Outputs: final carry, ys stacked
// along a new leading axis. body([consts, carry, x]) -> [new carry, y].
class ScanPrimitive : public ControlPrimitive {
 public:
  ScanPrimitive(ProgramPtr body, int num_consts, int num_carry, int64_t length, bool reverse,
                std::vector<Aval> in, std::vector<Aval> out)
      : ControlPrimitive(PrimitiveId::kScan, {std::move(body)}, std::move(in), std::move(out)),
        num_consts_(num_consts),
        num_carry_(num_carry),
        length_(length),
        reverse_(reverse) {}
  std::string params() const override;
  std::vector<SubProgram> sub_programs() const override { return {{"body", bodies()[0]}}; }
  // Carries vary as the body's carry input does (which covers its output, bind_scan makes
  // sure), so a loop of length 0 is typed like its initial carry; ys as the body's.
  void infer_vma(const std::vector<Aval>& in, std::vector<Aval>& out) const override;

  const Program& body() const { return *bodies()[0]; }
  int num_consts() const { return num_consts_; }
  int num_carry() const { return num_carry_; }
  int num_xs() const { return static_cast<int>(in_avals().size()) - num_consts_ - num_carry_; }
  int num_ys() const { return static_cast<int>(out_avals().size()) - num_carry_; }
  int64_t length() const { return length_; }
  bool reverse() const { return reverse_; }

 private:
  int num_consts_, num_carry_;
  int64_t length_;
  bool reverse_;
};

// Inputs: an i32 scalar index, then the operands. Runs branches[clamp(index)](operands).
class CondPrimitive : public ControlPrimitive {
 public:
  CondPrimitive(std::vector<ProgramPtr> branches, std::vector<Aval> in, std::vector<Aval> out)
      : ControlPrimitive(PrimitiveId::kCond, std::move(branches), std::move(in), std::move(out)) {}
  std::string params() const override;
  std::vector<SubProgram> sub_programs() const override;
  // As the branches' outputs, and everywhere the index varies (members take different ones).
  void infer_vma(const std::vector<Aval>& in, std::vector<Aval>& out) const override;
  // Branch k takes the operands (inputs 1...) and returns the outputs.
  size_t num_branches() const { return bodies().size(); }
};

// Inputs: cond consts, body consts, initial carry. Output: the final carry.
// cond([cond consts, carry]) -> [bool scalar]; body([body consts, carry]) -> [carry].
class WhilePrimitive : public ControlPrimitive {
 public:
  WhilePrimitive(ProgramPtr cond, ProgramPtr body, int num_cond_consts, int num_body_consts,
                 std::vector<Aval> in, std::vector<Aval> out)
      : ControlPrimitive(PrimitiveId::kWhileLoop, {std::move(cond), std::move(body)}, std::move(in),
                         std::move(out)),
        num_cond_consts_(num_cond_consts),
        num_body_consts_(num_body_consts) {}
  std::string params() const override;
  // Carries vary as the body's carry input does, and everywhere the condition does (members
  // then loop different numbers of times).
  void infer_vma(const std::vector<Aval>& in, std::vector<Aval>& out) const override;
  std::vector<SubProgram> sub_programs() const override {
    return {{"cond", bodies()[0]}, {"body", bodies()[1]}};
  }

  int num_cond_consts() const { return num_cond_consts_; }
  int num_body_consts() const { return num_body_consts_; }
  int num_carry() const { return static_cast<int>(out_avals().size()); }

 private:
  int num_cond_consts_, num_body_consts_;
};

namespace detail {

// body([consts, carry, x]) -> [carry, y]; returns [final carry, stacked ys].
std::vector<Array> bind_scan(const FlatFn& body, const std::vector<Array>& consts,
                             const std::vector<Array>& init, const std::vector<Array>& xs,
                             int64_t length, bool reverse);
// Length from the xs' leading axes and the optional length (errors on mismatch).
int64_t scan_length(const std::vector<Array>& xs, std::optional<int64_t> length);
// branches[k](operands) -> outputs; `index` is an integer scalar (clamped).
std::vector<Array> bind_cond(const char* op, const Array& index,
                             const std::vector<FlatFn>& branches,
                             const std::vector<Array>& operands);
// cond([cond consts, carry]) -> [bool scalar]; body([body consts, carry]) -> carry.
std::vector<Array> bind_while(const FlatFn& cond, const FlatFn& body,
                              const std::vector<Array>& cond_consts,
                              const std::vector<Array>& body_consts,
                              const std::vector<Array>& init);
Array cond_index(const char* op, const Array& pred);
Array switch_index(const Array& index);

}  // namespace detail
}  // namespace graft
