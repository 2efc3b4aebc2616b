// Tracing: a function called on placeholders, recorded as a graph (the placeholders, its
// outputs, and the nodes in between that depend on the placeholders, in topological order).
// The graph is only a step on the way to a Program (core/ir/program.h: lower, trace_closed),
// which is what the transforms interpret and the backends compile.
#pragma once

#include <functional>
#include <unordered_map>
#include <vector>

#include "core/array.h"

namespace graft {

// A function over flat lists of arrays: what transforms trace.
using FlatFn = std::function<std::vector<Array>(const std::vector<Array>&)>;

struct Graph {
  std::vector<Array> inputs;   // placeholders
  std::vector<Array> outputs;  // may include inputs themselves or constants
  std::vector<Node*> nodes;    // nodes depending on inputs, inputs before users; no placeholders
  bool depends(const Node* n) const;  // n is an input or in `nodes`

  std::unordered_map<const Node*, bool> dependent_;
};

// Placeholders with the avals of `like` (a fresh tracer per array).
std::vector<Array> make_placeholders(const std::vector<Array>& like);

// The avals of `args`, failing ("[trace] ...") on an empty handle.
std::vector<Aval> avals_of_args(const std::vector<Array>& args);

// Calls fn on placeholders shaped like `args` (or with the given avals) and records the
// graph. Errors in fn propagate.
Graph trace(const FlatFn& fn, const std::vector<Array>& args);
// A collective over one of `binds` (axes this trace binds) counts as depending on them.
Graph trace_avals(const FlatFn& fn, const std::vector<Aval>& avals, uint64_t binds = 0);

}  // namespace graft
