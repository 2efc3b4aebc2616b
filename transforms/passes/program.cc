#include "transforms/passes/program.h"

#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "core/backend/cpu/kernel.h"
#include "core/error.h"
#include "transforms/passes/passes.h"

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

namespace {

// Whether every leaf `a` reaches (through pending nodes) is evaluated or one of `inputs`.
bool closed_over(const Array& a, const std::vector<Array>& inputs) {
  std::unordered_set<const Node*> seen, allowed;
  for (const Array& in : inputs) allowed.insert(in.node().get());
  std::vector<std::shared_ptr<Node>> stack{a.node()};
  std::vector<Array> node_inputs;
  while (!stack.empty()) {
    std::shared_ptr<Node> n = std::move(stack.back());
    stack.pop_back();
    if (!seen.insert(n.get()).second || allowed.count(n.get())) continue;
    if (!n->pending_inputs(&node_inputs)) continue;  // evaluated
    if (n->primitive == nullptr) return false;
    for (const Array& in : node_inputs) stack.push_back(in.node());
  }
  return true;
}

}  // namespace

std::optional<Program> lower(const Graph& g, const std::vector<Array>& effects) {
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
  // Iterative post-order over pending nodes (evaluated ones are leaves: constants). Each
  // visit holds a copy of its node's inputs: a captured array may be evaluated by another
  // thread meanwhile, which clears the node's own list.
  struct Visit {
    std::shared_ptr<Node> node;
    std::vector<Array> inputs;
    size_t next = 0;
  };
  std::vector<Visit> stack;
  std::vector<Array> roots = g.outputs;
  for (const Array& e : effects) {
    if (closed_over(e, g.inputs)) roots.push_back(e);
  }
  auto visit = [&](const std::shared_ptr<Node>& n) {
    if (ids.count(n.get())) return;
    Visit v{n, {}, 0};
    if (!n->pending_inputs(&v.inputs)) return;  // evaluated: a constant
    ids[n.get()];                               // mark as being visited
    stack.push_back(std::move(v));
  };
  for (const Array& o : roots) {
    visit(o.node());
    while (!stack.empty()) {
      Visit& v = stack.back();
      if (v.node->primitive == nullptr) return std::nullopt;  // an outer trace's placeholder
      if (v.next < v.inputs.size()) {
        visit(v.inputs[v.next++].node());  // may reallocate the stack: `v` is not used after
        continue;
      }
      Instr instr;
      instr.prim = v.node->primitive;
      for (const Array& in : v.inputs) instr.in.push_back(id_of(in));
      for (const Aval& a : v.node->avals) instr.out.push_back(p.add_value(a));
      ids[v.node.get()] = instr.out;
      p.instrs.push_back(std::move(instr));
      stack.pop_back();
    }
  }
  for (const Array& o : g.outputs) p.outputs.push_back(id_of(o));
  return p;
}

std::vector<Array> execute(const Program& p, const std::vector<Array>& args, const BufferPlan* plan,
                           const std::vector<bool>& donated) {
  if (args.size() != p.inputs.size()) {
    fail("jit", "program takes ", p.inputs.size(), " arrays, got ", args.size());
  }
  for (const Array& a : args) {
    if (a.node()->donated) fail_donated();
  }
  std::vector<Array> env(p.avals.size());
  for (size_t i = 0; i < args.size(); ++i) env[p.inputs[i]] = args[i];
  for (size_t i = 0; i < p.constants.size(); ++i) env[p.constants[i]] = p.constant_values[i];
  // With a plan, instructions run in program order (the order liveness was computed in, so
  // an in-place write happens only after every other reader ran) and each value is dropped
  // after its last use. Without, eval runs the graph.
  if (plan != nullptr) eval(args);
  for (size_t i = 0; i < p.instrs.size(); ++i) {
    const Instr& instr = p.instrs[i];
    // What bind does, minus the shape rule: the avals are known from compilation.
    auto node = std::make_shared<Node>();
    node->primitive = instr.prim;
    if (plan != nullptr) node->reusable_inputs = reusable_inputs(p, *plan, i, donated);
    node->inputs.reserve(instr.in.size());
    for (int v : instr.in) node->inputs.push_back(env[v]);
    node->avals.reserve(instr.out.size());
    for (int v : instr.out) node->avals.push_back(p.avals[v]);
    for (uint32_t k = 0; k < instr.out.size(); ++k) env[instr.out[k]] = Array(node, k);
    if (plan == nullptr) continue;
    cpu::run_kernel(*node);
    node->inputs.clear();
    for (int v : instr.in) {
      if (plan->last_use[v] == static_cast<int>(i) && !plan->keep[v]) env[v] = Array();
    }
  }
  std::vector<Array> outs;
  outs.reserve(p.outputs.size());
  for (int v : p.outputs) outs.push_back(env[v]);
  std::vector<Array> todo = outs;  // and the side effects, whose outputs nobody uses
  if (plan == nullptr) {
    for (const Instr& instr : p.instrs) {
      if (instr.prim->has_side_effects()) todo.push_back(env[instr.out[0]]);
    }
  }
  env.clear();  // so eval frees intermediates as soon as their last consumer has run
  if (plan == nullptr) eval(todo);
  todo.clear();
  for (size_t j = 0; j < args.size() && j < donated.size(); ++j) {
    if (!donated[j]) continue;
    // An output that is the donated argument itself (f(x) = x) gets a handle of its own.
    for (Array& o : outs) {
      if (o.node() == args[j].node())
        o = Array::from_buffer(o.buffer(), o.shape(), o.dtype(), o.weak_type());
    }
    // Drop the handle's buffer so that an output now living in it is its only owner (the
    // next donation of that output can reuse it again).
    Node& n = *args[j].node();
    n.donated = true;
    n.drop_buffers();
  }
  return outs;
}

}  // namespace graft
