// remat's builder and rules, and checkpoint_name's rules.
//   jvp: a remat (same policy) of the body's jvp.
//   vjp: replays the body on the primals with the saved values taken from this application's
//        outputs (the rest is bound again, so only what the backward pass reads is
//        recomputed), then applies each instruction's vjp rule in reverse.
//   vmap: a remat (same policy) of the body vmapped.
#include "core/interpreters/spmd.h"
#include "core/error.h"
#include "core/interpreters/ad.h"
#include "core/lax/lax.h"
#include "core/lax/util.h"
#include "core/primitives/call.h"
#include "core/primitives/control_util.h"

namespace graft {
namespace detail {
namespace {

// fn traced into a remat body whose outputs are fn's followed by the values the policy saves.
// Values fn closes over become leading inputs (differentiated like the arguments).
std::vector<Array> make_remat(const std::string& name, const FlatFn& fn, const RematPolicy& policy,
                              const std::vector<Array>& args, size_t* main_outputs = nullptr) {
  ClosedProgram c = trace_closed(fn, avals_of(args));
  auto body = std::make_shared<Program>(*c.program);
  const size_t num_main = body->outputs.size();
  std::vector<size_t> slots;
  for (const Instr& instr : c.program->instrs) {
    if (!policy.saveable(*instr.prim)) continue;
    for (int v : instr.out) {
      // A saved value that is also an output of fn is not stored twice.
      size_t at = body->outputs.size();
      for (size_t j = 0; j < num_main; ++j) {
        if (body->outputs[j] == v) {
          at = j;
          break;
        }
      }
      if (at == body->outputs.size()) body->outputs.push_back(v);
      slots.push_back(at);
    }
  }
  std::vector<Array> ins = concat(c.consts, args);
  if (main_outputs != nullptr) *main_outputs = num_main;
  auto p = std::make_shared<const Remat>(name, body, num_main, std::move(slots), policy,
                                         avals_of(ins), body->output_avals());
  return graft::bind(p, ins);
}

// A cotangent conformed to the value it belongs to (empty for non-floating values).
Array conform(const Primitive& p, const Array& ct, const Aval& like) {
  if (!ct.valid() || !is_inexact(like.dtype)) return Array();
  if (ct.shape() != like.shape) {
    fail(p.name(), "vjp rule returned shape ", shape_str(ct.shape()), ", expected ",
         shape_str(like.shape));
  }
  return ct.dtype() == like.dtype ? ct : astype(ct, like.dtype);
}

}  // namespace

std::vector<Array> bind_checkpoint(const std::string& name, const FlatFn& fn,
                                   const RematPolicy& policy, const std::vector<Array>& args) {
  size_t num_main = 0;
  std::vector<Array> outs = make_remat(name, fn, policy, args, &num_main);
  return part(outs, 0, num_main);  // the saved values follow fn's outputs
}

}  // namespace detail

using detail::concat;
using detail::conform;
using detail::part;

std::shared_ptr<const Primitive> Remat::with_sub_programs(std::vector<ProgramPtr> b) const {
  detail::check_same_signature(name(), body(), *b.at(0));
  return std::make_shared<const Remat>(fn_name(), b[0], num_main_, saved_slots_, policy_,
                                       in_avals(), out_avals());
}

std::vector<Array> Remat::jvp(const std::vector<Array>& primals, const std::vector<Array>& tangents,
                              const std::vector<Array>&) const {
  ProgramPtr full = bodies()[0];
  const size_t n = primals.size();
  FlatFn tangent_fn = [full, n](const std::vector<Array>& xs) {
    return detail::jvp_program(*full, part(xs, 0, n), part(xs, n, 2 * n)).second;
  };
  std::vector<Array> ts(n);
  for (size_t i = 0; i < n; ++i) ts[i] = detail::instantiate(tangents[i], primals[i]);
  std::vector<Array> outs = detail::make_remat(fn_name(), tangent_fn, policy_, concat(primals, ts));
  return part(outs, 0, out_avals().size());
}

std::vector<Array> Remat::vjp(const std::vector<Array>& primals, const std::vector<Array>& outputs,
                              const std::vector<Array>& cts) const {
  const Program& b = body();
  const size_t nv = b.avals.size();
  std::vector<Array> env(nv);
  std::vector<bool> depends(nv, false);
  std::vector<int> given(nv, -1);
  for (size_t i = 0; i < b.inputs.size(); ++i) {
    env[b.inputs[i]] = primals[i];
    depends[b.inputs[i]] = true;
  }
  for (size_t i = 0; i < b.constants.size(); ++i) env[b.constants[i]] = b.constant_values[i];
  for (size_t s : saved_slots_) given[b.outputs[s]] = static_cast<int>(s);
  // Forward: each instruction's values as its vjp rule sees them (with bind_for_vjp, they may
  // be followed by values the rule reads).
  std::vector<std::vector<Array>> vals(b.instrs.size());
  for (size_t i = 0; i < b.instrs.size(); ++i) {
    const Instr& instr = b.instrs[i];
    bool all_given = true, dep = false;
    for (int v : instr.out) all_given = all_given && given[v] >= 0;
    for (int v : instr.in) dep = dep || depends[v];
    std::vector<Array> ins;
    for (int v : instr.in) ins.push_back(env[v]);
    if (all_given) {
      for (int v : instr.out) vals[i].push_back(outputs[given[v]]);
    } else {
      vals[i] = detail::bind_for_vjp(instr.prim, ins);
      for (size_t k = 0; k < instr.out.size(); ++k) {
        if (given[instr.out[k]] >= 0) vals[i][k] = outputs[given[instr.out[k]]];
      }
    }
    for (size_t k = 0; k < instr.out.size(); ++k) {
      env[instr.out[k]] = vals[i][k];
      depends[instr.out[k]] = dep;
    }
  }
  // Backward.
  std::vector<Array> ct(nv);
  for (size_t j = 0; j < b.outputs.size() && j < cts.size(); ++j) {
    int v = b.outputs[j];
    if (depends[v]) ct[v] = detail::add_any(ct[v], conform(*this, cts[j], b.avals[v]));
  }
  for (size_t i = b.instrs.size(); i-- > 0;) {
    const Instr& instr = b.instrs[i];
    std::vector<Array> out_cts;
    bool any = false;
    for (int v : instr.out) {
      out_cts.push_back(ct[v]);
      any = any || ct[v].valid();
      ct[v] = Array();
    }
    if (!any) continue;
    std::vector<Array> ins;
    for (int v : instr.in) ins.push_back(env[v]);
    std::vector<Array> in_cts = instr.prim->vjp(ins, vals[i], out_cts);
    if (in_cts.size() != instr.in.size()) {
      fail(instr.prim->name(), "vjp rule returned ", in_cts.size(), " cotangents for ",
           instr.in.size(), " inputs");
    }
    for (size_t k = 0; k < in_cts.size(); ++k) {
      int v = instr.in[k];
      if (depends[v]) ct[v] = detail::add_any(ct[v], conform(*instr.prim, in_cts[k], b.avals[v]));
    }
  }
  std::vector<Array> in_cts;
  for (int v : b.inputs) in_cts.push_back(ct[v]);
  return in_cts;
}

Batched Remat::vmap(const std::vector<Array>& args, const std::vector<int>& dims) const {
  const int64_t size = detail::batch_size(args, dims);
  ProgramPtr full = bodies()[0];
  FlatFn batched = [full, dims, size](const std::vector<Array>& xs) {
    return detail::run_batched(*full, xs, dims, size);
  };
  std::vector<Array> outs = detail::make_remat(fn_name(), batched, policy_, args);
  outs.resize(out_avals().size());
  return {outs, std::vector<int>(outs.size(), 0)};
}

std::vector<Array> CheckpointName::jvp(const std::vector<Array>&,
                                       const std::vector<Array>& tangents,
                                       const std::vector<Array>&) const {
  return tangents;
}

std::vector<Array> CheckpointName::vjp(const std::vector<Array>&, const std::vector<Array>&,
                                       const std::vector<Array>& cts) const {
  return cts;
}

Batched CheckpointName::vmap(const std::vector<Array>& args, const std::vector<int>& dims) const {
  return {{checkpoint_name(args[0], name_)}, dims};
}


// Sharding: the body, partitioned in its place. (The partitioned program is not
// differentiated again, so the recomputation remat asked for is already written out.)
std::optional<spmd::Plan> Remat::sharding_rule(const spmd::RuleArgs&) const {
  spmd::Plan p;
  p.inline_body = bodies()[0];
  return p;
}

std::optional<spmd::Plan> CheckpointName::sharding_rule(const spmd::RuleArgs& a) const {
  return spmd::elementwise_plan(a);
}

}  // namespace graft
