// Autodiff over flat lists of arrays: the engine behind grad, vjp, jvp (transforms/autodiff.h).
//
// vjp traces fn on placeholders, replays the graph on the primals (the forward pass, whose
// values are the residuals the pullback keeps), and the pullback walks the graph backwards
// applying each primitive's vjp rule. jvp replays the graph pushing tangents through each
// primitive's jvp rule. Only floating arrays carry tangents and cotangents; an empty Array
// stands for a symbolic zero.
#pragma once

#include <functional>
#include <memory>
#include <utility>
#include <vector>

#include "core/ir/graph.h"

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

// Binds p (or p->vjp_forward() when it has one) as reverse mode's forward pass does: the
// outputs may be followed by values p's vjp rule reads.
std::vector<Array> bind_for_vjp(const std::shared_ptr<const Primitive>& p,
                                const std::vector<Array>& inputs);

// An output of a graph node: (node, output index).
using OutKey = std::pair<const Node*, uint32_t>;

// The backward pass over g: cts[j] (empty = zero) is the cotangent of targets[j] (outputs of
// g's nodes or inputs; others are ignored); each node's vjp rule is applied to its values in
// env. Returns one cotangent per input of g (empty where none reaches it).
std::vector<Array> backprop(const Graph& g, const Env& env, const std::vector<OutKey>& targets,
                            const std::vector<Array>& cts);

// The forward values (primals and replayed node outputs, in forward order) that the pullback of
// fn at primals reads: found by tracing the pullback on placeholder cotangents and walking what
// its graph reads from outside, through any not-yet-evaluated nodes the vjp rules built (such
// as remat's recomputation) down to forward values. These are what a pullback needs to keep;
// vjp_flat's pullback currently holds every forward value until it is dropped.
std::vector<Array> vjp_residuals(const FlatFn& fn, const std::vector<Array>& primals);

// Returns the outputs and their tangents (zeros where a tangent is symbolically zero).
std::pair<std::vector<Array>, std::vector<Array>> jvp_flat(const FlatFn& fn,
                                                           const std::vector<Array>& primals,
                                                           const std::vector<Array>& tangents);

}  // namespace graft::detail
