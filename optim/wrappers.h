// Wrappers around other transformations, as Optax's: partition by label (multi_transform),
// skipping non-finite updates (apply_if_finite) and hyperparameters kept in the state
// (inject_hyperparams). All traceable: choices between outcomes are made with `where`.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/array.h"
#include "optim/schedule.h"
#include "optim/transform.h"

namespace graft::optim {

// A leaf's label, from its dotted path and value (shape, dtype; never its data).
using Labeler = std::function<std::string(const std::string& path, const Array& leaf)>;

// optax.multi_transform (optax.partition): each leaf goes through the transformation of its
// label only; every transformation sees only its leaves (as optax.masked). The state has the
// parts of each transformation, in the map's (sorted) label order. A label with no
// transformation throws graft::Error("[optim.multi_transform] ...").
GradientTransformation multi_transform(std::map<std::string, GradientTransformation> transforms,
                                       Labeler labels);
// Labels given as a list in tree-leaf order (the flattened pytree of labels).
GradientTransformation multi_transform(std::map<std::string, GradientTransformation> transforms,
                                       std::vector<std::string> labels);

// optax.apply_if_finite: when any update is NaN or Inf the inner transformation is skipped
// (zero updates, its state kept) unless that happened more than max_consecutive_errors times
// in a row. Part 0 holds "notfinite_count" (i32, consecutive), "last_finite" (bool),
// "total_notfinite" (i32, never reset); the inner parts follow.
GradientTransformation apply_if_finite(GradientTransformation inner, int max_consecutive_errors);

// optax.inject_hyperparams: the hyperparameters live in the state (f32 scalars, part 0, one slot
// per name, next to "count"), so they can change between steps without retracing. A scheduled
// hyperparameter is recomputed from the count at every update; a constant one is read from the
// state, where the user may overwrite it (set_hyperparam). `factory` builds the inner
// transformation from the current values (it runs at every update, on tracers under jit, and
// must give the same state layout whatever the values).
//
//   auto opt = inject_hyperparams(
//       [](const Hyperparams& h) { return sgd({.learning_rate = injected(h.at("lr"))}); },
//       {{"lr", 0.1}});
//   state = set_hyperparam(state, "lr", 0.05);
using Hyperparams = std::map<std::string, Array>;
GradientTransformation inject_hyperparams(
    std::function<GradientTransformation(const Hyperparams&)> factory,
    std::map<std::string, Schedule> hyperparams);
// A schedule that returns `value` whatever the count: how an injected Array reaches an option
// that takes a Schedule (learning_rate, weight_decay).
Schedule injected(const Array& value);
// The value of a hyperparameter in the state of an inject_hyperparams (the outermost
// transformation of that state), and a copy of the state with it replaced.
Array get_hyperparam(const State& state, const std::string& name);
State set_hyperparam(State state, const std::string& name, double value);

}  // namespace graft::optim
