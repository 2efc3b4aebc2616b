// The Primitive interface: what every entry of core/primitives/list.h implements.
//
// A primitive instance carries its parameters (axes, shapes, dtypes...). Rules live with the
// primitive: the shape/dtype rule (infer), a cost, and the transform rules (jvp, vjp,
// batching), which are written with public ops so their results are graphs again. A rule a
// primitive does not define throws graft::Error naming the primitive and the transform.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/array.h"
#include "core/sharding/axis.h"
#include "core/primitives/list.h"

namespace graft {

struct Cost {
  double flops = 0;
  double bytes = 0;  // bytes read plus bytes written
};

// Result of a batching rule: outputs and, for each, the batch axis (or -1 if unbatched).
struct Batched {
  std::vector<Array> outputs;
  std::vector<int> dims;
};

struct Program;
class Primitive;
namespace spmd {
struct Plan;
struct RuleArgs;
}  // namespace spmd
// A pass over a program (jit's DCE, given to Primitive::prune). A plain function pointer:
// <functional> here would let std::bind shadow graft::bind by argument-dependent lookup.
using ProgramPass = Program (*)(const Program&);

// A body a primitive holds (scan's body, cond's branches...), with a name for the printer.
struct SubProgram {
  std::string name;
  std::shared_ptr<const Program> program;
};

// What Primitive::prune returns: the smaller primitive and which of the original's inputs it
// takes and outputs it defines (in order).
struct Pruned {
  std::shared_ptr<const Primitive> prim;
  std::vector<bool> kept_inputs, kept_outputs;
};

// What Primitive::merge_with returns: one primitive doing the work of two applied to the
// same inputs; its outputs are the first one's, then more; other_outputs[k] is the output
// that the second one's output k is.
struct Merged {
  std::shared_ptr<const Primitive> prim;
  std::vector<int> other_outputs;
};

// Leading inputs of a loop's body that hold the same value on every iteration (the loop's
// consts): body inputs [0, count) are the primitive's inputs [first_input, first_input + count).
struct LoopConsts {
  size_t body = 0;  // index into sub_programs()
  size_t first_input = 0, count = 0;
};

class Primitive {
 public:
  explicit Primitive(PrimitiveId id) : id_(id) {}
  virtual ~Primitive() = default;

  PrimitiveId id() const { return id_; }
  std::string_view name() const { return kPrimitiveNames[static_cast<int>(id_)]; }

  // Output avals for the given input avals; throws graft::Error("[name] ...") on misuse.
  virtual std::vector<Aval> infer(const std::vector<Aval>& in) const = 0;

  // Parameters as text for the IR printer ("axes=(0, 1)"), and equality for CSE / caches.
  virtual std::string params() const { return ""; }
  virtual bool same_params(const Primitive& other) const { return id_ == other.id_; }

  // Default: one flop per output element, every input and output byte moved once.
  virtual Cost cost(const std::vector<Aval>& in, const std::vector<Aval>& out) const;

  // Whether applying it does something besides computing its outputs (debug_print): jit
  // keeps such instructions even when their outputs are unused, and never folds them.
  virtual bool has_side_effects() const { return false; }

  // Sets out[k].vma, the named axes each output varies over (core/sharding/axis.h), from the
  // inputs'. Default: every axis an input varies over, and those a body's outputs vary over (a body
  // that calls axis_index). Collectives, pmap and pvary override it.
  virtual void infer_vma(const std::vector<Aval>& in, std::vector<Aval>& out) const;
  // The named axes it communicates over, in its bodies too: vmap sends an equation naming the
  // axis it maps through the batching rule even when no input is batched (axis_index has no
  // inputs; psum of an unbatched value is axis_size * x).
  virtual AxisMask axis_names() const;

  // Whether applying it exchanges data with the other processes of a multi-process run (a
  // shard_map does, and so does a primitive whose body holds one). bind runs such an
  // application at once on values, so every process runs the same exchanges in program order,
  // whatever each one later reads. Asked only when there are several processes.
  virtual bool exchanges_between_processes() const;

  // Nested programs, which the printer shows and passes rewrite. with_sub_programs returns
  // this primitive with its bodies replaced by programs of the same signature (same input
  // and output avals), in the order sub_programs lists them.
  virtual std::vector<SubProgram> sub_programs() const { return {}; }
  virtual std::shared_ptr<const Primitive> with_sub_programs(
      std::vector<std::shared_ptr<const Program>> bodies) const;

