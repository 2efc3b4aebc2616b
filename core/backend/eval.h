// The eager evaluator behind eval() (core/device/runtime.h): runs the pending part of a graph on
// the default backend, in topological order, without recursion. Each node drops its inputs once it
// has run, so an intermediate buffer is freed as soon as its last consumer has run (unless a user
// handle still holds it).
#pragma once

#include <memory>
#include <vector>

#include "core/array.h"

namespace graft {

// Computes the pending part of the graph below `arrays` (what graft::eval calls).
void run_pending(const std::vector<Array>& arrays);

// Nodes of the pending graph below `roots`, inputs before users (post-order, iterative).
std::vector<std::shared_ptr<Node>> pending_nodes(const std::vector<Array>& roots);

}  // namespace graft
