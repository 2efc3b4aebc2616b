#include "core/ir/primitive.h"

#include "core/device/device.h"
#include "core/error.h"
#include "core/ir/name_scope.h"
#include "core/ir/program.h"
#include "core/ir/sharding_rule.h"
#include "core/ir/effects.h"

namespace graft {

Cost Primitive::cost(const std::vector<Aval>& in, const std::vector<Aval>& out) const {
  Cost c;
  for (const Aval& a : in) c.bytes += static_cast<double>(numel(a.shape) * dtype_size(a.dtype));
  for (const Aval& a : out) {
    c.bytes += static_cast<double>(numel(a.shape) * dtype_size(a.dtype));
    c.flops += static_cast<double>(numel(a.shape));
  }
  return c;
}

void Primitive::infer_vma(const std::vector<Aval>& in, std::vector<Aval>& out) const {
  std::vector<SubProgram> subs = sub_programs();
  AxisMask all = 0;
  for (const Aval& a : in) all |= a.vma;
  if (subs.empty()) {
    for (Aval& a : out) a.vma = all;
    return;
  }
  // A primitive with bodies: output o varies as output o of the bodies whose outputs are its
  // own one to one (scan's body, cond's branches, custom_jvp's fun). Precise typing matters:
  // reverse mode sums the cotangent of a value typed as not varying, and summing one typed
  // as varying that is in fact the same everywhere would count it once per member.
  std::vector<AxisMask> m(out.size(), 0);
  bool matched = false;
  for (const SubProgram& s : subs) {
    if (s.program->outputs.size() != out.size()) continue;
    matched = true;
    for (size_t o = 0; o < out.size(); ++o) m[o] |= s.program->avals[s.program->outputs[o]].vma;
  }
  for (const SubProgram& s : subs) {
    for (int v : s.program->outputs) all |= s.program->avals[v].vma;
  }
  for (size_t o = 0; o < out.size(); ++o) out[o].vma = matched ? m[o] : all;
}

AxisMask Primitive::axis_names() const {
  AxisMask m = 0;
  for (const SubProgram& s : sub_programs()) {
    for (const Instr& instr : s.program->instrs) m |= instr.prim->axis_names();
  }
  return m;
}

bool Primitive::exchanges_between_processes() const {
  for (const SubProgram& s : sub_programs()) {
    for (const Instr& instr : s.program->instrs) {
      if (instr.prim->exchanges_between_processes()) return true;
    }
  }
  return false;
}

std::shared_ptr<const Primitive> Primitive::with_sub_programs(
    std::vector<std::shared_ptr<const Program>>) const {
  fail(name(), "has no sub-programs to replace");
}

std::vector<Array> Primitive::jvp(const std::vector<Array>&, const std::vector<Array>&,
                                  const std::vector<Array>&) const {
  fail(name(), "has no jvp rule (forward-mode differentiation is not defined for it)");
}

std::vector<Array> Primitive::vjp(const std::vector<Array>&, const std::vector<Array>&,
                                  const std::vector<Array>&) const {
  fail(name(), "has no vjp rule (reverse-mode differentiation is not defined for it)");
}

std::optional<spmd::Plan> Primitive::sharding_rule(const spmd::RuleArgs&) const {
  return std::nullopt;
}

Batched Primitive::vmap(const std::vector<Array>&, const std::vector<int>&) const {
  fail(name(), "has no batching rule (vmap is not defined for it)");
}

namespace {
// Complex and fp8 values only flow through the primitives whose kernels and rules handle them
// (the kComplex / kFloat8 rows of core/primitives/list.h); every other one refuses them here, at
// trace time.
void check_dtype_flags(const Primitive& p, const Aval& a) {
  const PrimitiveFacts& facts = primitive_facts(p.id());
  if (is_complex(a.dtype) && !facts.has(kComplex)) {
    fail(p.name(), "does not support complex values (got ", a.str(), ")");
  }
  if (is_float8(a.dtype) && !facts.has(kFloat8)) {
    fail(p.name(), "does not support float8 values; convert to a wider float first (got ",
         a.str(), ")");
  }
}
}  // namespace

std::vector<Array> bind(std::shared_ptr<const Primitive> p, std::vector<Array> inputs) {
  std::vector<Aval> in_avals;
  in_avals.reserve(inputs.size());
  bool tracer = false;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i].valid()) fail(p->name(), "input ", i, " is an empty Array handle");
    if (inputs[i].node()->donated()) fail_donated();
    in_avals.push_back(inputs[i].aval());
    tracer = tracer || inputs[i].is_tracer();
  }
  for (const Aval& a : in_avals) check_dtype_flags(*p, a);
  auto node = std::make_shared<Node>();
  node->avals = p->infer(in_avals);
  for (const Aval& a : node->avals) check_dtype_flags(*p, a);
  p->infer_vma(in_avals, node->avals);
  // The one place every primitive's outputs are made: a shape whose element count or byte
  // size overflows int64 is an error here, before anything is sized from it.
  for (const Aval& a : node->avals) check_shape(p->name(), a.shape, a.dtype);
  detail::note_name_scope(p);
  node->primitive = std::move(p);
  node->inputs = std::move(inputs);
  // A collective only runs inside the pmap / vmap that binds its axis: it is part of that
  // trace even when its operands are not (axis_index has none), never a constant.
  node->tracer = tracer || node->primitive->axis_names() != 0;
  std::vector<Array> outs;
  outs.reserve(node->avals.size());
  for (uint32_t i = 0; i < node->avals.size(); ++i) outs.emplace_back(node, i);
  // A side effect (debug_print) happens now on values, or is recorded for jit on tracers: its
  // results may never be used. Here rather than in the op, so replays (grad, vmap) do it too.
  if (node->primitive->has_side_effects() && !outs.empty()) {
    if (tracer) {
      record_effect(outs[0]);
    } else {
      eval(outs);
    }
  } else if (!tracer && process_count() > 1 && node->primitive->exchanges_between_processes()) {
    // Exchanges run when called, in program order on every process, not when (or whether)
    // this process reads their results: a value logged on process 0 alone would otherwise
    // pair its exchanges with different ones of the other processes.
    eval(outs);
  }
  return outs;
}

Array bind1(std::shared_ptr<const Primitive> p, std::vector<Array> inputs) {
  std::vector<Array> outs = graft::bind(std::move(p), std::move(inputs));
  return std::move(outs[0]);
}

}  // namespace graft
