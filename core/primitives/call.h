// Call primitives: applications of traced functions held as closed programs
// (core/ir/program.h): custom_jvp_call and custom_vjp_call (functions whose derivatives the
// user supplies, like JAX's) and remat (checkpoint). They are ControlPrimitives: bodies are
// compared structurally (same_params), printed nested by make_graph and rewritten by jit's
// passes (sub_programs / with_sub_programs); the CPU kernel (core/backend/cpu/call_kernels.cc)
// runs a body through the executor, planned once per primitive. Builders and rules are
// core/primitives/{custom_jvp,custom_vjp,remat}_rules.cc; transforms/custom_derivatives.h and
// transforms/remat.h are the user-facing API.
//
// custom_* programs take the primitive's inputs [consts, args]: consts are values of outer
// traces the user's functions closed over (lifted by trace_closed). The user's rules give
// them no tangent or cotangent (pass a value as an argument to differentiate it).
#pragma once

#include <functional>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "core/primitives/control.h"

namespace graft {

class CallPrimitive : public ControlPrimitive {
 public:
  CallPrimitive(PrimitiveId id, std::string fn_name, std::vector<ProgramPtr> bodies,
                std::vector<Aval> in, std::vector<Aval> out)
      : ControlPrimitive(id, std::move(bodies), std::move(in), std::move(out)),
        fn_name_(std::move(fn_name)) {}
  std::string params() const override { return "name=" + fn_name_; }
  const std::string& fn_name() const { return fn_name_; }

 private:
  std::string fn_name_;
};

// Bodies: fun([consts, args]) -> outs; jvp([consts, args, arg tangents]) -> [outs, out
// tangents] (the user's rule, linear in the tangents: reverse mode transposes it).
class CustomJvpCall : public CallPrimitive {
 public:
  CustomJvpCall(std::string name, int num_consts, ProgramPtr fun, ProgramPtr jvp,
                std::vector<Aval> in, std::vector<Aval> out)
      : CallPrimitive(PrimitiveId::kCustomJvpCall, std::move(name),
                      {std::move(fun), std::move(jvp)}, std::move(in), std::move(out)),
        num_consts_(num_consts) {}
  std::string params() const override;
  std::vector<SubProgram> sub_programs() const override {
    return {{"fun", bodies()[0]}, {"jvp", bodies()[1]}};
  }
  std::shared_ptr<const Primitive> with_sub_programs(std::vector<ProgramPtr> bodies) const override;
  GRAFT_TRANSFORM_RULES;
  GRAFT_SHARDING_RULE;

  int num_consts() const { return num_consts_; }
  size_t num_out() const { return out_avals().size(); }

 private:
  int num_consts_;
};

// Bodies: fun([consts, args]) -> outs; fwd([consts, args]) -> [outs, residuals];
// bwd([consts, residuals, out cotangents]) -> one cotangent per arg. Bound by the user, the
// outputs are fun's (the kernel runs fun). Reverse mode's forward pass binds vjp_forward():
// the same call whose outputs are fwd's, residuals after the user-visible outputs, so fwd runs
// once and the vjp rule hands its residuals to bwd.
class CustomVjpCall : public CallPrimitive {
 public:
  CustomVjpCall(std::string name, int num_consts, int num_out, bool residual_outputs,
                std::vector<ProgramPtr> bodies, std::vector<Aval> in, std::vector<Aval> out)
      : CallPrimitive(PrimitiveId::kCustomVjpCall, std::move(name), std::move(bodies),
                      std::move(in), std::move(out)),
        num_consts_(num_consts),
        num_out_(num_out),
        residual_outputs_(residual_outputs) {}
  std::string params() const override;
  std::vector<SubProgram> sub_programs() const override {
    return {{"fun", bodies()[0]}, {"fwd", bodies()[1]}, {"bwd", bodies()[2]}};
  }
  std::shared_ptr<const Primitive> with_sub_programs(std::vector<ProgramPtr> bodies) const override;
  std::shared_ptr<const Primitive> vjp_forward() const override;
  GRAFT_TRANSFORM_RULES;
  GRAFT_SHARDING_RULE;

  int num_consts() const { return num_consts_; }
  size_t num_out() const { return static_cast<size_t>(num_out_); }
  size_t num_residuals() const { return bodies()[1]->outputs.size() - num_out(); }
  // Whether the outputs include the residuals (the kernel then runs fwd, not fun).
  bool residual_outputs() const { return residual_outputs_; }

