#include "core/ir/program.h"

#include <cstring>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "core/error.h"
#include "core/ir/effects.h"

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

std::vector<Aval> Program::input_avals() const {
  std::vector<Aval> out;
  for (int v : inputs) out.push_back(avals[v]);
  return out;
}

std::vector<Aval> Program::output_avals() const {
  std::vector<Aval> out;
  for (int v : outputs) out.push_back(avals[v]);
  return out;
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

namespace {

// Whether n is a pending broadcast_in_dim too big to fold (too_big_to_fold) from its operand
// (set in *operand).
bool inflating_broadcast(Node& n, std::vector<Array>* operand) {
  if (n.primitive == nullptr || n.primitive->id() != PrimitiveId::kBroadcastInDim) return false;
  if (!n.pending_inputs(operand) || operand->size() != 1) return false;
  auto bytes = [](const Aval& a) { return numel(a.shape) * dtype_size(a.dtype); };
  const int64_t out = bytes(n.avals.at(0)), in = bytes((*operand)[0].aval());
  return too_big_to_fold(in, out);
}

// With `lifted` set, tracers outside g (values of an outer trace) become leading inputs
// (appended to *lifted); without, reaching one fails (nullopt).
std::optional<Program> lower_impl(const Graph& g, const std::vector<Array>& effects,
                                  std::vector<Array>* lifted) {
  Program p;
  std::vector<int> lifted_ids;
  std::unordered_set<const Node*> outer;
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
    if (id >= 0) return id;
    if (outer.count(a.node().get())) {
      id = p.add_value(a.aval());
      lifted_ids.push_back(id);
      lifted->push_back(a);
    } else {
      id = p.add_constant(a);  // only evaluated leaves get here
    }
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
    // A body (lifted) keeps the effects that depend on its arguments; what they read of
    // outer traces is lifted like any other value.
    if (lifted != nullptr ? g.depends(e.node().get()) : closed_over(e, g.inputs)) {
      roots.push_back(e);
    }
  }
  auto visit = [&](const std::shared_ptr<Node>& n) {
    if (ids.count(n.get())) return;
    if (lifted != nullptr && !g.depends(n.get())) {
      if (n->tracer) {  // an outer trace's value: lifted into an input
        outer.insert(n.get());
        ids[n.get()];
        return;
      }
      // A pending value that depends on no tracer at all: computed now, once, as the graph's
      // shared node was before (a body's constant must not be recomputed per iteration).
      // Except a broadcast to over a MiB that inflates its operand: only the operand is
      // computed and the broadcast stays a body instruction, as jit's passes keep such
      // broadcasts instructions (fold_constants) inside loop bodies (hoist), where fused groups
      // read the small operand in place (a RoPE table spread over batch and heads).
      std::vector<Array> operand;
      if (inflating_broadcast(*n, &operand)) {
        eval(operand);
      } else {
        eval(std::vector<Array>{Array(n, 0)});
      }
    }
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
  if (!lifted_ids.empty()) p.inputs.insert(p.inputs.begin(), lifted_ids.begin(), lifted_ids.end());
  return p;
}

bool same_constant(const Array& a, const Array& b) {
  if (a.same(b)) return true;
  if (!(a.aval() == b.aval())) return false;
  return std::memcmp(a.raw_data(), b.raw_data(), static_cast<size_t>(a.nbytes())) == 0;
}

}  // namespace

bool too_big_to_fold(int64_t in_bytes, int64_t out_bytes) {
  return out_bytes > (int64_t{1} << 20) && out_bytes > in_bytes;
}

std::optional<Program> lower(const Graph& g, const std::vector<Array>& effects) {
  return lower_impl(g, effects, nullptr);
}

ClosedProgram trace_closed(const FlatFn& fn, const std::vector<Aval>& avals, AxisMask binds) {
  // The body's side effects (a debug_print whose result it does not use) are collected as
  // top-level jit's are and traced as extra outputs (so the graph knows what they depend
  // on); those that depend on the body's arguments stay in the body, the others belong to
  // the trace around it and go to its collector.
  std::vector<Array> effects;
  size_t num_outputs = 0;
  FlatFn with_effects = [&](const std::vector<Array>& in) {
    struct Restore {
      std::vector<Array>* prev;
      ~Restore() { set_effect_collector(prev); }
    } restore{set_effect_collector(&effects)};
    std::vector<Array> out = fn(in);
    num_outputs = out.size();
    out.insert(out.end(), effects.begin(), effects.end());
    return out;
  };
  Graph g = trace_avals(with_effects, avals, binds);
  g.outputs.resize(num_outputs);
  std::vector<Array> body_effects;
  for (const Array& e : effects) {
    if (g.depends(e.node().get())) {
      body_effects.push_back(e);
    } else {
      record_effect(e);
    }
  }
  ClosedProgram c;
  std::optional<Program> p = lower_impl(g, body_effects, &c.consts);
  c.program = std::make_shared<const Program>(std::move(*p));
  return c;
}

std::vector<Array> run_program(const Program& p, const std::vector<Array>& args) {
  if (args.size() != p.inputs.size()) {
    fail("run_program", "the program takes ", p.inputs.size(), " arrays, got ", args.size());
  }
  std::vector<Array> env(p.avals.size());
  for (size_t i = 0; i < args.size(); ++i) env[p.inputs[i]] = args[i];
  for (size_t i = 0; i < p.constants.size(); ++i) env[p.constants[i]] = p.constant_values[i];
  std::vector<Array> ins;
  for (const Instr& instr : p.instrs) {
    ins.clear();
    for (int v : instr.in) ins.push_back(env[v]);
    std::vector<Array> outs = graft::bind(instr.prim, ins);
    for (size_t k = 0; k < outs.size(); ++k) env[instr.out[k]] = std::move(outs[k]);
  }
  std::vector<Array> outs;
  outs.reserve(p.outputs.size());
  for (int v : p.outputs) outs.push_back(env[v]);
  return outs;
}

FlatFn program_fn(std::shared_ptr<const Program> p) {
  return [p = std::move(p)](const std::vector<Array>& args) { return run_program(*p, args); };
}

bool same_program(const Program& a, const Program& b) {
  if (&a == &b) return true;
  if (a.avals != b.avals || a.inputs != b.inputs || a.outputs != b.outputs ||
      a.constants != b.constants || a.instrs.size() != b.instrs.size()) {
    return false;
  }
  for (size_t i = 0; i < a.constants.size(); ++i) {
    if (!same_constant(a.constant_values[i], b.constant_values[i])) return false;
  }
  for (size_t i = 0; i < a.instrs.size(); ++i) {
    const Instr &x = a.instrs[i], &y = b.instrs[i];
    if (x.in != y.in || x.out != y.out) return false;
    if (x.prim != y.prim && !x.prim->same_params(*y.prim)) return false;
  }
  return true;
}

size_t hash_program(const Program& p) {
  size_t h = p.avals.size() * 1000003u + p.instrs.size();
  auto mix = [&h](size_t v) { h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2); };
  for (const Aval& a : p.avals) {
    mix(static_cast<size_t>(a.dtype));
    for (int64_t d : a.shape) mix(static_cast<size_t>(d));
  }
  for (const Instr& instr : p.instrs) {
    mix(static_cast<size_t>(instr.prim->id()));
    for (int v : instr.in) mix(static_cast<size_t>(v));
    // Bodies are compared by same_params, so programs differing only there may differ here.
    for (const SubProgram& sub : instr.prim->sub_programs()) mix(hash_program(*sub.program));
  }
  for (int v : p.outputs) mix(static_cast<size_t>(v));
  return h;
}

}  // namespace graft
