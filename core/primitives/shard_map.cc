#include "core/primitives/shard_map.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/backend/backend.h"
#include "core/device/device.h"
#include "core/error.h"
#include "core/interpreters/ad.h"
#include "core/interpreters/batching.h"
#include "core/ir/digest.h"
#include "core/ir/program.h"
#include "core/lax/lax.h"
#include "core/primitives/control_util.h"

namespace graft {

namespace {

using detail::spec_str;
using detail::split_count;

// Tracing a shard_map (or pmap) body on this thread: one inside it is not supported yet.
thread_local int map_depth = 0;

// Devices a mesh may span: the CPU's virtual devices, or the device backend's GPUs (the
// kernel that runs it checks its own).
int64_t mappable_devices() {
  const Backend* gpus = device_backend();
  return std::max<int64_t>(device_count(), gpus == nullptr ? 0 : gpus->device_count());
}

AxisMask bit_of(const std::string& axis) { return AxisMask{1} << axis_bit(axis); }

std::string specs_str(const MeshAxes& mesh, const std::vector<DimAxes>& specs) {
  std::vector<std::string> s;
  for (const DimAxes& d : specs) s.push_back(spec_str(mesh, d));
  return "(" + absl::StrJoin(s, ", ") + ")";
}

AxisMask spec_mask(const MeshAxes& mesh, const DimAxes& spec) {
  AxisMask m = 0;
  for (const std::vector<int>& axes : spec) {
    for (int a : axes) m |= bit_of(mesh.names[a]);
  }
  return m;
}

// The block of `a` one device gets; checks the spec against it.
Aval block_of(const char* op, const MeshAxes& mesh, const DimAxes& spec, Aval a, size_t arg) {
  if (spec.size() > a.shape.size()) {
    fail(op, "the spec ", spec_str(mesh, spec), " of argument ", arg, " has ", spec.size(),
         " entries for an array of rank ", a.shape.size());
  }
  const Shape full = a.shape;
  for (size_t d = 0; d < spec.size(); ++d) {
    const int64_t n = split_count(mesh, spec[d]);
    if (a.shape[d] % n != 0) {
      fail(op, "argument ", arg, " of shape ", shape_str(full), ": dimension ", d, " of size ",
           a.shape[d], " does not split into ", n, " blocks (", spec_str(mesh, spec), ")");
    }
    a.shape[d] /= n;
  }
  a.vma |= spec_mask(mesh, spec);
  return a;
}

void check_spec(const char* op, const MeshAxes& mesh, const DimAxes& spec) {
  AxisMask seen = 0;
  for (const std::vector<int>& axes : spec) {
    for (int a : axes) {
      if (a < 0 || a >= static_cast<int>(mesh.names.size())) fail(op, "internal: mesh axis ", a);
      if (seen & bit_of(mesh.names[a])) {
        fail(op, "the spec ", spec_str(mesh, spec), " names axis '", mesh.names[a], "' twice");
      }
      seen |= bit_of(mesh.names[a]);
    }
  }
}

}  // namespace

ShardMap::ShardMap(std::string fn_name, MeshAxes mesh, ProgramPtr body,
                   std::vector<DimAxes> in_specs, std::vector<DimAxes> out_specs,
                   std::vector<Aval> in, std::vector<Aval> out)
    : ControlPrimitive(PrimitiveId::kShardMap, {std::move(body)}, std::move(in), std::move(out)),
      fn_name_(std::move(fn_name)),
      mesh_(std::move(mesh)),
      in_specs_(std::move(in_specs)),
      out_specs_(std::move(out_specs)) {
  for (const std::string& n : mesh_.names) mesh_mask_ |= bit_of(n);
}

std::string ShardMap::params() const {
  std::vector<std::string> axes;
  for (size_t i = 0; i < mesh_.names.size(); ++i) {
    axes.push_back(absl::StrCat(mesh_.names[i], "=", mesh_.sizes[i]));
  }
  return absl::StrCat("name=", fn_name_, " mesh=(", absl::StrJoin(axes, ", "),
                      ") in_specs=", specs_str(mesh_, in_specs_),
                      " out_specs=", specs_str(mesh_, out_specs_));
}

std::shared_ptr<const Primitive> ShardMap::with_sub_programs(std::vector<ProgramPtr> b) const {
  detail::check_same_signature(name(), body(), *b.at(0));
  return std::make_shared<const ShardMap>(fn_name_, mesh_, b[0], in_specs_, out_specs_, in_avals(),
                                          out_avals());
}

void ShardMap::infer_vma(const std::vector<Aval>&, std::vector<Aval>& out) const {
  const AxisMask own = mesh_mask();
  for (size_t o = 0; o < out.size(); ++o) out[o].vma = body().avals[body().outputs[o]].vma & ~own;
}

AxisMask ShardMap::axis_names() const { return ControlPrimitive::axis_names() & ~mesh_mask(); }

bool ShardMap::exchanges_between_processes() const { return process_count() > 1; }

uint64_t ShardMap::digest() const {
  std::call_once(digest_->once, [&] {
    digest_->value = fnv1a64(print_program(body()), fnv1a64(params()));
  });
  return digest_->value;
}

namespace detail {

std::vector<Array> shard_map_flat(const char* op, const std::string& fn_name, const MeshAxes& mesh,
                                  const FlatFn& fn, const std::vector<Array>& args,
                                  const std::vector<DimAxes>& in_specs,
                                  const OutSpecsFn& out_specs, bool check_vma) {
  if (args.size() != in_specs.size()) fail(op, "internal: in_specs size mismatch");
  if (map_depth > 0) {
    fail(op,
         "a pmap or shard_map inside another is not supported yet (vmap with an axis_name "
         "inside one is; a shard_map over a mesh with more axes covers nesting)");
  }
  if (mesh.size() > mappable_devices()) {
    fail(op, "the mesh of ", mesh.size(), " devices needs ", mesh.size(),
         " devices, but there are ", device_count(), " (set GRAFT_CPU_DEVICES=", mesh.size(),
         " for virtual CPU devices)");
  }
  std::vector<Aval> avals = avals_of_args(args);
  for (size_t i = 0; i < args.size(); ++i) {
    check_spec(op, mesh, in_specs[i]);
    avals[i] = block_of(op, mesh, in_specs[i], avals[i], i);
  }
  AxisMask mask = 0;
  for (const std::string& n : mesh.names) mask |= bit_of(n);

  ClosedProgram c;
  {
    std::vector<std::unique_ptr<AxisScope>> scopes;
    for (size_t a = 0; a < mesh.names.size(); ++a) {
      scopes.push_back(std::make_unique<AxisScope>(mesh.names[a], mesh.sizes[a]));
    }
    ++map_depth;
    struct Leave {
      ~Leave() { --map_depth; }
    } leave;
    c = trace_closed(fn, avals, mask);
  }
  const Program& body = *c.program;
  std::vector<DimAxes> outs = out_specs(body.output_avals());
  if (outs.size() != body.outputs.size()) {
    fail(op, "out specs has ", outs.size(), " entries for ", body.outputs.size(), " outputs");
  }
  std::vector<Aval> out_avals;
  for (size_t o = 0; o < outs.size(); ++o) {
    check_spec(op, mesh, outs[o]);
    Aval a = body.avals[body.outputs[o]];
    const AxisMask unnamed = a.vma & mask & ~spec_mask(mesh, outs[o]);
    if (unnamed != 0 && check_vma) {
      fail(op, "output ", o, " varies over ", vma_str(unnamed), " but its out spec ",
           spec_str(mesh, outs[o]),
           " does not map it (only a value that is the same on every member, such as a psum, "
           "can be returned unmapped)");
    }
    if (outs[o].size() > a.shape.size()) {
      fail(op, "the out spec ", spec_str(mesh, outs[o]), " of output ", o, " has ", outs[o].size(),
           " entries for an array of rank ", a.shape.size());
    }
    for (size_t d = 0; d < outs[o].size(); ++d) a.shape[d] *= split_count(mesh, outs[o][d]);
    a.vma &= ~mask;
    out_avals.push_back(std::move(a));
  }
  std::vector<DimAxes> ins(c.consts.size());
  ins.insert(ins.end(), in_specs.begin(), in_specs.end());
  std::vector<Array> all = c.args(args);
  auto p =
      std::make_shared<const ShardMap>(fn_name, mesh, c.program, std::move(ins), std::move(outs),
                                       avals_of_args(all), std::move(out_avals));
  return graft::bind(p, all);
}

std::vector<Array> pmap_flat(const std::string& fn_name, const std::string& axis, const FlatFn& fn,
                             const std::vector<Array>& args, const std::vector<int>& in_axes,
                             const std::vector<int>& out_axes, std::optional<int64_t> axis_size) {
  if (axis.empty()) fail("pmap", "needs an axis_name");
  if (args.size() != in_axes.size()) fail("pmap", "internal: in_axes size mismatch");
  std::optional<int64_t> size = axis_size;
  std::vector<DimAxes> specs;
  for (size_t i = 0; i < args.size(); ++i) {
    specs.emplace_back();
    if (in_axes[i] < 0) continue;
    const Shape& s = args[i].shape();
    if (in_axes[i] >= static_cast<int>(s.size())) {
      fail("pmap", "in_axes ", in_axes[i], " is out of range for argument ", i, " of shape ",
           shape_str(s));
    }
    const int64_t n = s[in_axes[i]];
    if (size && *size != n) {
      fail("pmap", "inconsistent sizes along the mapped axes: argument ", i, " has size ", n,
           " along axis ", in_axes[i], " but the axis size is ", *size);
    }
    size = n;
    specs.back().resize(static_cast<size_t>(in_axes[i]) + 1);
    specs.back()[in_axes[i]] = {0};
  }
  if (!size) fail("pmap", "needs at least one mapped argument or an explicit axis_size");
  if (*size < 1) fail("pmap", "the mapped axis has size 0");
  if (*size > mappable_devices()) {
    fail("pmap", "axis '", axis, "' of size ", *size, " needs ", *size, " devices, but there are ",
         device_count(), " (set GRAFT_CPU_DEVICES=", *size, " for virtual CPU devices)");
  }
  // The body sees each member's slice without the mapped dimension, and gives each output
  // its dimension back (normalized against the output's rank once it is traced).
  auto resolved = std::make_shared<std::vector<int>>();
  FlatFn body = [&fn, &in_axes, &out_axes, resolved](const std::vector<Array>& blocks) {
    std::vector<Array> in;
    for (size_t i = 0; i < blocks.size(); ++i) {
      in.push_back(in_axes[i] < 0 ? blocks[i] : squeeze(blocks[i], {in_axes[i]}));
    }
    std::vector<Array> outs = fn(in);
    if (out_axes.size() != 1 && out_axes.size() != outs.size()) {
      fail("pmap", "out_axes has ", out_axes.size(), " entries for ", outs.size(), " outputs");
    }
    resolved->clear();
    for (size_t o = 0; o < outs.size(); ++o) {
      const int ax = out_axes[out_axes.size() == 1 ? 0 : o];
      if (ax == kNoneAxis) {
        resolved->push_back(-1);
        continue;
      }
      const int rank = static_cast<int>(outs[o].ndim()) + 1;
      const int r = ax < 0 ? ax + rank : ax;
      if (r < 0 || r >= rank) {
        fail("pmap", "out_axes ", ax, " is out of range for output ", o, " of rank ", rank - 1);
      }
      resolved->push_back(r);
      outs[o] = expand_dims(outs[o], {r});
    }
    return outs;
  };
  OutSpecsFn out_specs = [resolved](const std::vector<Aval>&) {
    std::vector<DimAxes> specs;
    for (int r : *resolved) {
      specs.emplace_back();
      if (r < 0) continue;
      specs.back().resize(static_cast<size_t>(r) + 1);
      specs.back()[r] = {0};
    }
    return specs;
  };
  return shard_map_flat("pmap", fn_name, MeshAxes{{axis}, {*size}}, body, args, specs, out_specs);
}

}  // namespace detail

namespace {

// The arrays of `xs` that are valid, with their specs; `present` marks which.
struct Present {
  std::vector<Array> arrays;
  std::vector<DimAxes> specs;
  std::vector<bool> present;
};

Present present_of(const std::vector<Array>& xs, const std::vector<DimAxes>& specs) {
  Present p;
  for (size_t i = 0; i < xs.size(); ++i) {
    p.present.push_back(xs[i].valid());
    if (!xs[i].valid()) continue;
    p.arrays.push_back(xs[i]);
    p.specs.push_back(specs[i]);
  }
  return p;
}

// `given` spread back over the slots `present` marks (empty elsewhere).
std::vector<Array> spread(const std::vector<Array>& given, const std::vector<bool>& present) {
  std::vector<Array> out;
  size_t k = 0;
  for (bool p : present) out.push_back(p ? given[k++] : Array());
  return out;
}

std::vector<DimAxes> cat(std::vector<DimAxes> a, const std::vector<DimAxes>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

detail::OutSpecsFn fixed(std::vector<DimAxes> specs) {
  return [specs = std::move(specs)](const std::vector<Aval>&) { return specs; };
}

// A spec with a new leading dimension, not split (vmap's batch).
DimAxes batched(const DimAxes& spec) {
  DimAxes s = spec;
  s.insert(s.begin(), std::vector<int>{});
  return s;
}

}  // namespace

using detail::concat;
using detail::part;

std::vector<Array> ShardMap::jvp(const std::vector<Array>& primals,
                                 const std::vector<Array>& tangents,
                                 const std::vector<Array>&) const {
  Present t = present_of(tangents, in_specs_);
  const size_t m = primals.size();
  ProgramPtr b = bodies()[0];
  FlatFn fn = [b, m, present = t.present](const std::vector<Array>& in) {
    auto [outs, touts] =
        detail::jvp_program(*b, part(in, 0, m), spread(part(in, m, in.size()), present));
    return concat(outs, touts);
  };
  std::vector<Array> r =
      detail::shard_map_flat("shard_map", fn_name_ + "_jvp", mesh_, fn, concat(primals, t.arrays),
                             cat(in_specs_, t.specs), fixed(cat(out_specs_, out_specs_)));
  return part(r, out_avals().size(), r.size());
}

std::vector<Array> ShardMap::vjp(const std::vector<Array>& primals, const std::vector<Array>&,
                                 const std::vector<Array>& cotangents) const {
  Present c = present_of(cotangents, out_specs_);
  const size_t m = primals.size();
  ProgramPtr b = bodies()[0];
  FlatFn fn = [b, m, present = c.present](const std::vector<Array>& in) {
    detail::VjpResult r = detail::vjp_program(b, part(in, 0, m));
    return r.pullback(spread(part(in, m, in.size()), present));
  };
  return detail::shard_map_flat("shard_map", fn_name_ + "_vjp", mesh_, fn,
                                concat(primals, c.arrays), cat(in_specs_, c.specs),
                                fixed(in_specs_));
}

Batched ShardMap::vmap(const std::vector<Array>& args, const std::vector<int>& dims) const {
  int64_t batch = 0;
  std::vector<Array> moved;
  std::vector<DimAxes> specs;
  std::vector<int> inner;
  for (size_t i = 0; i < args.size(); ++i) {
    if (dims[i] < 0) {
      moved.push_back(args[i]);
      specs.push_back(in_specs_[i]);
      inner.push_back(-1);
      continue;
    }
    batch = args[i].shape()[dims[i]];
    moved.push_back(moveaxis(args[i], dims[i], 0));
    specs.push_back(batched(in_specs_[i]));
    inner.push_back(0);
  }
  ProgramPtr b = bodies()[0];
  FlatFn fn = [b, inner, batch](const std::vector<Array>& in) {
    detail::VmapResult r = detail::vmap_program(*b, in, inner, batch);
    std::vector<Array> out;
    for (size_t o = 0; o < r.outputs.size(); ++o) {
      out.push_back(detail::move_batch_axis(r.outputs[o], r.dims[o], 0, batch));
    }
    return out;
  };
  std::vector<DimAxes> outs;
  for (const DimAxes& s : out_specs_) outs.push_back(batched(s));
  Batched r;
  r.outputs = detail::shard_map_flat("shard_map", fn_name_, mesh_, fn, moved, specs, fixed(outs));
  r.dims.assign(r.outputs.size(), 0);
  return r;
}

}  // namespace graft
