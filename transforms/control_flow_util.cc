#include "transforms/control_flow_util.h"

#include <map>
#include <string>
#include <unordered_map>

#include "core/error.h"
#include "core/ops.h"
#include "core/primitive.h"
#include "transforms/vmap_core.h"

namespace graft::detail {

Closed close_over(const FlatFn& f, const std::vector<Aval>& avals) {
  auto g = std::make_shared<Graph>(trace_avals(f, avals));
  // Tracers used by the graph but outside it belong to an outer trace: lift them.
  std::vector<Array> consts;
  std::map<std::pair<const Node*, uint32_t>, size_t> seen;
  auto visit = [&](const Array& a) {
    if (!a.is_tracer() || g->depends(a.node().get())) return;
    if (seen.emplace(std::pair{a.node().get(), a.output_index()}, consts.size()).second) {
      consts.push_back(a);
    }
  };
  for (Node* n : g->nodes) {
    for (const Array& in : n->inputs) visit(in);
  }
  for (const Array& o : g->outputs) visit(o);
  Closed c;
  c.out_avals = avals_of(g->outputs);
  c.consts = consts;
  c.fn = [g, consts](const std::vector<Array>& in) {
    size_t nc = consts.size();
    // Replay with the lifted arrays replaced by the given values.
    std::unordered_map<const Node*, std::vector<Array>> lifted;
    for (size_t i = 0; i < nc; ++i) {
      const auto& node = consts[i].node();
      auto& outs = lifted[node.get()];
      if (outs.empty()) {
        for (uint32_t k = 0; k < node->avals.size(); ++k) outs.emplace_back(node, k);
      }
      outs[consts[i].output_index()] = in[i];
    }
    Env env;
    for (auto& [n, outs] : lifted) env.set(n, outs);
    for (size_t i = 0; i < g->inputs.size(); ++i) env.set(g->inputs[i].node().get(), {in[nc + i]});
    for (Node* n : g->nodes) env.set(n, graft::bind(n->primitive, env.lookup(n->inputs)));
    return env.lookup(g->outputs);
  };
  return c;
}

std::vector<Aval> avals_of(const std::vector<Array>& xs) {
  std::vector<Aval> a;
  for (const Array& x : xs) a.push_back(x.aval());
  return a;
}

std::vector<Aval> concat_avals(std::vector<Aval> a, const std::vector<Aval>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

std::vector<Array> concat(std::vector<Array> a, const std::vector<Array>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

std::vector<Array> part(const std::vector<Array>& xs, size_t begin, size_t end) {
  return std::vector<Array>(xs.begin() + begin, xs.begin() + end);
}

std::vector<Array> masked(const std::vector<Array>& xs, const std::vector<bool>& mask) {
  std::vector<Array> out;
  for (size_t i = 0; i < xs.size(); ++i) {
    if (mask[i]) out.push_back(xs[i]);
  }
  return out;
}

Array instantiate(const Array& t, const Array& like) {
  if (!t.valid()) return zeros(like.shape(), like.dtype());
  return t.dtype() == like.dtype() ? t : astype(t, like.dtype());
}

int64_t batch_size(const std::vector<Array>& args, const std::vector<int>& dims) {
  for (size_t i = 0; i < args.size(); ++i) {
    if (dims[i] >= 0) return args[i].shape()[dims[i]];
  }
  return 0;
}

std::vector<Array> run_batched(const FlatFn& fn, const std::vector<Array>& xs,
                               const std::vector<int>& dims, int64_t size) {
  VmapResult r = vmap_flat(fn, xs, dims, size);
  std::vector<Array> out;
  for (size_t i = 0; i < r.outputs.size(); ++i) {
    out.push_back(move_batch_axis(r.outputs[i], r.dims[i], 0, size));
  }
  return out;
}

std::string avals_str(const std::vector<Aval>& avals) {
  std::string s = "(";
  for (size_t i = 0; i < avals.size(); ++i) s += (i ? ", " : "") + avals[i].str();
  return s + ")";
}

}  // namespace graft::detail
