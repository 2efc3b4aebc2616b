// Elementwise fusion: connected chains of elementwise instructions over one shape become one
// fused_elementwise instruction (core/primitives/fusion.h), which the CPU runs as one tiled
// loop without materializing intermediates.
//
// Greedy, in program order: a fusible instruction joins the open group that produced one of
// its operands (same shape), merging other open groups it reads, else starts a group. A group
// closes (is emitted) when an instruction outside it reads one of its values, so the output
// program stays in topological order; values read outside the group (or program outputs)
// become the group's outputs.
// A broadcast_in_dim feeding a group, of a scalar or of an array whose dims are a contiguous
// run of the group's (a norm's statistic [B, T] or weight [D] over [B, T, D]), moves into the
// group's body: the group reads the small operand in place (FusedRead) and the broadcast array
// is never materialized (dead code elimination drops it when nothing else reads it); a lone op
// reading such a broadcast becomes a group of one for that.
// A reduce_sum / reduce_max / reduce_min of an f32 value of an open group over one run of its
// dims (fusible_reduction: rows, columns, or a middle axis) joins the group as its reduction
// (one per group): the group is
// emitted as a fused_reduce (core/primitives/fused_reduce.h), whose kernel reduces the value
// as it computes it instead of writing it out; the value is an output as well only if
// something else reads it.
#include <algorithm>
#include <memory>
#include <unordered_map>

#include "core/primitives/fused_reduce.h"
#include "core/primitives/fusion.h"
#include "core/primitives/reduce.h"
#include "core/primitives/shape.h"
#include "transforms/passes/passes.h"

namespace graft {

namespace {

constexpr size_t kMaxSteps = 64;  // bounds the kernel's per-thread tile buffers

struct Group {
  Shape shape;
  std::vector<int> members;            // instruction indices, in order
  std::vector<std::vector<int>> args;  // per member: operand value ids
  int reduce = -1;                     // the instruction reducing one of its values, or -1
  bool open = true;
};

struct Fuser {
  const Program& p;
  Program out;
  std::vector<int> producer;            // value -> instruction index, or -1
  std::vector<std::vector<int>> users;  // value -> instruction indices
  std::vector<bool> is_output;          // value -> program output
  std::vector<int> group_of;            // value -> group producing it, or -1
  std::vector<int> instr_group;         // instruction -> its group, or -1
  std::vector<Group> groups;

  explicit Fuser(const Program& prog)
      : p(prog),
        producer(prog.avals.size(), -1),
        users(prog.avals.size()),
        is_output(prog.avals.size(), false),
        group_of(prog.avals.size(), -1),
        instr_group(prog.instrs.size(), -1) {
    out.avals = p.avals;
    out.inputs = p.inputs;
    out.constants = p.constants;
    out.constant_values = p.constant_values;
    out.outputs = p.outputs;
    for (size_t i = 0; i < p.instrs.size(); ++i) {
      for (int v : p.instrs[i].out) producer[v] = static_cast<int>(i);
      for (int v : p.instrs[i].in) users[v].push_back(static_cast<int>(i));
    }
    for (int v : p.outputs) is_output[v] = true;
  }

  bool fusible(const Instr& instr) const {
    if (instr.out.size() != 1) return false;
    std::vector<Aval> in;
    for (int v : instr.in) in.push_back(p.avals[v]);
    return fusion_supports(*instr.prim, in, p.avals[instr.out[0]]);
  }

  // Whether v is a broadcast_in_dim to `shape` that groups read in place (broadcast_read).
  bool absorbable(int v, const Shape& shape) const {
    const int i = producer[v];
    if (i < 0 || p.instrs[i].prim->id() != PrimitiveId::kBroadcastInDim) return false;
    const auto& b = static_cast<const BroadcastInDim&>(*p.instrs[i].prim);
    const Aval& x = p.avals[p.instrs[i].in[0]];
    return p.avals[v].shape == shape && x.dtype == p.avals[v].dtype &&
           broadcast_read(x.shape, shape, b.dims()).has_value();
  }

