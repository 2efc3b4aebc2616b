// Autodiff as interpreters of Programs: the engine behind grad, vjp, jvp (transforms/autodiff.h)
// and behind the rules of primitives that hold bodies (scan, cond, while_loop, remat, ...),
// which call the *_program forms on their bodies directly, with no re-trace.
//
// The FlatFn forms trace fn into a closed Program (trace_closed: values of outer traces it
// uses become leading inputs that carry no derivative) and interpret that. vjp runs the
// program's equations forward on the primals with bind (the values computed are the
// residuals the pullback keeps); the pullback walks the equations backwards applying each
// primitive's vjp rule. jvp runs them forward pushing tangents through each jvp rule. Only
// floating values carry tangents and cotangents; an empty Array stands for a symbolic zero.
#pragma once

#include <functional>
#include <memory>
#include <utility>
#include <vector>

#include "core/ir/program.h"

namespace graft {
class Primitive;
}

namespace graft::detail {

struct VjpResult {
  std::vector<Array> outputs;
  // Takes one cotangent per output (empty = zero); returns one per primal (zeros for
  // non-floating primals).
  std::function<std::vector<Array>(const std::vector<Array>&)> pullback;
};

VjpResult vjp_flat(const FlatFn& fn, const std::vector<Array>& primals);

// vjp of a program at args (one per input). The first num_fixed inputs carry no derivative
// (a closed program's consts): the pullback returns one cotangent per remaining input.
VjpResult vjp_program(std::shared_ptr<const Program> p, const std::vector<Array>& args,
                      size_t num_fixed = 0);

// Binds p (or p->vjp_forward() when it has one) as reverse mode's forward pass does: the
// outputs may be followed by values p's vjp rule reads.
std::vector<Array> bind_for_vjp(const std::shared_ptr<const Primitive>& p,
                                const std::vector<Array>& inputs);

// The forward values (primals and computed equation outputs, in forward order) that the
// pullback of fn at primals reads: found by tracing the pullback on placeholder cotangents and
// walking what its graph reads from outside, through any not-yet-evaluated nodes the vjp
// rules built (such as remat's recomputation) down to forward values. These are what a
// pullback needs to keep; vjp_flat's pullback currently holds every forward value until it is
// dropped.
std::vector<Array> vjp_residuals(const FlatFn& fn, const std::vector<Array>& primals);

// Reverse mode in two halves, for a rule that runs a body's forward pass in one loop and its
// pullback in another (scan's vjp): the forward pass hands out the values the pullback reads
// (the residuals), and the pullback takes them back instead of recomputing the body. Positions
// count the forward values flat: p's inputs, then each equation's bind_for_vjp outputs.
struct VjpSaving {
  std::shared_ptr<const Program> p;
  size_t num_fixed = 0;
  std::vector<size_t> first;       // per equation: the position of its first forward value
  std::vector<size_t> saved;       // positions past the inputs the pullback reads, ascending
  std::vector<Aval> saved_avals;   // their avals
};
// Finds the residuals of p's pullback on placeholders of p's input avals.
VjpSaving plan_vjp_saving(std::shared_ptr<const Program> p, size_t num_fixed = 0);
// p's outputs at args, then the saved values (one per s.saved).
std::vector<Array> vjp_forward_saving(const VjpSaving& s, const std::vector<Array>& args);
// The pullback at args (one per input of p) from the values vjp_forward_saving saved: one
// cotangent per output in, one per input past num_fixed out. Equations are bound again
// lazily, so what the pullback does not read is never computed.
std::vector<Array> vjp_pullback_saved(const VjpSaving& s, const std::vector<Array>& args,
                                      const std::vector<Array>& saved,
                                      const std::vector<Array>& cts);

// Returns the outputs and their tangents (zeros where a tangent is symbolically zero).
std::pair<std::vector<Array>, std::vector<Array>> jvp_flat(const FlatFn& fn,
                                                           const std::vector<Array>& primals,
                                                           const std::vector<Array>& tangents);

// jvp of a program: one tangent per input (empty = zero). Returns the outputs and their
// tangents; with instantiate_zeros false a symbolically zero output tangent stays empty.
std::pair<std::vector<Array>, std::vector<Array>> jvp_program(const Program& p,
                                                              const std::vector<Array>& args,
                                                              const std::vector<Array>& tangents,
                                                              bool instantiate_zeros = true);

}  // namespace graft::detail
