// custom_vjp_call's builder and rules (JAX's custom_vjp_call semantics).
//   Without differentiation the call runs fun. Reverse mode's forward pass binds
//   vjp_forward(), whose outputs are fwd's (outputs, then residuals): fwd runs once.
//   vjp: bwd on those residuals and the outputs' cotangents. Cotangents of the residuals
//        (differentiating a gradient again) go through fwd's own derivative.
//   jvp: an error, as in JAX. vmap: a custom_vjp_call of fun, fwd and bwd vmapped.
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

// fun([consts, args]) -> outs; fwd([consts, args]) -> [outs, res]; bwd([consts, res, cts]) ->
// one cotangent per arg. Values the three close over join the consts. Returns the outputs
// (followed by the residuals when `residual_outputs`).
std::vector<Array> make_custom_vjp(const std::string& name, size_t num_consts, const FlatFn& fun,
                                   const FlatFn& fwd, const FlatFn& bwd,
                                   const std::vector<Array>& inputs, bool residual_outputs) {
  std::vector<Aval> avals = avals_of(inputs);
  std::vector<Aval> consts_avals(avals.begin(),
                                 avals.begin() + static_cast<std::ptrdiff_t>(num_consts));
  std::vector<Aval> arg_avals(avals.begin() + static_cast<std::ptrdiff_t>(num_consts), avals.end());
  ClosedProgram f = trace_closed(fun, avals);
  ClosedProgram fw = trace_closed(fwd, avals);
  std::vector<Aval> outs = f.program->output_avals(), fw_outs = fw.program->output_avals();
  bool ok = fw_outs.size() >= outs.size();
  for (size_t j = 0; ok && j < outs.size(); ++j) {
    ok = fw_outs[j].shape == outs[j].shape && fw_outs[j].dtype == outs[j].dtype;
  }
  if (!ok) {
    fail("custom_vjp", name, ": fwd must return the function's outputs ", avals_str(outs),
         " followed by the residuals, got ", avals_str(fw_outs));
  }
  std::vector<Aval> res(fw_outs.begin() + static_cast<std::ptrdiff_t>(outs.size()), fw_outs.end());
  // A cotangent bwd leaves empty is a zero.
  FlatFn dense_bwd = [bwd, arg_avals](const std::vector<Array>& xs) {
    std::vector<Array> cts = bwd(xs);
    for (size_t i = 0; i < cts.size() && i < arg_avals.size(); ++i) {
      if (!cts[i].valid()) cts[i] = zeros(arg_avals[i].shape, arg_avals[i].dtype);
    }
    return cts;
  };
  ClosedProgram b = trace_closed(dense_bwd, concat_avals(concat_avals(consts_avals, res), outs));
  std::vector<Aval> cts = b.program->output_avals();
  if (cts.size() != arg_avals.size()) {
    fail("custom_vjp", name, ": bwd returned ", cts.size(), " cotangents for ", arg_avals.size(),
         " arguments");
  }
  for (size_t i = 0; i < cts.size(); ++i) {
    if (is_inexact(arg_avals[i].dtype) && cts[i].shape != arg_avals[i].shape) {
      fail("custom_vjp", name, ": bwd's cotangent ", i, " is ", cts[i].str(), " but argument ", i,
           " is ", arg_avals[i].str());
    }
  }
  std::vector<Aval> fc = avals_of(f.consts), wc = avals_of(fw.consts), bc = avals_of(b.consts);
  // Every body takes [fun's consts, fwd's, bwd's, the given consts, ...].
  ProgramPtr fp = insert_inputs(f.program, fc.size(), concat_avals(wc, bc));
  ProgramPtr wp = insert_inputs(insert_inputs(fw.program, wc.size(), bc), 0, fc);
  ProgramPtr bp = insert_inputs(b.program, 0, concat_avals(fc, wc));
  std::vector<Array> ins = concat(concat(concat(f.consts, fw.consts), b.consts), inputs);
  std::vector<Aval> out_avals = residual_outputs ? fw_outs : outs;
  auto p = std::make_shared<const CustomVjpCall>(
      name, static_cast<int>(fc.size() + wc.size() + bc.size() + num_consts),
      static_cast<int>(outs.size()), residual_outputs, std::vector<ProgramPtr>{fp, wp, bp},
      avals_of(ins), out_avals);
  return graft::bind(p, ins);
}

}  // namespace

std::vector<Array> bind_custom_vjp(const std::string& name, const FlatFn& fn, const FwdFn& fwd,
                                   const BwdFn& bwd, const std::vector<Array>& args) {
  auto num_res = std::make_shared<size_t>(0);
  FlatFn flat_fwd = [fwd, num_res](const std::vector<Array>& xs) {
    auto [o, r] = fwd(xs);
    *num_res = r.size();
    return concat(o, r);
  };
  FlatFn flat_bwd = [bwd, num_res](const std::vector<Array>& xs) {
    return bwd(part(xs, 0, *num_res), part(xs, *num_res, xs.size()));
  };
  return make_custom_vjp(name, 0, fn, flat_fwd, flat_bwd, args, false);
}

}  // namespace detail

