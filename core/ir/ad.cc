#include "core/ir/ad.h"

#include <unordered_map>

#include "core/error.h"
#include "core/ops.h"
#include "core/ops_util.h"
#include "core/primitive.h"

namespace graft::detail {

namespace {

// Gives a rule's tangent / cotangent the dtype and shape the value it belongs to has.
Array conform(const char* what, const Primitive& p, Array t, const Aval& like) {
  if (!t.valid()) return t;
  if (!is_floating(like.dtype)) return Array();  // integer values carry no derivative
  if (t.shape() != like.shape) {
    fail(p.name(), what, " rule returned shape ", shape_str(t.shape()), ", expected ",
         shape_str(like.shape));
  }
  if (t.dtype() != like.dtype) t = astype(t, like.dtype);
  return t;
}

struct Key {
  const Node* node;
  uint32_t index;
  bool operator==(const Key& o) const { return node == o.node && index == o.index; }
};
struct KeyHash {
  size_t operator()(const Key& k) const { return std::hash<const void*>()(k.node) * 31 + k.index; }
};

}  // namespace

std::vector<Array> backprop(const Graph& g, const Env& env, const std::vector<OutKey>& targets,
                            const std::vector<Array>& cts) {
  std::unordered_map<Key, Array, KeyHash> acc;
  auto accumulate = [&](const Node* node, uint32_t index, const Array& ct) {
    if (!ct.valid() || !g.depends(node)) return;
    Key k{node, index};
    acc[k] = add_any(acc[k], ct);
  };
  for (size_t j = 0; j < cts.size() && j < targets.size(); ++j) {
    if (!cts[j].valid()) continue;
    const Aval& a = targets[j].first->avals[targets[j].second];
    if (!is_floating(a.dtype)) continue;
    accumulate(targets[j].first, targets[j].second,
               cts[j].dtype() == a.dtype ? cts[j] : astype(cts[j], a.dtype));
  }
  for (auto it = g.nodes.rbegin(); it != g.nodes.rend(); ++it) {
    Node* n = *it;
    std::vector<Array> out_cts(n->avals.size());
    bool any = false;
    for (uint32_t o = 0; o < n->avals.size(); ++o) {
      auto f = acc.find(Key{n, o});
      if (f != acc.end() && f->second.valid()) {
        out_cts[o] = f->second;
        any = true;
        acc.erase(f);
      }
    }
    if (!any) continue;
    std::vector<Array> in_cts = n->primitive->vjp(env.lookup(n->inputs), env.get(n), out_cts);
    if (in_cts.size() != n->inputs.size()) {
      fail(n->primitive->name(), "vjp rule returned ", in_cts.size(), " cotangents for ",
           n->inputs.size(), " inputs");
    }
    for (size_t i = 0; i < in_cts.size(); ++i) {
      accumulate(n->inputs[i].node().get(), n->inputs[i].output_index(),
                 conform("vjp", *n->primitive, in_cts[i], n->inputs[i].aval()));
    }
  }
  std::vector<Array> out(g.inputs.size());
  for (size_t i = 0; i < g.inputs.size(); ++i) {
    auto f = acc.find(Key{g.inputs[i].node().get(), 0});
    if (f != acc.end()) out[i] = f->second;
  }
  return out;
}

namespace {

struct Forward {
  std::shared_ptr<Graph> g;
  std::shared_ptr<Env> env;
};

// A replay with bind_for_vjp: a node's values in env may be followed by ones its rule reads.
Forward forward(const FlatFn& fn, const std::vector<Array>& primals) {
  auto g = std::make_shared<Graph>(trace(fn, primals));
  auto env = std::make_shared<Env>();
  for (size_t i = 0; i < g->inputs.size(); ++i) env->set(g->inputs[i].node().get(), {primals[i]});
  for (Node* n : g->nodes) env->set(n, bind_for_vjp(n->primitive, env->lookup(n->inputs)));
  return {g, env};
}

std::function<std::vector<Array>(const std::vector<Array>&)> make_pullback(
    const Forward& fw, const std::vector<Array>& primals) {
  std::vector<Aval> primal_avals;
  for (const Array& p : primals) primal_avals.push_back(p.aval());
  auto g = fw.g;
  auto env = fw.env;
  return [g, env, primal_avals](const std::vector<Array>& cts) {
    if (cts.size() != g->outputs.size()) {
      fail("vjp", "pullback takes ", g->outputs.size(), " cotangents, got ", cts.size());
    }
    std::vector<OutKey> targets;
    for (size_t j = 0; j < cts.size(); ++j) {
      const Aval& a = g->outputs[j].aval();
      if (cts[j].valid() && cts[j].shape() != a.shape) {
        fail("vjp", "cotangent ", j, " has shape ", shape_str(cts[j].shape()),
             " but the output has shape ", shape_str(a.shape));
      }
      targets.push_back({g->outputs[j].node().get(), g->outputs[j].output_index()});
    }
    std::vector<Array> out = backprop(*g, *env, targets, cts);
    for (size_t i = 0; i < out.size(); ++i) {
      if (!out[i].valid()) out[i] = zeros(primal_avals[i].shape, primal_avals[i].dtype);
    }
    return out;
  };
}

}  // namespace

std::vector<Array> bind_for_vjp(const std::shared_ptr<const Primitive>& p,
                                const std::vector<Array>& inputs) {
  std::shared_ptr<const Primitive> f = p->vjp_forward();
  return bind(f ? f : p, inputs);
}

VjpResult vjp_flat(const FlatFn& fn, const std::vector<Array>& primals) {
  Forward fw = forward(fn, primals);
  VjpResult r;
  r.outputs = fw.env->lookup(fw.g->outputs);
  r.pullback = make_pullback(fw, primals);
  return r;
}

std::vector<Array> vjp_residuals(const FlatFn& fn, const std::vector<Array>& primals) {
  Forward fw = forward(fn, primals);
  // The forward values, in forward order: the primals, then each node's outputs.
  std::vector<Array> values = primals;
  for (const Node* n : fw.g->nodes) {
    for (const Array& v : fw.env->get(n)) values.push_back(v);
  }
  std::unordered_map<Key, size_t, KeyHash> index;
  for (size_t i = 0; i < values.size(); ++i) {
    index.emplace(Key{values[i].node().get(), values[i].output_index()}, i);
  }
  // Trace the pullback on placeholder cotangents; what its graph reads from outside (directly,
  // or through nodes the rules built from forward values, e.g. remat's recomputation) is kept.
  std::vector<Array> outs = fw.env->lookup(fw.g->outputs);
  Graph bwd = trace(make_pullback(fw, primals), outs);
  std::vector<bool> used(values.size(), false);
  std::unordered_map<const Node*, bool> seen;
  std::vector<Array> stack;
  for (const Node* n : bwd.nodes) {
    for (const Array& in : n->inputs) stack.push_back(in);
  }
  for (const Array& o : bwd.outputs) stack.push_back(o);
  while (!stack.empty()) {
    Array a = stack.back();
    stack.pop_back();
    auto f = index.find(Key{a.node().get(), a.output_index()});
    if (f != index.end()) {
      used[f->second] = true;
      continue;
    }
    if (bwd.depends(a.node().get()) || !seen.emplace(a.node().get(), true).second) continue;
    for (const Array& in : a.node()->inputs) stack.push_back(in);
  }
  std::vector<Array> kept;
  for (size_t i = 0; i < values.size(); ++i) {
    if (used[i]) kept.push_back(values[i]);
  }
  return kept;
}

std::pair<std::vector<Array>, std::vector<Array>> jvp_flat(const FlatFn& fn,
                                                           const std::vector<Array>& primals,
                                                           const std::vector<Array>& tangents) {
  if (primals.size() != tangents.size()) {
    fail("jvp", "got ", primals.size(), " primals but ", tangents.size(), " tangents");
  }
  for (size_t i = 0; i < primals.size(); ++i) {
    if (!tangents[i].valid()) continue;
    if (tangents[i].shape() != primals[i].shape()) {
      fail("jvp", "tangent ", i, " has shape ", shape_str(tangents[i].shape()),
           " but its primal has shape ", shape_str(primals[i].shape()));
    }
  }
  Graph g = trace(fn, primals);
  Env env, tenv;
  for (size_t i = 0; i < g.inputs.size(); ++i) {
    const Node* p = g.inputs[i].node().get();
    env.set(p, {primals[i]});
    Array t = is_floating(primals[i].dtype()) ? tangents[i] : Array();
    if (t.valid() && t.dtype() != primals[i].dtype()) t = astype(t, primals[i].dtype());
    tenv.set(p, {t});
  }
  auto tangent_of = [&](const Array& a) {
    const Node* n = a.node().get();
    return tenv.has(n) ? tenv.get(n)[a.output_index()] : Array();
  };
  for (Node* n : g.nodes) {
    std::vector<Array> ins = env.lookup(n->inputs);
    std::vector<Array> outs = bind(n->primitive, ins);
    std::vector<Array> tin(n->inputs.size());
    bool any = false;
    for (size_t i = 0; i < n->inputs.size(); ++i) {
      tin[i] = tangent_of(n->inputs[i]);
      any = any || tin[i].valid();
    }
    std::vector<Array> tout(outs.size());
    if (any) {
      tout = n->primitive->jvp(ins, tin, outs);
      if (tout.size() != outs.size()) {
        fail(n->primitive->name(), "jvp rule returned ", tout.size(), " tangents for ", outs.size(),
             " outputs");
      }
      for (size_t o = 0; o < outs.size(); ++o) {
        tout[o] = conform("jvp", *n->primitive, tout[o], outs[o].aval());
      }
    }
    env.set(n, std::move(outs));
    tenv.set(n, std::move(tout));
  }
  std::vector<Array> outs = env.lookup(g.outputs), touts;
  for (size_t j = 0; j < g.outputs.size(); ++j) {
    Array t = tangent_of(g.outputs[j]);
    touts.push_back(t.valid() ? t : zeros(outs[j].shape(), outs[j].dtype()));
  }
  return {outs, touts};
}

}  // namespace graft::detail
