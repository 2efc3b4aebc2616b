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
// checkpoint(f) is one `remat` primitive holding f's traced graph. When its policy saves
// values, they are extra outputs of the primitive (computed by the forward pass), so the
// backward pass reads them instead of recomputing them. jvp, vjp and vmap of it compose (the
// jvp and vmap of a remat are remats with the same policy).
#pragma once

#include <functional>
#include <memory>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "core/tree.h"
#include "core/ir/graph.h"

namespace graft {

class Primitive;

// Which values computed inside a checkpointed function the backward pass may keep, decided
// per primitive application (all outputs of an application are saved or none).
struct RematPolicy {
  std::string name;
  std::function<bool(const Primitive&)> saveable;
};

RematPolicy nothing_saveable();     // recompute everything (the default, as in JAX)
RematPolicy everything_saveable();  // save every intermediate value (no recomputation)
RematPolicy dots_saveable();        // save the outputs of dot_general only
// Save only the values marked by checkpoint_name with one of these names.
RematPolicy save_only_these_names(std::set<std::string> names);

// The identity, marking x with a name that save_only_these_names policies refer to.
Array checkpoint_name(const Array& x, const std::string& name);

// One value the pullback keeps: what produced it ("argument 1", "dot_general", or
// "remat/dot_general" for a value a checkpoint saved), its aval and size.
struct SavedResidual {
  std::string source;
  Aval aval;
  int64_t bytes = 0;
};

namespace detail {

std::vector<Array> bind_checkpoint(const std::string& name, FlatFn fn, RematPolicy policy,
                                   const std::vector<Array>& args);
std::vector<SavedResidual> saved_residuals_flat(const FlatFn& fn, const std::vector<Array>& args);
std::string format_residuals(const std::vector<SavedResidual>& res);

template <typename F, typename... Args>
FlatFn flat_fn(F f, const TreeDef& def, std::shared_ptr<TreeDef> out_def) {
  using Tuple = std::tuple<Args...>;
  using Result = std::decay_t<decltype(f(std::declval<const Args&>()...))>;
  return [f, def, out_def](const std::vector<Array>& xs) {
    Result r = std::apply(f, tree_unflatten<Tuple>(def, xs));
    auto [l, d] = tree_flatten(r);
    *out_def = d;
    return l;
  };
}

}  // namespace detail

template <typename F>
auto checkpoint(F f, RematPolicy policy = nothing_saveable(), std::string name = "checkpoint") {
  return [f, policy, name](const auto&... args) {
    using Args = std::tuple<std::decay_t<decltype(args)>...>;
    using Result = std::decay_t<decltype(f(args...))>;
    auto [leaves, def] = tree_flatten(Args(args...));
    auto out_def = std::make_shared<TreeDef>();
    FlatFn fn = detail::flat_fn<F, std::decay_t<decltype(args)>...>(f, def, out_def);
    std::vector<Array> outs = detail::bind_checkpoint(name, fn, policy, leaves);
    return tree_unflatten<Result>(*out_def, outs);
  };
}
template <typename F>
auto remat(F f, RematPolicy policy = nothing_saveable(), std::string name = "checkpoint") {
  return checkpoint(std::move(f), std::move(policy), std::move(name));
}

// The values the pullback of f at args keeps for the backward pass (see
// detail::vjp_residuals in core/ir/ad.h for exactly what counts).
template <typename F, typename... Args>
std::vector<SavedResidual> saved_residuals(F f, const Args&... args) {
  auto [leaves, def] = tree_flatten(std::tuple<Args...>(args...));
  FlatFn fn = detail::flat_fn<F, Args...>(f, def, std::make_shared<TreeDef>());
  return detail::saved_residuals_flat(fn, leaves);
}

// A table of saved_residuals(f, args...), one line per value and the total bytes.
template <typename F, typename... Args>
std::string print_saved_residuals(F f, const Args&... args) {
  return detail::format_residuals(saved_residuals(f, args...));
}

}  // namespace graft
