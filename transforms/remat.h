// checkpoint (a.k.a. remat), like jax.checkpoint: the forward values computed inside f are not
// kept for the backward pass, except those the policy saves; the pullback recomputes the rest
// from f's inputs and the saved values.
//
//   auto layer = graft::checkpoint(
//       [](const Array& x, const Array& w) { return tanh(matmul(x, w)); },
//       graft::dots_saveable());
//   auto named = [](const Array& x) { return sin(graft::checkpoint_name(exp(x), "e")); };
//   auto g = graft::grad(graft::checkpoint(named, graft::save_only_these_names({"e"})));
//   std::cout << graft::print_saved_residuals(loss, params, x);  // what grad keeps
//
// checkpoint(f) is one `remat` primitive holding f traced into a closed program
// (core/primitives/call.h; make_graph prints it nested). When its policy saves values, they
// are extra outputs of the primitive (computed by the forward pass), so the backward pass
// reads them instead of recomputing them. jvp, vjp and vmap of it compose (the jvp and vmap
// of a remat are remats with the same policy). RematPolicy, the policies and checkpoint_name
// are declared in core/primitives/call.h.
#pragma once

#include <functional>
#include <memory>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "core/primitives/call.h"
#include "core/tree/tree.h"
#include "transforms/flat_fn.h"

namespace graft {

template <typename F>
auto checkpoint(F f, RematPolicy policy = nothing_saveable(), std::string name = "checkpoint") {
  return [f, policy, name](const auto&... args) {
    using Args = std::tuple<std::decay_t<decltype(args)>...>;
    using Result = std::decay_t<decltype(f(args...))>;
    auto [leaves, def] = tree_flatten(Args(args...));
    TreeDef out_def;
    FlatFn fn = detail::flat_fn<Args, Result>(f, def, &out_def);
    std::vector<Array> outs = detail::bind_checkpoint(name, fn, policy, leaves);
    return tree_unflatten<Result>(out_def, outs);
  };
}
template <typename F>
auto remat(F f, RematPolicy policy = nothing_saveable(), std::string name = "checkpoint") {
  return checkpoint(std::move(f), std::move(policy), std::move(name));
}

// The values the pullback of f at args keeps for the backward pass (see
// detail::vjp_residuals in core/interpreters/ad.h for exactly what counts).
template <typename F, typename... Args>
std::vector<SavedResidual> saved_residuals(F f, const Args&... args) {
  using Result = std::decay_t<decltype(f(args...))>;
  auto [leaves, def] = tree_flatten(std::tuple<Args...>(args...));
  TreeDef out_def;
  FlatFn fn = detail::flat_fn<std::tuple<Args...>, Result>(f, def, &out_def);
  return detail::saved_residuals_flat(fn, leaves);
}

// A table of saved_residuals(f, args...), one line per value and the total bytes.
template <typename F, typename... Args>
std::string print_saved_residuals(F f, const Args&... args) {
  return detail::format_residuals(saved_residuals(f, args...));
}

}  // namespace graft
