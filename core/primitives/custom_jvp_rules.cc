// custom_jvp_call's builder and rules.
//   jvp: the user's rule (its program) on the primals and tangents.
//   vjp: the transpose of the rule's tangent map (the rule is linear in the tangents).
//   vmap: a custom_jvp_call of fun and rule vmapped.
#include "core/interpreters/spmd.h"
#include "core/error.h"
#include "core/interpreters/ad.h"
#include "core/lax/lax.h"
#include "core/primitives/call.h"
#include "core/primitives/control_util.h"

namespace graft {
namespace detail {
namespace {

// fun([consts, args]) -> outs, rule([consts, args, arg tangents]) -> [outs, tangents]; the
// first num_consts inputs get no tangent. Values fun and rule close over join the consts.
std::vector<Array> make_custom_jvp(const std::string& name, size_t num_consts, const FlatFn& fun,
                                   const FlatFn& rule, const std::vector<Array>& inputs) {
  std::vector<Aval> avals = avals_of(inputs);
  std::vector<Aval> arg_avals(avals.begin() + static_cast<std::ptrdiff_t>(num_consts), avals.end());
  ClosedProgram f = trace_closed(fun, avals);
  ClosedProgram r = trace_closed(rule, concat_avals(avals, arg_avals));
  std::vector<Aval> outs = f.program->output_avals(), routs = r.program->output_avals();
  bool ok = routs.size() == 2 * outs.size();
  for (size_t j = 0; ok && j < outs.size(); ++j) {
    ok = routs[j].shape == outs[j].shape && routs[j].dtype == outs[j].dtype &&
         routs[outs.size() + j].shape == outs[j].shape;
  }
  if (!ok) {
    fail("custom_jvp", name, ": the jvp rule must return the function's outputs ", avals_str(outs),
         " and a tangent of each, got ", avals_str(routs));
  }
  std::vector<Aval> fc = avals_of(f.consts), rc = avals_of(r.consts);
  ProgramPtr fp = insert_inputs(f.program, fc.size(), rc);
  ProgramPtr rp = insert_inputs(r.program, 0, fc);
  std::vector<Array> ins = concat(concat(f.consts, r.consts), inputs);
  auto p = std::make_shared<const CustomJvpCall>(
      name, static_cast<int>(fc.size() + rc.size() + num_consts), fp, rp, avals_of(ins), outs);
  return graft::bind(p, ins);
}

}  // namespace

std::vector<Array> bind_custom_jvp(const std::string& name, const FlatFn& fn, const JvpRuleFn& rule,
                                   const std::vector<Array>& args) {
  const size_t n = args.size();
  FlatFn flat_rule = [rule, n](const std::vector<Array>& xs) {
    auto [o, t] = rule(part(xs, 0, n), part(xs, n, 2 * n));
    for (size_t j = 0; j < t.size() && j < o.size(); ++j) t[j] = instantiate(t[j], o[j]);
    return concat(o, t);
  };
  return make_custom_jvp(name, 0, fn, flat_rule, args);
}

}  // namespace detail

using detail::concat;
using detail::instantiate;
using detail::part;

std::shared_ptr<const Primitive> CustomJvpCall::with_sub_programs(std::vector<ProgramPtr> b) const {
  detail::check_same_signature(name(), *bodies()[0], *b.at(0));
  detail::check_same_signature(name(), *bodies()[1], *b.at(1));
  return std::make_shared<const CustomJvpCall>(fn_name(), num_consts_, b[0], b[1], in_avals(),
                                               out_avals());
}

std::vector<Array> CustomJvpCall::jvp(const std::vector<Array>& primals,
                                      const std::vector<Array>& tangents,
                                      const std::vector<Array>&) const {
  std::vector<Array> ts;
  for (size_t i = num_consts_; i < primals.size(); ++i) {
    ts.push_back(instantiate(tangents[i], primals[i]));
  }
  std::vector<Array> r = run_program(*bodies()[1], concat(primals, ts));
  return part(r, num_out(), 2 * num_out());
}

std::vector<Array> CustomJvpCall::vjp(const std::vector<Array>& primals, const std::vector<Array>&,
                                      const std::vector<Array>& cts) const {
  ProgramPtr rule = bodies()[1];
  const size_t n = num_out();
  FlatFn tangent_map = [rule, primals, n](const std::vector<Array>& ts) {
    return part(run_program(*rule, concat(primals, ts)), n, 2 * n);
  };
  std::vector<Array> t0;
  for (size_t i = num_consts_; i < primals.size(); ++i)
    t0.push_back(instantiate(Array(), primals[i]));
  std::vector<Array> arg_cts = detail::vjp_flat(tangent_map, t0).pullback(cts);
  std::vector<Array> out(num_consts_);
  for (size_t i = 0; i < arg_cts.size(); ++i) {
    out.push_back(is_inexact(primals[num_consts_ + i].dtype()) ? arg_cts[i] : Array());
  }
  return out;
}

Batched CustomJvpCall::vmap(const std::vector<Array>& args, const std::vector<int>& dims) const {
  const int64_t size = detail::batch_size(args, dims);
  ProgramPtr fun = bodies()[0], rule = bodies()[1];
  std::vector<int> rule_dims = dims;
  rule_dims.insert(rule_dims.end(), dims.begin() + num_consts_, dims.end());
  FlatFn fun_b = [fun, dims, size](const std::vector<Array>& xs) {
    return detail::run_batched(*fun, xs, dims, size);
  };
  FlatFn rule_b = [rule, rule_dims, size](const std::vector<Array>& xs) {
    return detail::run_batched(*rule, xs, rule_dims, size);
  };
  std::vector<Array> outs = detail::make_custom_jvp(fn_name(), num_consts_, fun_b, rule_b, args);
  return {outs, std::vector<int>(outs.size(), 0)};
}


// Sharding: after differentiation the call computes fun, partitioned in its place.
std::optional<spmd::Plan> CustomJvpCall::sharding_rule(const spmd::RuleArgs&) const {
  spmd::Plan p;
  p.inline_body = bodies()[0];
  return p;
}

}  // namespace graft
