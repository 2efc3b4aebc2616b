#include "core/ir/graph.h"

#include <unordered_set>

#include "core/error.h"
#include "core/ir/primitive.h"

namespace graft {

std::vector<Array> make_placeholders(const std::vector<Array>& like) {
  std::vector<Array> out;
  out.reserve(like.size());
  for (const Array& a : like) {
    if (!a.valid()) fail("trace", "argument is an empty Array handle");
    out.push_back(Array::placeholder(a.aval()));
  }
  return out;
}

bool Graph::depends(const Node* n) const {
  auto it = dependent_.find(n);
  return it != dependent_.end() && it->second;
}

std::vector<Aval> avals_of_args(const std::vector<Array>& args) {
  std::vector<Aval> avals;
  avals.reserve(args.size());
  for (const Array& a : args) {
    if (!a.valid()) fail("trace", "argument is an empty Array handle");
    avals.push_back(a.aval());
  }
  return avals;
}

Graph trace(const FlatFn& fn, const std::vector<Array>& args) {
  return trace_avals(fn, avals_of_args(args));
}

Graph trace_avals(const FlatFn& fn, const std::vector<Aval>& avals, uint64_t binds) {
  Graph g;
  for (const Aval& a : avals) g.inputs.push_back(Array::placeholder(a));
  g.outputs = fn(g.inputs);
  for (const Array& o : g.outputs) {
    if (!o.valid()) fail("trace", "the traced function returned an empty Array handle");
  }
  for (const Array& in : g.inputs) g.dependent_[in.node().get()] = true;
  // Iterative post-order over tracer nodes: only they can depend on our placeholders.
  std::unordered_set<const Node*> seen;
  std::vector<std::pair<Node*, size_t>> stack;
  for (const Array& o : g.outputs) {
    Node* root = o.node().get();
    if (!root->tracer || !seen.insert(root).second) continue;
    stack.emplace_back(root, 0);
    while (!stack.empty()) {
      auto& [n, next] = stack.back();
      if (next < n->inputs.size()) {
        Node* in = n->inputs[next++].node().get();
        if (in->tracer && seen.insert(in).second) stack.emplace_back(in, 0);
        continue;
      }
      if (n->primitive != nullptr) {  // placeholders (ours or an outer trace's) are leaves
        bool dep = (n->primitive->axis_names() & binds) != 0;
        for (const Array& in : n->inputs) dep = dep || g.depends(in.node().get());
        if (dep) {
          g.dependent_[n] = true;
          g.nodes.push_back(n);
        }
      }
      stack.pop_back();
    }
  }
  return g;
}

}  // namespace graft
