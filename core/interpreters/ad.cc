#include "core/interpreters/ad.h"

#include <unordered_map>

#include "core/error.h"
#include "core/lax/lax.h"
#include "core/lax/util.h"
#include "core/ir/primitive.h"

namespace graft::detail {

namespace {

// Gives a rule's tangent / cotangent the dtype and shape the value it belongs to has.
Array conform(const char* what, const Primitive& p, Array t, const Aval& like) {
  if (!t.valid()) return t;
  if (!is_inexact(like.dtype)) return Array();  // integer values carry no derivative
  if (t.shape() != like.shape) {
    fail(p.name(), what, " rule returned shape ", shape_str(t.shape()), ", expected ",
         shape_str(like.shape));
  }
  if (t.dtype() != like.dtype) t = astype(t, like.dtype);
  return t;
}

// A cotangent that varies over named axes its value does not vary over: the value met varying
// operands through an implicit broadcast to every member (pvary), whose transpose is the sum
// over the members. Summed here, so the gradient of an unvarying value is the same on every
// member (JAX's shard_map semantics).
Array match_vma(Array ct, AxisMask want) {
  if (!ct.valid()) return ct;
  const AxisMask extra = ct.aval().vma & ~want;
  return extra == 0 ? ct : psum(ct, axis_names_of(extra));
}

// A cotangent given for an output (grad's seed of ones, say) takes the output's type: if the
// output varies over axes the cotangent does not, the cotangent is the same on every member
// of them (pvary), as in JAX, so that reverse mode differentiates the sum over the members.
Array seed_vma(Array ct, AxisMask want) {
  if (!ct.valid()) return ct;
  ct = match_vma(std::move(ct), want);
  const AxisMask missing = want & ~ct.aval().vma;
  return missing == 0 ? ct : pvary(ct, axis_names_of(missing));
}

void check_arity(const char* op, const Program& p, size_t got) {
  if (got != p.inputs.size()) fail(op, "the program takes ", p.inputs.size(), " arrays, got ", got);
}

std::vector<Array> gather(const std::vector<Array>& values, const std::vector<int>& ids) {
  std::vector<Array> out;
  out.reserve(ids.size());
  for (int v : ids) out.push_back(values[v]);
  return out;
}

// Reverse mode's forward pass over a program: every value, by id, and what each equation's
// bind_for_vjp returned (its outputs, maybe followed by values its vjp rule reads).
struct Forward {
  std::shared_ptr<const Program> p;
  size_t num_fixed = 0;
  std::vector<Array> values;
  std::vector<std::vector<Array>> instr_outs;
  std::vector<char> depends;  // by id: depends on an input past num_fixed
};

std::shared_ptr<Forward> forward(std::shared_ptr<const Program> p, const std::vector<Array>& args,
                                 size_t num_fixed) {
  check_arity("vjp", *p, args.size());
  auto fw = std::make_shared<Forward>();
  const Program& prog = *p;
  fw->p = std::move(p);
  fw->num_fixed = num_fixed;
  fw->values.resize(prog.avals.size());
  fw->depends.assign(prog.avals.size(), 0);
  for (size_t i = 0; i < args.size(); ++i) {
    fw->values[prog.inputs[i]] = args[i];
    fw->depends[prog.inputs[i]] = i >= num_fixed;
  }
  for (size_t i = 0; i < prog.constants.size(); ++i) {
    fw->values[prog.constants[i]] = prog.constant_values[i];
  }
  fw->instr_outs.reserve(prog.instrs.size());
  for (const Instr& instr : prog.instrs) {
    bool dep = false;
    for (int v : instr.in) dep = dep || fw->depends[v];
    std::vector<Array> ins = gather(fw->values, instr.in);
    // Only equations a cotangent can reach need what their vjp rule reads.
    std::vector<Array> outs = dep ? bind_for_vjp(instr.prim, ins) : graft::bind(instr.prim, ins);
    for (size_t k = 0; k < instr.out.size(); ++k) {
      fw->values[instr.out[k]] = outs[k];
      fw->depends[instr.out[k]] = dep;
    }
    fw->instr_outs.push_back(std::move(outs));
  }
  return fw;
}

// The backward pass: one cotangent per program output (empty = zero) to one per input past
// num_fixed (zeros where none reaches it).
std::vector<Array> backprop(const Forward& fw, const std::vector<Array>& cts) {
  const Program& p = *fw.p;
  if (cts.size() != p.outputs.size()) {
    fail("vjp", "pullback takes ", p.outputs.size(), " cotangents, got ", cts.size());
  }
  std::vector<Array> acc(p.avals.size());
  auto accumulate = [&](int id, const Array& ct) {
    if (ct.valid() && fw.depends[id]) acc[id] = add_any(acc[id], ct);
  };
  for (size_t j = 0; j < cts.size(); ++j) {
    if (!cts[j].valid()) continue;
    const Aval& a = p.avals[p.outputs[j]];
    if (cts[j].shape() != a.shape) {
      fail("vjp", "cotangent ", j, " has shape ", shape_str(cts[j].shape()),
           " but the output has shape ", shape_str(a.shape));
    }
    if (!is_inexact(a.dtype)) continue;
    accumulate(p.outputs[j], seed_vma(cts[j].dtype() == a.dtype ? cts[j] : astype(cts[j], a.dtype),
                                      fw.values[p.outputs[j]].aval().vma));
  }
  for (size_t i = p.instrs.size(); i-- > 0;) {
    const Instr& instr = p.instrs[i];
    std::vector<Array> out_cts(instr.out.size());
    bool any = false;
    for (size_t o = 0; o < instr.out.size(); ++o) {
      Array& a = acc[instr.out[o]];
      if (!a.valid()) continue;
      out_cts[o] = match_vma(std::move(a), fw.values[instr.out[o]].aval().vma);
      a = Array();
      any = true;
    }
    if (!any) continue;
    std::vector<Array> in_cts =
        instr.prim->vjp(gather(fw.values, instr.in), fw.instr_outs[i], out_cts);
    if (in_cts.size() != instr.in.size()) {
      fail(instr.prim->name(), "vjp rule returned ", in_cts.size(), " cotangents for ",
           instr.in.size(), " inputs");
    }
    for (size_t k = 0; k < in_cts.size(); ++k) {
      accumulate(instr.in[k], conform("vjp", *instr.prim, in_cts[k], p.avals[instr.in[k]]));
    }
  }
  std::vector<Array> out;
  out.reserve(p.inputs.size() - fw.num_fixed);
  for (size_t i = fw.num_fixed; i < p.inputs.size(); ++i) {
    Array& a = acc[p.inputs[i]];
    const Aval& av = p.avals[p.inputs[i]];
    out.push_back(a.valid() ? match_vma(a, fw.values[p.inputs[i]].aval().vma)
                            : zeros(av.shape, av.dtype));
  }
  return out;
}

VjpResult vjp_of(std::shared_ptr<Forward> fw) {
  VjpResult r;
  r.outputs = gather(fw->values, fw->p->outputs);
  r.pullback = [fw = std::move(fw)](const std::vector<Array>& cts) { return backprop(*fw, cts); };
  return r;
}

}  // namespace

std::vector<Array> bind_for_vjp(const std::shared_ptr<const Primitive>& p,
                                const std::vector<Array>& inputs) {
  std::shared_ptr<const Primitive> f = p->vjp_forward();
  return graft::bind(f ? f : p, inputs);
}

VjpResult vjp_program(std::shared_ptr<const Program> p, const std::vector<Array>& args,
                      size_t num_fixed) {
  return vjp_of(forward(std::move(p), args, num_fixed));
}

VjpResult vjp_flat(const FlatFn& fn, const std::vector<Array>& primals) {
  ClosedProgram c = trace_closed(fn, avals_of_args(primals));
  return vjp_program(c.program, c.args(primals), c.consts.size());
}

namespace {

// The forward values of fw, flat: the program's inputs, then each equation's outputs as
// bind_for_vjp gave them, in program order.
std::vector<Array> flat_values(const Forward& fw) {
  std::vector<Array> values = gather(fw.values, fw.p->inputs);
  for (const std::vector<Array>& outs : fw.instr_outs) {
    values.insert(values.end(), outs.begin(), outs.end());
  }
  return values;
}

// Which of `values` (flat_values(fw)) fw's pullback reads: found by tracing the pullback on
// placeholder cotangents and walking what its graph reads from outside, directly or through
// nodes the rules built from forward values (e.g. remat's recomputation). A value that appears
// twice (an equation that returned its input) counts at its first position.
std::vector<bool> read_by_pullback(const std::shared_ptr<Forward>& fw,
                                   const std::vector<Array>& values) {
  using Key = std::pair<const Node*, uint32_t>;
  struct KeyHash {
    size_t operator()(const Key& k) const {
      return std::hash<const void*>()(k.first) * 31 + k.second;
    }
  };
  std::unordered_map<Key, size_t, KeyHash> index;
  for (size_t i = 0; i < values.size(); ++i) {
    index.emplace(Key{values[i].node().get(), values[i].output_index()}, i);
  }
  VjpResult v = vjp_of(fw);
  Graph bwd = trace(v.pullback, v.outputs);
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
  return used;
}

}  // namespace

std::vector<Array> vjp_residuals(const FlatFn& fn, const std::vector<Array>& primals) {
  ClosedProgram c = trace_closed(fn, avals_of_args(primals));
  std::shared_ptr<Forward> fw = forward(c.program, c.args(primals), c.consts.size());
  // The forward values in forward order: the primals (without the closed program's consts),
  // then each equation's outputs.
  std::vector<Array> values = primals;
  for (const std::vector<Array>& outs : fw->instr_outs) {
    values.insert(values.end(), outs.begin(), outs.end());
  }
  std::vector<bool> used = read_by_pullback(fw, values);
  std::vector<Array> kept;
  for (size_t i = 0; i < values.size(); ++i) {
    if (used[i]) kept.push_back(values[i]);
  }
  return kept;
}

namespace {

// Values cheaper to compute again in the backward loop than to store per iteration and load
// back: elementwise ops and the shape ops that only move or repeat elements. Saved instead
// are their operands (in the end the outputs of matmuls, reductions and other heavy ops), as
// JAX's dots-saveable remat policy keeps, and the backward body fuses the recomputation with
// the pullback's own elementwise work.
bool cheap_to_recompute(const Primitive& p) {
  switch (p.id()) {
    case PrimitiveId::kReshape:
    case PrimitiveId::kBroadcastInDim:
    case PrimitiveId::kTranspose:
    case PrimitiveId::kIota:
    case PrimitiveId::kStopGradient:
      return true;
    default:
      return primitive_facts(p.id()).has(kFuse);
  }
}

}  // namespace

VjpSaving plan_vjp_saving(std::shared_ptr<const Program> p, size_t num_fixed) {
  std::vector<Array> args;
  for (int v : p->inputs) args.push_back(Array::placeholder(p->avals[v]));
  std::shared_ptr<Forward> fw = forward(p, args, num_fixed);
  VjpSaving s;
  s.p = p;
  s.num_fixed = num_fixed;
  std::vector<Array> values = flat_values(*fw);
  std::vector<bool> used = read_by_pullback(fw, values);
  size_t at = args.size();
  for (const std::vector<Array>& outs : fw->instr_outs) {
    s.first.push_back(at);
    at += outs.size();
  }
  // Where each program value sits among the forward values (its first occurrence: an equation
  // may return an earlier value, which read_by_pullback counts there).
  std::vector<long> pos_of(p->avals.size(), -1);
  {
    std::unordered_map<const Node*, std::unordered_map<uint32_t, size_t>> first_at;
    auto canonical = [&](size_t i) {
      return first_at[values[i].node().get()].emplace(values[i].output_index(), i).first->second;
    };
    for (size_t i = 0; i < args.size(); ++i) pos_of[p->inputs[i]] = long(canonical(i));
    for (size_t e = 0; e < p->instrs.size(); ++e) {
      const Instr& instr = p->instrs[e];
      for (size_t k = 0; k < instr.out.size(); ++k) {
        pos_of[instr.out[k]] = long(canonical(s.first[e] + k));
      }
    }
  }
  // Recompute what is cheap instead of saving it: from the last equation back, a read output
  // of such an equation is replaced by its operands (which may in turn be recomputed).
  for (size_t e = p->instrs.size(); e-- > 0;) {
    const Instr& instr = p->instrs[e];
    const size_t end = s.first[e] + fw->instr_outs[e].size();
    bool read = false;
    for (size_t i = s.first[e]; i < end; ++i) read = read || used[i];
    if (!read || end - s.first[e] != instr.out.size() || !cheap_to_recompute(*instr.prim)) continue;
    for (size_t i = s.first[e]; i < end; ++i) used[i] = false;
    for (int v : instr.in) {
      if (pos_of[v] >= 0) used[static_cast<size_t>(pos_of[v])] = true;
    }
  }
  for (size_t i = args.size(); i < values.size(); ++i) {
    if (!used[i]) continue;
    s.saved.push_back(i);
    s.saved_avals.push_back(values[i].aval());
  }
  return s;
}

std::vector<Array> vjp_forward_saving(const VjpSaving& s, const std::vector<Array>& args) {
  std::shared_ptr<Forward> fw = forward(s.p, args, s.num_fixed);
  std::vector<Array> out = gather(fw->values, s.p->outputs);
  std::vector<Array> values = flat_values(*fw);
  for (size_t i : s.saved) {
    if (i >= values.size()) fail("vjp", "the saved forward values do not match the program");
    out.push_back(values[i]);
  }
  return out;
}

std::vector<Array> vjp_pullback_saved(const VjpSaving& s, const std::vector<Array>& args,
                                      const std::vector<Array>& saved,
                                      const std::vector<Array>& cts) {
  const Program& prog = *s.p;
  check_arity("vjp", prog, args.size());
  if (saved.size() != s.saved.size()) {
    fail("vjp", "got ", saved.size(), " saved forward values, expected ", s.saved.size());
  }
  auto fw = std::make_shared<Forward>();
  fw->p = s.p;
  fw->num_fixed = s.num_fixed;
  fw->values.resize(prog.avals.size());
  fw->depends.assign(prog.avals.size(), 0);
  for (size_t i = 0; i < args.size(); ++i) {
    fw->values[prog.inputs[i]] = args[i];
    fw->depends[prog.inputs[i]] = i >= s.num_fixed;
  }
  for (size_t i = 0; i < prog.constants.size(); ++i) {
    fw->values[prog.constants[i]] = prog.constant_values[i];
  }
  size_t next = 0;  // into s.saved, ascending like the equations' positions
  for (size_t e = 0; e < prog.instrs.size(); ++e) {
    const Instr& instr = prog.instrs[e];
    bool dep = false;
    for (int v : instr.in) dep = dep || fw->depends[v];
    // Rebound lazily: a value no rule reads is never computed (the trace drops it); one the
    // pullback does read was saved and replaces it below.
    std::vector<Array> ins = gather(fw->values, instr.in);
    std::vector<Array> outs = dep ? bind_for_vjp(instr.prim, ins) : graft::bind(instr.prim, ins);
    const size_t end = e + 1 < s.first.size() ? s.first[e + 1] : s.first[e] + outs.size();
    if (outs.size() != end - s.first[e]) {
      fail(instr.prim->name(), "the forward pass gave ", outs.size(), " values, planned ",
           end - s.first[e]);
    }
    for (; next < s.saved.size() && s.saved[next] < end; ++next) {
      outs[s.saved[next] - s.first[e]] = saved[next];
    }
    for (size_t k = 0; k < instr.out.size(); ++k) {
      fw->values[instr.out[k]] = outs[k];
      fw->depends[instr.out[k]] = dep;
    }
    fw->instr_outs.push_back(std::move(outs));
  }
  return backprop(*fw, cts);
}

std::pair<std::vector<Array>, std::vector<Array>> jvp_program(const Program& p,
                                                              const std::vector<Array>& args,
                                                              const std::vector<Array>& tangents,
                                                              bool instantiate_zeros) {
  check_arity("jvp", p, args.size());
  if (tangents.size() != args.size()) {
    fail("jvp", "got ", args.size(), " primals but ", tangents.size(), " tangents");
  }
  std::vector<Array> values(p.avals.size()), tans(p.avals.size());
  for (size_t i = 0; i < args.size(); ++i) {
    values[p.inputs[i]] = args[i];
    Array t = is_inexact(args[i].dtype()) ? tangents[i] : Array();
    if (t.valid() && t.dtype() != args[i].dtype()) t = astype(t, args[i].dtype());
    tans[p.inputs[i]] = t;
  }
  for (size_t i = 0; i < p.constants.size(); ++i) values[p.constants[i]] = p.constant_values[i];
  for (const Instr& instr : p.instrs) {
    std::vector<Array> ins = gather(values, instr.in);
    std::vector<Array> outs = graft::bind(instr.prim, ins);
    std::vector<Array> tin = gather(tans, instr.in);
    bool any = false;
    for (const Array& t : tin) any = any || t.valid();
    if (any) {
      std::vector<Array> tout = instr.prim->jvp(ins, tin, outs);
      if (tout.size() != outs.size()) {
        fail(instr.prim->name(), "jvp rule returned ", tout.size(), " tangents for ", outs.size(),
             " outputs");
      }
      for (size_t o = 0; o < instr.out.size(); ++o) {
        tans[instr.out[o]] = conform("jvp", *instr.prim, tout[o], outs[o].aval());
      }
    }
    for (size_t o = 0; o < instr.out.size(); ++o) values[instr.out[o]] = std::move(outs[o]);
  }
  std::vector<Array> outs = gather(values, p.outputs), touts = gather(tans, p.outputs);
  if (instantiate_zeros) {
    for (size_t j = 0; j < outs.size(); ++j) {
      if (!touts[j].valid()) touts[j] = zeros(outs[j].shape(), outs[j].dtype());
    }
  }
  return {outs, touts};
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
  ClosedProgram c = trace_closed(fn, avals_of_args(primals));
  std::vector<Array> ts(c.consts.size());
  ts.insert(ts.end(), tangents.begin(), tangents.end());
  return jvp_program(*c.program, c.args(primals), ts);
}

}  // namespace graft::detail
