// custom_jvp and custom_vjp: functions whose derivatives the user supplies, like JAX's.
//
//   // log(1 + e^x) with a stable derivative:
//   auto log1pexp = graft::custom_jvp(
//       [](const Array& x) { return log1p(exp(x)); },
//       [](const std::tuple<Array>& p, const std::tuple<Array>& t) {
//         auto [x] = p; auto [tx] = t;
//         return std::pair{log1p(exp(x)), tx * sigmoid(x)};
//       });
//
//   auto clip_grad = graft::custom_vjp(
//       f,                                                   // f(args...) -> out
//       [](const Array& x) { return std::pair{f(x), x}; },   // fwd: (out, residuals)
//       [](const Array& res, const Array& ct) { return std::tuple{clip(ct, -1.0, 1.0)}; });
//
// Both work under grad, vjp, vmap and jit (custom_jvp also under jvp; reverse mode of a
// custom_jvp function transposes the user's jvp rule, which must be linear in the tangents). A
// custom_vjp function cannot be differentiated in forward mode (jvp): a graft::Error, as in JAX.
//
// Each call traces f and the rules once into closed programs held by one primitive
// (core/primitives/call.h; make_graph prints them nested). custom_vjp follows JAX: without
// differentiation f runs; under grad, fwd runs once (not f) and bwd receives the residuals it
// computed. Arrays the functions close over get no derivative: pass them as arguments.
#pragma once

#include <memory>
#include <string>
#include <tuple>
#include <utility>

#include "core/primitives/call.h"
#include "core/tree/tree.h"

namespace graft {

// rule(primals tuple, tangents tuple) -> std::pair(outputs, output tangents).
template <typename F, typename Rule>
auto custom_jvp(F f, Rule rule, std::string name = "custom_jvp") {
  return [f, rule, name](const auto&... args) {
    using Args = std::tuple<std::decay_t<decltype(args)>...>;
    using Result = std::decay_t<decltype(f(args...))>;
    auto [leaves, def] = tree_flatten(Args(args...));
    auto out_def = std::make_shared<TreeDef>();
    FlatFn fn = [f, def = def, out_def](const std::vector<Array>& xs) {
      Result r = std::apply(f, tree_unflatten<Args>(def, xs));
      auto [l, d] = tree_flatten(r);
      *out_def = d;
      return l;
    };
    detail::JvpRuleFn jr = [rule, def = def](const std::vector<Array>& ps,
                                             const std::vector<Array>& ts) {
      auto [o, t] = rule(tree_unflatten<Args>(def, ps), tree_unflatten<Args>(def, ts));
      return std::pair{tree_leaves(o), tree_leaves(t)};
    };
    std::vector<Array> outs = detail::bind_custom_jvp(name, fn, jr, leaves);
    return tree_unflatten<Result>(*out_def, outs);
  };
}

// fwd(args...) -> std::pair(out, residuals pytree); bwd(residuals, out cotangent) -> a tuple
// with one cotangent per argument.
template <typename F, typename Fwd, typename Bwd>
auto custom_vjp(F f, Fwd fwd, Bwd bwd, std::string name = "custom_vjp") {
  return [f, fwd, bwd, name](const auto&... args) {
    using Args = std::tuple<std::decay_t<decltype(args)>...>;
    using Result = std::decay_t<decltype(f(args...))>;
    using Res = std::decay_t<decltype(fwd(args...).second)>;
    auto [leaves, def] = tree_flatten(Args(args...));
    auto out_def = std::make_shared<TreeDef>();
    auto res_def = std::make_shared<TreeDef>();
    FlatFn fn = [f, def = def, out_def](const std::vector<Array>& xs) {
      Result r = std::apply(f, tree_unflatten<Args>(def, xs));
      auto [l, d] = tree_flatten(r);
      *out_def = d;
      return l;
    };
    detail::FwdFn fw = [fwd, def = def, res_def](const std::vector<Array>& xs) {
      auto [o, res] = std::apply(fwd, tree_unflatten<Args>(def, xs));
      auto [rl, rd] = tree_flatten(res);
      *res_def = rd;
      return std::pair{tree_leaves(o), rl};
    };
    detail::BwdFn bw = [bwd, out_def, res_def](const std::vector<Array>& res,
                                               const std::vector<Array>& cts) {
      auto in_cts = bwd(tree_unflatten<Res>(*res_def, res), tree_unflatten<Result>(*out_def, cts));
      return tree_leaves(in_cts);
    };
    std::vector<Array> outs = detail::bind_custom_vjp(name, fn, fw, bw, leaves);
    return tree_unflatten<Result>(*out_def, outs);
  };
}

}  // namespace graft
