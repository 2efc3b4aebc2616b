#include "transforms/autodiff_core.h"

#include <unordered_map>

#include "core/error.h"
#include "core/ops.h"
#include "core/primitive.h"

namespace graft::detail {

Array add_any(const Array& a, const Array& b) {
  if (!a.valid()) return b;
  if (!b.valid()) return a;
  return add(a, b);
}

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

VjpResult vjp_flat(const FlatFn& fn, const std::vector<Array>& primals) {
  auto g = std::make_shared<Graph>(trace(fn, primals));
  auto env = std::make_shared<Env>(replay(*g, primals));
  VjpResult r;
  r.outputs = env->lookup(g->outputs);
  std::vector<Aval> primal_avals;
  for (const Array& p : primals) primal_avals.push_back(p.aval());
  r.pullback = [g, env, primal_avals](const std::vector<Array>& cts) {
    if (cts.size() != g->outputs.size()) {
      fail("vjp", "pullback takes ", g->outputs.size(), " cotangents, got ", cts.size());
    }
    std::unordered_map<Key, Array, KeyHash> acc;
    auto accumulate = [&](const Array& target, const Array& ct) {
      if (!ct.valid() || !g->depends(target.node().get())) return;
      Key k{target.node().get(), target.output_index()};
      acc[k] = add_any(acc[k], ct);
    };
    for (size_t j = 0; j < cts.size(); ++j) {
      if (!cts[j].valid()) continue;
      const Aval& a = g->outputs[j].aval();
      if (cts[j].shape() != a.shape) {
        fail("vjp", "cotangent ", j, " has shape ", shape_str(cts[j].shape()),
             " but the output has shape ", shape_str(a.shape));
      }
      if (!is_floating(a.dtype)) continue;
      accumulate(g->outputs[j], cts[j].dtype() == a.dtype ? cts[j] : astype(cts[j], a.dtype));
    }
    for (auto it = g->nodes.rbegin(); it != g->nodes.rend(); ++it) {
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
      std::vector<Array> in_cts = n->primitive->vjp(env->lookup(n->inputs), env->get(n), out_cts);
      if (in_cts.size() != n->inputs.size()) {
        fail(n->primitive->name(), "vjp rule returned ", in_cts.size(), " cotangents for ",
             n->inputs.size(), " inputs");
      }
      for (size_t i = 0; i < in_cts.size(); ++i) {
        accumulate(n->inputs[i], conform("vjp", *n->primitive, in_cts[i], n->inputs[i].aval()));
      }
    }
    std::vector<Array> out(g->inputs.size());
    for (size_t i = 0; i < g->inputs.size(); ++i) {
      auto f = acc.find(Key{g->inputs[i].node().get(), 0});
      const Aval& a = primal_avals[i];
      if (f != acc.end() && f->second.valid()) {
        out[i] = f->second;
      } else {
        out[i] = zeros(a.shape, a.dtype);
      }
    }
    return out;
  };
  return r;
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
