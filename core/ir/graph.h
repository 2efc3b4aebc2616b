// A traced function as a graph: the placeholders it was called on, its outputs, and the nodes
// in between (those that depend on the placeholders), in topological order. Transforms walk
// this list and re-apply each node's primitive (replay) with their own rules.
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

// Calls fn on placeholders shaped like `args` (or with the given avals) and records the
// graph. Errors in fn propagate.
Graph trace(const FlatFn& fn, const std::vector<Array>& args);
Graph trace_avals(const FlatFn& fn, const std::vector<Aval>& avals);

// Values of graph nodes in a replay: maps each node of the original graph to new outputs.
class Env {
 public:
  void set(const Node* n, std::vector<Array> outs) { map_[n] = std::move(outs); }
  bool has(const Node* n) const { return map_.count(n) != 0; }
  const std::vector<Array>& get(const Node* n) const { return map_.at(n); }
  // The replacement of `a`, or `a` itself when it is outside the graph (a constant).
  Array lookup(const Array& a) const;
  std::vector<Array> lookup(const std::vector<Array>& as) const;

 private:
  std::unordered_map<const Node*, std::vector<Array>> map_;
};

// Re-applies every node of g to `args` (one per input). Returns the environment.
Env replay(const Graph& g, const std::vector<Array>& args);

}  // namespace graft
