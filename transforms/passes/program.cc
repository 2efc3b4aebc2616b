#include "transforms/passes/program.h"

#include <unordered_map>
#include <utility>

#include "core/error.h"

namespace graft {

int Program::add_constant(const Array& value) {
  int id = add_value(value.aval());
  constants.push_back(id);
  constant_values.push_back(value);
  return id;
}

const Array* Program::constant(int v) const {
  for (size_t i = 0; i < constants.size(); ++i) {
    if (constants[i] == v) return &constant_values[i];
  }
  return nullptr;
}

std::optional<Program> lower(const Graph& g) {
  Program p;
  // Value ids of each visited node's outputs.
  std::unordered_map<const Node*, std::vector<int>> ids;
  for (const Array& in : g.inputs) {
    int id = p.add_value(in.aval());
    p.inputs.push_back(id);
    ids[in.node().get()] = {id};
  }
  auto id_of = [&](const Array& a) -> int {
    auto& slot = ids[a.node().get()];
    if (slot.empty()) slot.assign(a.node()->avals.size(), -1);
    int& id = slot[a.output_index()];
    if (id < 0) id = p.add_constant(a);  // only evaluated leaves get here
    return id;
  };
  // Iterative post-order over pending nodes (evaluated ones are leaves: constants).
  std::vector<std::pair<Node*, size_t>> stack;
  for (const Array& o : g.outputs) {
    Node* root = o.node().get();
    if (ids.count(root) || !root->buffers.empty()) continue;
    stack.emplace_back(root, 0);
    ids[root];  // mark as being visited
    while (!stack.empty()) {
      auto& [n, next] = stack.back();
      if (n->primitive == nullptr) return std::nullopt;  // an outer trace's placeholder
      if (next < n->inputs.size()) {
        Node* in = n->inputs[next++].node().get();
        if (!in->buffers.empty() || ids.count(in)) continue;
        ids[in];
        stack.emplace_back(in, 0);
        continue;
      }
      Instr instr;
      instr.prim = n->primitive;
      for (const Array& in : n->inputs) instr.in.push_back(id_of(in));
      for (const Aval& a : n->avals) instr.out.push_back(p.add_value(a));
      ids[n] = instr.out;
      p.instrs.push_back(std::move(instr));
      stack.pop_back();
    }
  }
  for (const Array& o : g.outputs) p.outputs.push_back(id_of(o));
  return p;
}

std::vector<Array> execute(const Program& p, const std::vector<Array>& args) {
  if (args.size() != p.inputs.size()) {
    fail("jit", "program takes ", p.inputs.size(), " arrays, got ", args.size());
  }
  std::vector<Array> env(p.avals.size());
  for (size_t i = 0; i < args.size(); ++i) env[p.inputs[i]] = args[i];
  for (size_t i = 0; i < p.constants.size(); ++i) env[p.constants[i]] = p.constant_values[i];
  for (const Instr& instr : p.instrs) {
    // What bind does, minus the shape rule: the avals are known from compilation.
    auto node = std::make_shared<Node>();
    node->primitive = instr.prim;
    node->inputs.reserve(instr.in.size());
    for (int v : instr.in) node->inputs.push_back(env[v]);
    node->avals.reserve(instr.out.size());
    for (int v : instr.out) node->avals.push_back(p.avals[v]);
    for (uint32_t k = 0; k < instr.out.size(); ++k) env[instr.out[k]] = Array(node, k);
  }
  std::vector<Array> outs;
  outs.reserve(p.outputs.size());
  for (int v : p.outputs) outs.push_back(env[v]);
  env.clear();  // so eval frees intermediates as soon as their last consumer has run
  eval(outs);
  return outs;
}

}  // namespace graft