  // Whether a member reads a broadcast the group would read in place: then even one op is
  // worth a fused_elementwise (the broadcast need not be written out).
  bool reads_broadcast(const Group& grp) const {
    for (const std::vector<int>& args : grp.args) {
      for (int v : args) {
        if (absorbable(v, grp.shape)) return true;
      }
    }
    return false;
  }

  void close(int g) {
    Group& grp = groups[g];
    if (!grp.open) return;
    grp.open = false;
    const int reduced = grp.reduce >= 0 ? p.instrs[grp.reduce].in[0] : -1;
    if (grp.members.size() == 1 && reduced < 0 && !reads_broadcast(grp)) {
      out.instrs.push_back(p.instrs[grp.members[0]]);
      return;
    }
    // The body: the group's inputs (a scalar one broadcast once to the group's shape, first),
    // its members, and the values read outside the group as outputs.
    auto body = std::make_shared<Program>();
    std::unordered_map<int, int> inner;  // value of p -> value of body, as the members read it
    std::vector<int> inputs;
    auto new_value = [&](const Aval& a) {
      body->avals.push_back(a);
      return static_cast<int>(body->avals.size()) - 1;
    };
    // One group input per distinct operand value; a broadcast one is its small operand, spread
    // by the body's own broadcast_in_dim (one per broadcast value, first in the body).
    std::vector<Instr> spreads;
    for (const std::vector<int>& args : grp.args) {
      for (int v : args) {
        if (group_of[v] == g || inner.count(v)) continue;
        if (!absorbable(v, grp.shape)) {
          inputs.push_back(v);
          inner[v] = new_value(p.avals[v]);
          body->inputs.push_back(inner[v]);
          continue;
        }
        const Instr& bc = p.instrs[producer[v]];
        inputs.push_back(bc.in[0]);
        const int x = new_value(p.avals[bc.in[0]]);
        body->inputs.push_back(x);
        Instr b;
        b.prim = bc.prim;
        b.in = {x};
        b.out = {new_value(p.avals[v])};
        inner[v] = b.out[0];
        spreads.push_back(std::move(b));
      }
    }
    for (Instr& b : spreads) body->instrs.push_back(std::move(b));
    std::vector<int> out_values, group_outs;
    for (size_t k = 0; k < grp.members.size(); ++k) {
      const Instr& instr = p.instrs[grp.members[k]];
      Instr step;
      step.prim = instr.prim;
      for (int v : grp.args[k]) step.in.push_back(inner.at(v));
      int v = instr.out[0];
      inner[v] = new_value(p.avals[v]);
      step.out = {inner[v]};
      body->instrs.push_back(std::move(step));
      bool used_outside = is_output[v];
      for (int u : users[v]) used_outside = used_outside || instr_group[u] != g;
      if (used_outside || v == reduced) {  // read outside, or by the reduction only
        body->outputs.push_back(inner[v]);
        group_outs.push_back(v);
        if (used_outside) out_values.push_back(v);
      }
    }
    if (out_values.empty() && reduced < 0) return;  // dead
    Instr fused;
    fused.prim = make_fused_elementwise(std::move(body), grp.shape);
    fused.in = std::move(inputs);
    fused.out = std::move(out_values);
    if (reduced >= 0) {
      fused = with_reduction(std::move(fused), group_outs, reduced, p.instrs[grp.reduce]);
    }
    out.instrs.push_back(std::move(fused));
  }

  // The fused_reduce of group instruction `f` and reduction `r` of its value `reduced`:
  // group_outs[o] is the value group output o computes; f.out, the values read outside (in
  // that order, `reduced` among them or not), become the first outputs, r's the last.
  Instr with_reduction(Instr f, const std::vector<int>& group_outs, int reduced, const Instr& r) {
    auto body = std::make_shared<Program>();
    auto new_value = [&](int v) {
      body->avals.push_back(p.avals[v]);
      return static_cast<int>(body->avals.size()) - 1;
    };
    Instr gi, ri;
    gi.prim = f.prim;
    for (int v : f.in) gi.in.push_back(new_value(v));
    body->inputs = gi.in;
    for (int v : group_outs) {
      gi.out.push_back(new_value(v));
      if (v == reduced) ri.in = {gi.out.back()};
      if (std::find(f.out.begin(), f.out.end(), v) != f.out.end()) {
        body->outputs.push_back(gi.out.back());
      }
    }
    ri.prim = r.prim;
    ri.out = {new_value(r.out[0])};
    body->outputs.push_back(ri.out[0]);
    body->instrs.push_back(std::move(gi));
    body->instrs.push_back(std::move(ri));
    Instr fused;
    fused.prim = make_fused_reduce(std::move(body));
    fused.in = std::move(f.in);
    fused.out = std::move(f.out);
    fused.out.push_back(r.out[0]);
    return fused;
  }