using detail::concat;
using detail::instantiate;
using detail::part;

std::shared_ptr<const Primitive> CustomVjpCall::with_sub_programs(std::vector<ProgramPtr> b) const {
  for (size_t k = 0; k < 3; ++k) detail::check_same_signature(name(), *bodies()[k], *b.at(k));
  return std::make_shared<const CustomVjpCall>(fn_name(), num_consts_, num_out_, residual_outputs_,
                                               std::move(b), in_avals(), out_avals());
}

std::shared_ptr<const Primitive> CustomVjpCall::vjp_forward() const {
  if (residual_outputs_) return nullptr;
  return std::make_shared<const CustomVjpCall>(fn_name(), num_consts_, num_out_, true, bodies(),
                                               in_avals(), bodies()[1]->output_avals());
}

std::vector<Array> CustomVjpCall::jvp(const std::vector<Array>&, const std::vector<Array>&,
                                      const std::vector<Array>&) const {
  fail("custom_vjp", fn_name(),
       ": forward-mode differentiation (jvp) of a custom_vjp function is not supported; "
       "define it with custom_jvp to use jvp, jacfwd or hessian");
}

std::vector<Array> CustomVjpCall::vjp(const std::vector<Array>& primals,
                                      const std::vector<Array>& outputs,
                                      const std::vector<Array>& cts) const {
  const size_t nc = num_consts_, no = num_out(), nr = num_residuals();
  std::vector<Array> all = outputs;
  // Bound without its residuals (a rule re-applied the call): fwd runs here.
  if (all.size() < no + nr) all = run_program(*bodies()[1], primals);
  std::vector<Array> res = part(all, no, no + nr), out_cts;
  bool any = false;
  for (size_t j = 0; j < no; ++j) {
    any = any || cts[j].valid();
    out_cts.push_back(instantiate(cts[j], all[j]));
  }
  std::vector<Array> in_cts(primals.size());
  if (any) {
    std::vector<Array> arg_cts =
        run_program(*bodies()[2], concat(concat(part(primals, 0, nc), res), out_cts));
    for (size_t i = 0; i < arg_cts.size(); ++i) {
      if (is_inexact(primals[nc + i].dtype())) in_cts[nc + i] = arg_cts[i];
    }
  }
  // Cotangents of the residual outputs (a gradient differentiated again): through fwd.
  std::vector<Array> res_cts(no + nr);
  bool any_res = false;
  for (size_t k = 0; k < nr && no + k < cts.size(); ++k) {
    res_cts[no + k] = cts[no + k];
    any_res = any_res || cts[no + k].valid();
  }
  if (any_res) {
    std::vector<Array> extra = detail::vjp_program(bodies()[1], primals).pullback(res_cts);
    for (size_t i = 0; i < in_cts.size(); ++i) {
      if (is_inexact(primals[i].dtype())) in_cts[i] = detail::add_any(in_cts[i], extra[i]);
    }
  }
  return in_cts;
}

Batched CustomVjpCall::vmap(const std::vector<Array>& args, const std::vector<int>& dims) const {
  const int64_t size = detail::batch_size(args, dims);
  const size_t nc = num_consts_, nr = num_residuals(), no = num_out();
  ProgramPtr fun = bodies()[0], fwd = bodies()[1], bwd = bodies()[2];
  FlatFn fun_b = [fun, dims, size](const std::vector<Array>& xs) {
    return detail::run_batched(*fun, xs, dims, size);
  };
  FlatFn fwd_b = [fwd, dims, size](const std::vector<Array>& xs) {
    return detail::run_batched(*fwd, xs, dims, size);
  };
  // Residuals and cotangents come batched at axis 0; an argument's cotangent goes back to its
  // batch axis, summed over the batch when the argument is not batched.
  std::vector<int> bwd_dims(dims.begin(), dims.begin() + static_cast<std::ptrdiff_t>(nc));
  bwd_dims.resize(nc + nr + no, 0);
  std::vector<int> arg_dims(dims.begin() + static_cast<std::ptrdiff_t>(nc), dims.end());
  FlatFn bwd_b = [bwd, bwd_dims, arg_dims, size](const std::vector<Array>& xs) {
    std::vector<Array> in_cts = detail::run_batched(*bwd, xs, bwd_dims, size);
    for (size_t i = 0; i < in_cts.size() && i < arg_dims.size(); ++i) {
      in_cts[i] = arg_dims[i] < 0 ? sum(in_cts[i], {0}) : moveaxis(in_cts[i], 0, arg_dims[i]);
    }
    return in_cts;
  };
  std::vector<Array> outs =
      detail::make_custom_vjp(fn_name(), nc, fun_b, fwd_b, bwd_b, args, residual_outputs_);
  return {outs, std::vector<int>(outs.size(), 0)};
}


// Sharding: the call computes fun (fwd when its outputs include the residuals), partitioned
// in its place.
std::optional<spmd::Plan> CustomVjpCall::sharding_rule(const spmd::RuleArgs&) const {
  spmd::Plan p;
  p.inline_body = bodies()[residual_outputs() ? 1 : 0];
  return p;
}

}  // namespace graft
