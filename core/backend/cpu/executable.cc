#include "core/backend/cpu/executable.h"

#include <utility>

#include "core/backend/cpu/kernel.h"
#include "core/error.h"

namespace graft {

std::vector<Array> execute(const Program& p, const std::vector<Array>& args, const BufferPlan* plan,
                           const std::vector<bool>& donated) {
  if (args.size() != p.inputs.size()) {
    fail("jit", "program takes ", p.inputs.size(), " arrays, got ", args.size());
  }
  for (const Array& a : args) {
    if (a.node()->donated()) fail_donated();
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
    node->inputs.reserve(instr.in.size());
    for (int v : instr.in) node->inputs.push_back(env[v]);
    node->avals.reserve(instr.out.size());
    for (int v : instr.out) node->avals.push_back(p.avals[v]);
    for (uint32_t k = 0; k < instr.out.size(); ++k) env[instr.out[k]] = Array(node, k);
    if (plan == nullptr) continue;
    cpu::run_kernel(*node, reusable_inputs(p, *plan, i, donated));
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
    n.drop_buffers();
  }
  return outs;
}

}  // namespace graft
