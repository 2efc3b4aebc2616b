// GradientTransformation: Optax's (init, update) pair, pure and type-erased.
//
//   auto opt = graft::optim::adamw({.learning_rate = 3e-4, .weight_decay = 0.1});
//   graft::optim::State state = opt.init(params);                 // params: any pytree P
//   auto [updates, state2] = opt.update(grads, state, params);   // updates: a P
//   params = graft::optim::apply_updates(params, updates);
//
// Nothing is mutated: update returns the new state. Both run on tracers, so a whole training
// step (grad, update, apply) can be jitted with the State as an argument and a result. The
// erased functions see the parameter tree flattened (leaves in tree order) with each leaf's
// dotted path (tree_leaf_paths), which masks use to pick leaves by name.
//
// Errors: grads and params of different structures, or a state from another optimizer, throw
// graft::Error("[optim.update] ...").
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "core/array.h"
#include "core/tree/tree.h"
#include "optim/state.h"

namespace graft::optim {

// A parameter tree, flattened: leaves in tree order and their dotted paths. leaves is empty
// when update was called without params.
struct FlatParams {
  std::vector<Array> leaves;
  std::vector<std::string> paths;
};

class GradientTransformation {
 public:
  // init: the state parts (exactly num_parts of them) for these params.
  using InitFn = std::function<std::vector<Slots>(const FlatParams& params)>;
  // update: new updates (same length as `updates`) and new state parts.
  using UpdateFn = std::function<std::pair<std::vector<Array>, std::vector<Slots>>(
      const std::vector<Array>& updates, const std::vector<Slots>& state,
      const FlatParams& params)>;

  GradientTransformation(std::string name, int num_parts, InitFn init, UpdateFn update);

  const std::string& name() const { return name_; }
  int num_parts() const { return num_parts_; }

  State init_flat(const FlatParams& params) const;
  // Checks the state's part count and each result's length.
  std::pair<std::vector<Array>, State> update_flat(const std::vector<Array>& updates,
                                                   const State& state,
                                                   const FlatParams& params) const;
  // The erased pieces over a slice of a chain's parts (what chain and wrappers call).
  std::vector<Slots> init_parts(const FlatParams& params) const;
  std::pair<std::vector<Array>, std::vector<Slots>> update_parts(const std::vector<Array>& updates,
                                                                 const std::vector<Slots>& state,
                                                                 const FlatParams& params) const;

  template <class P>
  State init(const P& params) const {
    auto [leaves, def] = tree_flatten(params);
    return init_flat(FlatParams{std::move(leaves), tree_leaf_paths(def)});
  }

  template <class P>
  std::pair<P, State> update(const P& grads, const State& state, const P& params) const {
    auto [g, gdef] = tree_flatten(grads);
    auto [p, pdef] = tree_flatten(params);
    if (gdef != pdef) {
      fail("optim.update", "grads and params have different structures: ", gdef.str(), " vs ",
           pdef.str());
    }
    auto [u, s] = update_flat(g, state, FlatParams{std::move(p), tree_leaf_paths(pdef)});
    return {tree_unflatten<P>(gdef, u), std::move(s)};
  }

  // Without params (transformations that need them, e.g. add_decayed_weights, throw).
  template <class P>
  std::pair<P, State> update(const P& grads, const State& state) const {
    auto [g, gdef] = tree_flatten(grads);
    auto [u, s] = update_flat(g, state, FlatParams{{}, tree_leaf_paths(gdef)});
    return {tree_unflatten<P>(gdef, u), std::move(s)};
  }

 private:
  std::string name_;
  int num_parts_;
  InitFn init_;
  UpdateFn update_;
};

// A transformation with one state part: the common case. init returns its slots; update
// returns new updates and new slots.
using SimpleInit = std::function<Slots(const FlatParams& params)>;
using SimpleUpdate = std::function<std::pair<std::vector<Array>, Slots>(
    const std::vector<Array>& updates, const Slots& state, const FlatParams& params)>;
GradientTransformation make_transformation(std::string name, SimpleInit init, SimpleUpdate update);

// Applies the transformations in order; the state has all their parts, in order.
GradientTransformation chain(std::vector<GradientTransformation> transformations);

template <class... T>
GradientTransformation chain(const GradientTransformation& first, const T&... rest) {
  return chain(std::vector<GradientTransformation>{first, rest...});
}

// Leaves updates unchanged; an empty state part.
GradientTransformation identity();

// params + updates, leaf by leaf, cast back to each param's dtype (optax.apply_updates).
std::vector<Array> apply_updates_flat(const std::vector<Array>& params,
                                      const std::vector<Array>& updates);
template <class P>
P apply_updates(const P& params, const P& updates) {
  auto [p, pdef] = tree_flatten(params);
  auto [u, udef] = tree_flatten(updates);
  if (pdef != udef) {
    fail("optim.apply_updates", "params and updates have different structures: ", pdef.str(),
         " vs ", udef.str());
  }
  return tree_unflatten<P>(pdef, apply_updates_flat(p, u));
}

// Helpers for writing transformations.
// The slot `name` of a state part, checked to hold n arrays (one per leaf).
const std::vector<Array>& slot(const Slots& state, const std::string& name, size_t n);
// count + 1, saturating at INT32_MAX like optax.safe_increment.
Array safe_increment(const Array& count);
// An i32 zero, the initial value of every step counter.
Array zero_count();
// One zero array per leaf (the initial value of a moment or momentum slot).
std::vector<Array> zeros_for(const FlatParams& params);
// Slot by slot where(cond, on_true, on_false), each in on_false's dtype: how a wrapper keeps or
// replaces an inner state without a C++ branch. `who` names the wrapper in the error thrown
// when the two layouts differ.
std::vector<Slots> where_parts(const Array& cond, const std::vector<Slots>& on_true,
                               const std::vector<Slots>& on_false, const std::string& who);

}  // namespace graft::optim
