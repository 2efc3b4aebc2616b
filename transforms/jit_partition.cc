// jit with shardings: the per-leaf shardings of the cache key, and the SPMD partitioning of a
// traced program over their mesh (core/interpreters/spmd.h does the work).
#include "absl/strings/str_cat.h"
#include "core/interpreters/spmd.h"
#include "core/primitives/collective.h"
#include "core/primitives/shard_map.h"
#include "transforms/jit.h"

namespace graft::detail {

namespace {

bool splits(const std::shared_ptr<const NamedSharding>& s) {
  return s != nullptr && !s->is_single_device();
}

// The sharding constraints of p and its bodies.
void constraints(const Program& p, std::vector<const NamedSharding*>* out) {
  for (const Instr& instr : p.instrs) {
    if (auto* c = dynamic_cast<const ShardingConstraint*>(instr.prim.get())) {
      out->push_back(&c->sharding());
    }
    for (const SubProgram& s : instr.prim->sub_programs()) constraints(*s.program, out);
  }
}

// The one mesh of the shardings that are not single-device, given or constraining values
// inside (null: none).
const Mesh* common_mesh(const Program& p,
                        const std::vector<std::shared_ptr<const NamedSharding>>& in,
                        const std::vector<std::optional<NamedSharding>>& out) {
  const Mesh* mesh = nullptr;
  auto see = [&](const NamedSharding& s) {
    if (s.is_single_device()) return;
    if (mesh == nullptr) {
      mesh = &s.mesh();
    } else if (!(*mesh == s.mesh())) {
      fail("jit", "the shardings use two meshes, ", mesh->str(), " and ", s.mesh().str(),
           ": one program runs on one mesh");
    }
  };
  for (const auto& s : in) {
    if (splits(s)) see(*s);
  }
  for (const auto& s : out) {
    if (s) see(*s);
  }
  std::vector<const NamedSharding*> inside;
  constraints(p, &inside);
  for (const NamedSharding* s : inside) see(*s);
  return mesh;
}

}  // namespace

void add_shardings(JitKey& key, const std::vector<Array>& leaves,
                   const std::vector<std::optional<NamedSharding>>& in_shardings) {
  const size_t nargs = key.types.size();
  if (!in_shardings.empty() && in_shardings.size() != nargs) {
    fail("jit", "in_shardings has ", in_shardings.size(), " entries for ", nargs,
         " arguments (give one per argument, nullopt to keep an argument's own)");
  }
  key.shardings.clear();
  bool any = false;
  for (size_t i = 0; i < leaves.size(); ++i) {
    const int k = key.leaf_arg[i];
    std::shared_ptr<const NamedSharding> s;
    if (!in_shardings.empty() && in_shardings[k]) {
      in_shardings[k]->check("jit", leaves[i].shape());
      s = std::make_shared<const NamedSharding>(*in_shardings[k]);
    } else {
      s = leaves[i].node()->sharding;
    }
    any = any || s != nullptr;
    key.shardings.push_back(std::move(s));
  }
  if (!any) key.shardings.clear();  // the common case keys as before
}

Program partition_for_jit(const Program& p,
                          const std::vector<std::shared_ptr<const NamedSharding>>& in_shardings,
                          const std::vector<std::optional<NamedSharding>>& out_shardings,
                          std::vector<std::shared_ptr<const NamedSharding>>* out) {
  out->clear();
  const Mesh* mesh_ptr = common_mesh(p, in_shardings, out_shardings);
  if (mesh_ptr == nullptr) return p;
  const Mesh mesh = *mesh_ptr;
  if (!mesh.first_devices()) fail("jit", "internal: a mesh over devices other than the first");
  mesh.devices();  // enough of them
  if (spmd::has_collectives(p)) {
    fail("jit", "partitioning a function that already has collectives, shard_map or pmap ",
         "inside is not supported yet (give it no shardings, or use shard_map alone)");
  }
  const size_t n_out = p.outputs.size();
  if (out_shardings.size() > 1 && out_shardings.size() != n_out) {
    fail("jit", "out_shardings has ", out_shardings.size(), " entries for ", n_out,
         " outputs (give one for all, or one per output leaf)");
  }
  const MeshAxes m = mesh_axes(mesh);
  const std::vector<Aval> in_avals = p.input_avals();
  std::vector<DimAxes> in_dims;
  for (size_t i = 0; i < in_avals.size(); ++i) {
    const auto& s = i < in_shardings.size() ? in_shardings[i] : nullptr;
    in_dims.push_back(splits(s) ? dim_axes("jit", mesh, s->spec()) : DimAxes{});
  }
  std::vector<std::optional<DimAxes>> want(n_out);
  for (size_t o = 0; o < n_out && !out_shardings.empty(); ++o) {
    const auto& s = out_shardings[out_shardings.size() == 1 ? 0 : o];
    if (!s) continue;
    s->check("jit", p.avals[p.outputs[o]].shape);
    want[o] = s->is_single_device() ? DimAxes{} : dim_axes("jit", mesh, s->spec());
  }
  std::vector<DimAxes> out_dims;
  FlatFn body = [&](const std::vector<Array>& xs) {
    std::vector<spmd::Value> vals;
    for (size_t i = 0; i < xs.size(); ++i) {
      vals.push_back(spmd::Value{xs[i], in_avals[i], spmd::full_rank(in_dims[i], xs[i].ndim())});
    }
    std::vector<spmd::Value> r = spmd::partition_program(m, p, vals, want);
    out_dims.clear();
    std::vector<Array> locals;
    for (const spmd::Value& v : r) {
      out_dims.push_back(v.dims);
      locals.push_back(v.local);
    }
    return locals;
  };
  FlatFn outer = [&](const std::vector<Array>& args) {
    return shard_map_flat(
        "jit", "jit", m, body, args, in_dims,
        [&](const std::vector<Aval>&) { return out_dims; }, /*check_vma=*/false);
  };
  std::optional<Program> q = lower(trace_avals(outer, in_avals));
  if (!q) fail("jit", "internal: the partitioned program reads values from outside");
  for (const DimAxes& d : out_dims) {
    out->push_back(std::make_shared<const NamedSharding>(mesh, partition_spec(m, d)));
  }
  return *q;
}

}  // namespace graft::detail
