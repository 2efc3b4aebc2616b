#include "core/ir/batching.h"

#include "core/error.h"
#include "core/ops.h"
#include "core/primitive.h"

namespace graft::detail {

Array move_batch_axis(const Array& x, int from, int to, int64_t size) {
  if (from < 0) {
    Array e = expand_dims(x, {to});
    Shape s = e.shape();
    s[to] = size;
    return broadcast_to(e, s);
  }
  return from == to ? x : moveaxis(x, from, to);
}

VmapResult vmap_flat(const FlatFn& fn, const std::vector<Array>& args,
                     const std::vector<int>& in_dims, std::optional<int64_t> axis_size) {
  if (args.size() != in_dims.size()) fail("vmap", "internal: in_dims size mismatch");
  VmapResult r;
  std::optional<int64_t> size = axis_size;
  std::vector<Aval> avals;
  for (size_t i = 0; i < args.size(); ++i) {
    Aval a = args[i].aval();
    if (in_dims[i] >= 0) {
      if (in_dims[i] >= static_cast<int>(a.shape.size())) {
        fail("vmap", "in_axes ", in_dims[i], " is out of range for argument ", i, " of shape ",
             shape_str(a.shape));
      }
      int64_t n = a.shape[in_dims[i]];
      if (size && *size != n) {
        fail("vmap", "inconsistent sizes along the mapped axes: argument ", i, " has size ", n,
             " along axis ", in_dims[i], " but the batch size is ", *size);
      }
      size = n;
      a.shape.erase(a.shape.begin() + in_dims[i]);
    }
    avals.push_back(std::move(a));
  }
  if (!size) fail("vmap", "needs at least one mapped argument or an explicit axis_size");
  r.axis_size = *size;

  Graph g = trace_avals(fn, avals);
  Env env;
  std::unordered_map<const Node*, std::vector<int>> dims;
  for (size_t i = 0; i < args.size(); ++i) {
    env.set(g.inputs[i].node().get(), {args[i]});
    dims[g.inputs[i].node().get()] = {in_dims[i]};
  }
  auto dim_of = [&](const Array& a) {
    auto it = dims.find(a.node().get());
    return it == dims.end() ? -1 : it->second[a.output_index()];
  };
  for (Node* n : g.nodes) {
    std::vector<Array> ins = env.lookup(n->inputs);
    std::vector<int> in_d(ins.size());
    bool batched = false;
    for (size_t i = 0; i < ins.size(); ++i) {
      in_d[i] = dim_of(n->inputs[i]);
      batched = batched || in_d[i] >= 0;
    }
    if (!batched) {
      env.set(n, bind(n->primitive, ins));
      dims[n] = std::vector<int>(n->avals.size(), -1);
      continue;
    }
    Batched b = n->primitive->vmap(ins, in_d);
    if (b.outputs.size() != n->avals.size() || b.dims.size() != n->avals.size()) {
      fail(n->primitive->name(), "batching rule returned ", b.outputs.size(), " outputs for ",
           n->avals.size());
    }
    for (size_t o = 0; o < b.outputs.size(); ++o) {
      // The rule's output must be the unbatched result with the batch axis inserted.
      Shape want = n->avals[o].shape;
      if (b.dims[o] >= 0) want.insert(want.begin() + b.dims[o], *size);
      if (b.outputs[o].shape() != want) {
        fail(n->primitive->name(), "batching rule returned shape ", shape_str(b.outputs[o].shape()),
             ", expected ", shape_str(want));
      }
    }
    env.set(n, std::move(b.outputs));
    dims[n] = std::move(b.dims);
  }
  for (const Array& o : g.outputs) {
    r.outputs.push_back(env.lookup(o));
    r.dims.push_back(dim_of(o));
  }
  return r;
}

}  // namespace graft::detail