  // What reverse mode's forward pass binds in this primitive's place (null: itself): the
  // same inputs, this primitive's outputs followed by values its vjp rule then reads as
  // extra `outputs` (custom_vjp_call: the residuals of the user's fwd, so fwd runs once).
  virtual std::shared_ptr<const Primitive> vjp_forward() const { return nullptr; }

  // Dead-code elimination through the primitive (jit's DCE pass): given which outputs are
  // used, an equivalent primitive that defines and takes fewer (scan drops unused ys, carries
  // nothing live depends on, and inputs its body no longer reads; cond and while_loop do the
  // same with their outputs, carries and operands), or nullopt to keep this
  // one. `dce` removes dead code from a body (the caller's pass, so nested bodies get it too).
  virtual std::optional<Pruned> prune(const std::vector<bool>& /*used_outputs*/,
                                      ProgramPass /*dce*/) const {
    return std::nullopt;
  }

  // CSE of two applications to the same inputs whose parameters differ (jit's CSE pass):
  // grad's forward scan and the scan its vjp rule runs to save carries become one scan when
  // their carries provably coincide. nullopt when they do not merge. `cse` is the caller's
  // pass, run on a combined body.
  virtual std::optional<Merged> merge_with(const Primitive& /*other*/, ProgramPass /*cse*/) const {
    return std::nullopt;
  }

  // Loop-invariant code motion (jit's hoisting pass). loop_consts lists, per loop body, its
  // inputs that are the same on every iteration. with_loop_consts returns this loop with body
  // `body` replaced by `new_body`, which takes `added` more consts right after the existing
  // ones (the primitive's inputs grow at the same place: first_input + count); null for
  // primitives without loop_consts.
  virtual std::vector<LoopConsts> loop_consts() const { return {}; }
  virtual std::shared_ptr<const Primitive> with_loop_consts(
      size_t /*body*/, std::shared_ptr<const Program> /*new_body*/,
      const std::vector<Aval>& /*added*/) const {
    return nullptr;
  }

  // Transform rules. `outputs` are the primal outputs of this application.
  virtual std::vector<Array> jvp(const std::vector<Array>& primals,
                                 const std::vector<Array>& tangents,
                                 const std::vector<Array>& outputs) const;
  // Returns one cotangent per input (an empty Array where the input gets none).
  virtual std::vector<Array> vjp(const std::vector<Array>& primals,
                                 const std::vector<Array>& outputs,
                                 const std::vector<Array>& cotangents) const;
  // `dims[i]` is the batch axis of args[i], or -1 if args[i] is not batched.
  virtual Batched vmap(const std::vector<Array>& args, const std::vector<int>& dims) const;

  // SPMD partitioning (core/interpreters/spmd.h): how it computes on blocks of sharded inputs.
  // Default (nullopt): on whole arrays, its inputs gathered, its outputs replicated.
  virtual std::optional<spmd::Plan> sharding_rule(const spmd::RuleArgs& args) const;

 private:
  PrimitiveId id_;
};

// Declares a primitive class's three transform-rule overrides (defined in its family's
// rules file).
#define GRAFT_TRANSFORM_RULES                                                                   \
  std::vector<Array> jvp(const std::vector<Array>& primals, const std::vector<Array>& tangents, \
                         const std::vector<Array>& outputs) const override;                     \
  std::vector<Array> vjp(const std::vector<Array>& primals, const std::vector<Array>& outputs,  \
                         const std::vector<Array>& cotangents) const override;                  \
  Batched vmap(const std::vector<Array>& args, const std::vector<int>& dims) const override

// Declares a primitive class's sharding rule override (defined in its family's rules file).
#define GRAFT_SHARDING_RULE \
  std::optional<spmd::Plan> sharding_rule(const spmd::RuleArgs& args) const override

// Applies `p` to `inputs`: runs the shape rule and returns the (unevaluated) outputs.
std::vector<Array> bind(std::shared_ptr<const Primitive> p, std::vector<Array> inputs);
// For single-output primitives.
Array bind1(std::shared_ptr<const Primitive> p, std::vector<Array> inputs);

// Convenience for primitives with parameters: bind1(std::make_shared<P>(params...), inputs).
template <typename P, typename... Params>
Array apply(std::vector<Array> inputs, Params&&... params) {
  return bind1(std::make_shared<const P>(std::forward<Params>(params)...), std::move(inputs));
}

}  // namespace graft
