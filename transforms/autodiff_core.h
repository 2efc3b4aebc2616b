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
#include <vector>

#include "transforms/graph.h"

namespace graft::detail {

struct VjpResult {
  std::vector<Array> outputs;
  // Takes one cotangent per output (empty = zero); returns one per primal (zeros for
  // non-floating primals).
  std::function<std::vector<Array>(const std::vector<Array>&)> pullback;
};

VjpResult vjp_flat(const FlatFn& fn, const std::vector<Array>& primals);

// Returns the outputs and their tangents (zeros where a tangent is symbolically zero).
std::pair<std::vector<Array>, std::vector<Array>> jvp_flat(const FlatFn& fn,
                                                           const std::vector<Array>& primals,
                                                           const std::vector<Array>& tangents);

// Adds b to a, treating empty Arrays as zeros.
Array add_any(const Array& a, const Array& b);

}  // namespace graft::detail