  // Moves group h's members into group g, keeping program order. Safe: both are open, so no
  // instruction emitted so far reads their values, and the merged group is emitted later.
  void merge(int h, int g) {
    std::vector<std::pair<int, std::vector<int>>> all;
    for (int k : {g, h}) {
      for (size_t m = 0; m < groups[k].members.size(); ++m) {
        all.emplace_back(groups[k].members[m], std::move(groups[k].args[m]));
      }
    }
    std::sort(all.begin(), all.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    Group& into = groups[g];
    into.members.clear();
    into.args.clear();
    for (auto& [i, args] : all) {
      into.members.push_back(i);
      into.args.push_back(std::move(args));
      instr_group[i] = g;
      group_of[p.instrs[i].out[0]] = g;
    }
    if (groups[h].reduce >= 0) {  // at most one of the two has a reduction (add)
      into.reduce = groups[h].reduce;
      instr_group[into.reduce] = g;
      group_of[p.instrs[into.reduce].out[0]] = g;
    }
    groups[h].members.clear();
    groups[h].args.clear();
    groups[h].reduce = -1;
    groups[h].open = false;
  }

  // Whether instruction i is a reduction that joins the open group of its operand (see the
  // top of the file); if so it joins.
  bool joins_as_reduction(int i) {
    const Instr& instr = p.instrs[i];
    if (instr.in.size() != 1 || instr.out.size() != 1) return false;
    const int v = instr.in[0], g = group_of[v];
    if (g < 0 || !groups[g].open || groups[g].reduce >= 0) return false;
    const Aval& a = p.avals[v];
    const auto* r = dynamic_cast<const Reduce*>(instr.prim.get());
    if (r == nullptr || a.dtype != DType::kF32 ||
        !fusible_reduction(instr.prim->id(), a.shape, r->axes())) {
      return false;
    }
    groups[g].reduce = i;
    instr_group[i] = g;
    group_of[instr.out[0]] = g;  // its readers close the group first
    return true;
  }

  void add(int i) {
    const Instr& instr = p.instrs[i];
    if (!fusible(instr)) {
      if (joins_as_reduction(i)) return;
      for (int v : instr.in) {
        if (group_of[v] >= 0) close(group_of[v]);
      }
      out.instrs.push_back(instr);
      return;
    }
    const Shape& shape = p.avals[instr.out[0]].shape;
    const std::vector<int>& args = instr.in;
    int g = -1;
    for (int v : args) {
      int h = group_of[v];
      if (h < 0 || h == g || !groups[h].open || groups[h].shape != shape) continue;
      if (g < 0 && groups[h].members.size() < kMaxSteps) {
        g = h;
      } else if (g >= 0 && groups[g].members.size() + groups[h].members.size() < kMaxSteps &&
                 (groups[g].reduce < 0 || groups[h].reduce < 0)) {
        merge(h, g);  // two open chains meet: one loop, not one closed and one left alone
      }
    }
    for (int v : args) {
      if (group_of[v] >= 0 && group_of[v] != g) close(group_of[v]);
    }
    if (g < 0) {
      g = static_cast<int>(groups.size());
      groups.push_back(Group{shape, {}, {}, -1, true});
    }
    groups[g].members.push_back(i);
    groups[g].args.push_back(args);
    instr_group[i] = g;
    group_of[instr.out[0]] = g;
  }
};

}  // namespace

Program fuse_elementwise(const Program& p) {
  Fuser f(p);
  for (size_t i = 0; i < p.instrs.size(); ++i) f.add(static_cast<int>(i));
  for (size_t g = 0; g < f.groups.size(); ++g) f.close(static_cast<int>(g));
  return f.out;
}

}  // namespace graft
