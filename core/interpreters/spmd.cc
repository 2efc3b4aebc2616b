#include "core/interpreters/spmd.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "core/error.h"
#include "core/lax/lax.h"
#include "core/primitives/collective.h"
#include "core/primitives/shard_map.h"

namespace graft {

namespace spmd {

DimAxes replicated(size_t rank) { return DimAxes(rank); }

DimAxes full_rank(DimAxes d, size_t rank) {
  if (d.size() > rank) fail("jit", "internal: a layout of rank ", d.size(), " for rank ", rank);
  d.resize(rank);
  return d;
}

bool divides(const MeshAxes& mesh, const std::vector<int>& axes, int64_t n) {
  return n % detail::split_count(mesh, axes) == 0;
}

DimAxes fit(const MeshAxes& mesh, DimAxes d, const Shape& shape) {
  d = full_rank(std::move(d), shape.size());
  for (size_t i = 0; i < d.size(); ++i) {
    if (!divides(mesh, d[i], shape[i])) d[i].clear();
  }
  return d;
}

int64_t blocks(const MeshAxes& mesh, const DimAxes& d) {
  int64_t n = 1;
  for (const std::vector<int>& axes : d) n *= detail::split_count(mesh, axes);
  return n;
}

Aval local_aval(const MeshAxes& mesh, Aval global, const DimAxes& d) {
  for (size_t i = 0; i < d.size() && i < global.shape.size(); ++i) {
    global.shape[i] /= detail::split_count(mesh, d[i]);
  }
  global.vma = 0;
  return global;
}

Plan elementwise_plan(const RuleArgs& a) {
  // The most split operand of the output's shape leads; the others follow it.
  DimAxes lead = replicated(a.out[0].shape.size());
  int64_t best = 1;
  for (size_t i = 0; i < a.in.size(); ++i) {
    if (a.in[i].shape != a.out[0].shape) continue;
    const int64_t b = blocks(a.mesh, a.in_dims[i]);
    if (b > best) {
      best = b;
      lead = a.in_dims[i];
    }
  }
  Plan p;
  for (const Aval& in : a.in) {
    p.inputs.push_back(in.shape == a.out[0].shape ? lead : replicated(in.shape.size()));
  }
  p.outputs.assign(a.out.size(), lead);
  return p;
}

namespace {

bool well_formed(const MeshAxes& mesh, const Plan& p, const std::vector<Aval>& in,
                 const std::vector<Aval>& out) {
  if (p.inputs.size() != in.size() || p.outputs.size() != out.size()) return false;
  auto ok = [&](const DimAxes& d, const Aval& a) {
    if (d.size() > a.shape.size()) return false;
    AxisMask seen = 0;
    for (size_t i = 0; i < d.size(); ++i) {
      if (!divides(mesh, d[i], a.shape[i])) return false;
      for (int x : d[i]) {
        if (seen & (AxisMask{1} << x)) return false;
        seen |= AxisMask{1} << x;
      }
    }
    return true;
  };
  for (size_t i = 0; i < in.size(); ++i) {
    if (!ok(p.inputs[i], in[i])) return false;
  }
  for (size_t o = 0; o < out.size(); ++o) {
    if (!ok(p.outputs[o], out[o])) return false;
  }
  return true;
}

Plan whole_arrays(const std::vector<Aval>& in, const std::vector<Aval>& out) {
  Plan p;
  for (const Aval& a : in) p.inputs.push_back(replicated(a.shape.size()));
  for (const Aval& a : out) p.outputs.push_back(replicated(a.shape.size()));
  return p;
}

}  // namespace

std::vector<Value> partition_program(const MeshAxes& mesh, const Program& p,
                                     const std::vector<Value>& inputs,
                                     const std::vector<std::optional<DimAxes>>& want,
                                     const std::vector<std::optional<DimAxes>>& prefer,
                                     bool finish) {
  if (inputs.size() != p.inputs.size()) fail("jit", "internal: partition_program arity");
  std::vector<std::optional<Value>> env(p.avals.size());
  for (size_t i = 0; i < inputs.size(); ++i) env[p.inputs[i]] = inputs[i];
  for (size_t i = 0; i < p.constants.size(); ++i) {
    const Array& c = p.constant_values[i];
    env[p.constants[i]] = Value{c, c.aval(), replicated(c.ndim())};
  }
  for (const Instr& instr : p.instrs) {
    std::vector<Aval> in, out;
    std::vector<DimAxes> in_dims;
    for (int v : instr.in) {
      in.push_back(p.avals[v]);
      in_dims.push_back(full_rank(env[v]->dims, p.avals[v].shape.size()));
    }
    for (int v : instr.out) out.push_back(p.avals[v]);
    std::optional<Plan> plan = instr.prim->sharding_rule(RuleArgs{mesh, in, in_dims, out});
    if (plan && plan->inline_body != nullptr) {
      std::vector<Value> args;
      for (int v : instr.in) args.push_back(*env[v]);
      std::vector<Value> r = partition_program(mesh, *plan->inline_body, args, {}, {},
                                               /*finish=*/false);
      for (size_t o = 0; o < instr.out.size(); ++o) env[instr.out[o]] = r.at(o);
      continue;
    }
    if (plan) {
      for (size_t i = 0; i < plan->inputs.size() && i < in.size(); ++i) {
        plan->inputs[i] = full_rank(plan->inputs[i], in[i].shape.size());
      }
      for (size_t o = 0; o < plan->outputs.size() && o < out.size(); ++o) {
        plan->outputs[o] = full_rank(plan->outputs[o], out[o].shape.size());
      }
    }
    if (!plan || !well_formed(mesh, *plan, in, out)) plan = whole_arrays(in, out);
    // A linear primitive with one partial-sum operand already in place keeps the sum partial.
    int through = -1;
    if (plan->linear && plan->partial == Partial::kNone) {
      int n_partial = 0;
      for (size_t i = 0; i < instr.in.size(); ++i) {
        const Value& v = *env[instr.in[i]];
        if (v.partial == Partial::kNone) continue;
        ++n_partial;
        const bool in_place = full_rank(v.dims, in[i].shape.size()) == plan->inputs[i];
        if (v.partial == Partial::kSum && in_place) through = static_cast<int>(i);
      }
      if (n_partial != 1) through = -1;
    }
    if (through >= 0) {
      plan->partial = Partial::kSum;
      plan->partial_axes = env[instr.in[through]]->partial_axes;
    }
    // An additive one whose operands are all partial sums over the same axes, in place.
    bool all_through = plan->additive && plan->partial == Partial::kNone && !instr.in.empty();
    for (size_t i = 0; i < instr.in.size() && all_through; ++i) {
      const Value& v = *env[instr.in[i]];
      const Value& v0 = *env[instr.in[0]];
      all_through = v.partial == Partial::kSum && v.partial_axes == v0.partial_axes &&
                    full_rank(v.dims, in[i].shape.size()) == plan->inputs[i];
    }
    if (all_through) {
      plan->partial = Partial::kSum;
      plan->partial_axes = env[instr.in[0]]->partial_axes;
    }
    std::vector<Array> locals;
    for (size_t i = 0; i < instr.in.size(); ++i) {
      if (static_cast<int>(i) == through || all_through) {
        locals.push_back(env[instr.in[i]]->local);
        continue;
      }
      std::optional<Value>& in_v = env[instr.in[i]];
      Value r = reshard(mesh, *in_v, plan->inputs[i]);
      // A partial sum is finished once, by its first consumer, in the layout that one wants;
      // later consumers start from there (a psum_scatter and an all_gather cost what a psum
      // does).
      if (in_v->partial != Partial::kNone) in_v = r;
      locals.push_back(r.local);
    }
    std::vector<Array> outs =
        plan->identity ? locals : graft::bind(plan->local ? plan->local : instr.prim, locals);
    const bool partial = plan->partial != Partial::kNone && !plan->partial_axes.empty();
    for (size_t o = 0; o < outs.size(); ++o) {
      // Sums stay partial until a consumer says which layout it wants them in (reshard);
      // max / min are finished here.
      if (partial && plan->partial != Partial::kSum) {
        outs[o] = reduce_partial(mesh, plan->partial, plan->partial_axes, outs[o]);
      }
      const Shape expect = local_aval(mesh, out[o], plan->outputs[o]).shape;
      if (outs[o].shape() != expect) {
        fail("jit", "internal: the sharding rule of ", instr.prim->name(), " gave a block ",
             shape_str(outs[o].shape()), " where ", shape_str(expect), " was expected (",
             detail::spec_str(mesh, plan->outputs[o]), " of ", out[o].str(), ")");
      }
      env[instr.out[o]] = Value{outs[o], out[o], plan->outputs[o]};
      if (partial && plan->partial == Partial::kSum) {
        env[instr.out[o]]->partial = Partial::kSum;
        env[instr.out[o]]->partial_axes = plan->partial_axes;
      }
    }
  }
  std::vector<Value> result;
  for (size_t o = 0; o < p.outputs.size(); ++o) {
    const Value& v = *env[p.outputs[o]];
    if (o < want.size() && want[o]) {
      result.push_back(reshard(mesh, v, *want[o]));
    } else if (v.partial == Partial::kNone || !finish) {
      result.push_back(v);
    } else {
      result.push_back(reshard(mesh, v, o < prefer.size() && prefer[o] ? *prefer[o] : v.dims));
    }
  }
  return result;
}

PartitionedBody partition_body(const MeshAxes& mesh, const Program& body,
                               const std::vector<DimAxes>& in,
                               const std::vector<std::optional<DimAxes>>& want,
                               const std::vector<std::optional<DimAxes>>& prefer) {
  const AxisMask all = axis_mask(mesh.names);
  std::vector<Aval> local_in;
  for (size_t i = 0; i < body.inputs.size(); ++i) {
    Aval a = local_aval(mesh, body.avals[body.inputs[i]], in[i]);
    a.vma = all;  // per-device code: everything may differ between devices
    local_in.push_back(a);
  }
  std::vector<DimAxes> out;
  FlatFn fn = [&](const std::vector<Array>& xs) {
    std::vector<Value> vals;
    for (size_t i = 0; i < xs.size(); ++i) {
      vals.push_back(Value{xs[i], body.avals[body.inputs[i]], in[i]});
    }
    std::vector<Value> r = partition_program(mesh, body, vals, want, prefer);
    out.clear();
    std::vector<Array> locals;
    for (const Value& v : r) {
      out.push_back(v.dims);
      locals.push_back(v.local);
    }
    return locals;
  };
  ClosedProgram c = trace_closed(fn, local_in, all);
  if (!c.consts.empty()) fail("jit", "internal: a partitioned body reads values from outside");
  return PartitionedBody{c.program, out};
}

bool has_collectives(const Program& p) {
  for (const Instr& instr : p.instrs) {
    if (dynamic_cast<const Collective*>(instr.prim.get()) != nullptr ||
        instr.prim->id() == PrimitiveId::kShardMap) {
      return true;
    }
    for (const SubProgram& s : instr.prim->sub_programs()) {
      if (has_collectives(*s.program)) return true;
    }
  }
  return false;
}

}  // namespace spmd
}  // namespace graft