 private:
  int num_consts_, num_out_;
  bool residual_outputs_;
};

// Which values computed inside a checkpointed function the backward pass may keep, decided
// per primitive application (all outputs of an application are saved or none).
struct RematPolicy {
  std::string name;
  std::function<bool(const Primitive&)> saveable;
};

RematPolicy nothing_saveable();     // recompute everything (the default, as in JAX)
RematPolicy everything_saveable();  // save every intermediate value (no recomputation)
RematPolicy dots_saveable();        // save the outputs of dot_general only
// Save only the values marked by checkpoint_name with one of these names.
RematPolicy save_only_these_names(std::set<std::string> names);

// Body: f([args]) -> [outs, saved]: the values the policy saves are extra outputs (computed by
// the forward pass), and the vjp rule recomputes the rest from the inputs and those.
class Remat : public CallPrimitive {
 public:
  // saved_slots: the outputs that hold saved values (the extra ones, and outs that are also
  // saved values).
  Remat(std::string name, ProgramPtr body, size_t num_main, std::vector<size_t> saved_slots,
        RematPolicy policy, std::vector<Aval> in, std::vector<Aval> out)
      : CallPrimitive(PrimitiveId::kRemat, std::move(name), {std::move(body)}, std::move(in),
                      std::move(out)),
        num_main_(num_main),
        saved_slots_(std::move(saved_slots)),
        policy_(std::move(policy)) {}
  std::string params() const override;
  std::vector<SubProgram> sub_programs() const override { return {{"body", bodies()[0]}}; }
  std::shared_ptr<const Primitive> with_sub_programs(std::vector<ProgramPtr> bodies) const override;
  GRAFT_TRANSFORM_RULES;
  GRAFT_SHARDING_RULE;

  const Program& body() const { return *bodies()[0]; }
  size_t num_main() const { return num_main_; }
  const RematPolicy& policy() const { return policy_; }
  // What computed output `o` inside the body: "remat", or "remat/dot_general" for a saved one.
  std::string source(size_t o) const;

 private:
  size_t num_main_;
  std::vector<size_t> saved_slots_;
  RematPolicy policy_;
};

// The identity, marking a value with a name that save_only_these_names policies refer to.
class CheckpointName : public Primitive {
 public:
  explicit CheckpointName(std::string name)
      : Primitive(PrimitiveId::kCheckpointName), name_(std::move(name)) {}
  std::vector<Aval> infer(const std::vector<Aval>& in) const override;
  std::string params() const override { return "name=" + name_; }
  bool same_params(const Primitive& o) const override;
  GRAFT_TRANSFORM_RULES;
  GRAFT_SHARDING_RULE;
  const std::string& mark() const { return name_; }

 private:
  std::string name_;
};

// The identity, marking x with a name that save_only_these_names policies refer to.
Array checkpoint_name(const Array& x, const std::string& name);

// One value the pullback keeps: what produced it ("argument 1", "dot_general", or
// "remat/dot_general" for a value a checkpoint saved), its aval and size.
struct SavedResidual {
  std::string source;
  Aval aval;
  int64_t bytes = 0;
};

namespace detail {

// rule(primals, tangents) -> (outputs, output tangents).
using JvpRuleFn = std::function<std::pair<std::vector<Array>, std::vector<Array>>(
    const std::vector<Array>&, const std::vector<Array>&)>;
// fwd(args) -> (outputs, residuals).
using FwdFn =
    std::function<std::pair<std::vector<Array>, std::vector<Array>>(const std::vector<Array>&)>;
// bwd(residuals, output cotangents) -> one cotangent per argument.
using BwdFn =
    std::function<std::vector<Array>(const std::vector<Array>&, const std::vector<Array>&)>;

// Trace the user's functions (once, here) and bind the call; return fun's outputs.
std::vector<Array> bind_custom_jvp(const std::string& name, const FlatFn& fn, const JvpRuleFn& rule,
                                   const std::vector<Array>& args);
std::vector<Array> bind_custom_vjp(const std::string& name, const FlatFn& fn, const FwdFn& fwd,
                                   const BwdFn& bwd, const std::vector<Array>& args);
std::vector<Array> bind_checkpoint(const std::string& name, const FlatFn& fn,
                                   const RematPolicy& policy, const std::vector<Array>& args);

std::vector<SavedResidual> saved_residuals_flat(const FlatFn& fn, const std::vector<Array>& args);
std::string format_residuals(const std::vector<SavedResidual>& res);

// p with unused inputs of `avals` inserted before its input `at` (so that programs holding
// different consts take the same inputs).
ProgramPtr insert_inputs(const ProgramPtr& p, size_t at, const std::vector<Aval>& avals);

}  // namespace detail
}  // namespace graft
