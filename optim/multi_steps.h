// Gradient accumulation with optax.MultiSteps semantics: each call adds the micro-batch
// gradient to a running mean; every k-th call the inner optimizer is applied to the mean and
// its updates are returned, the other calls return zeros and leave the inner state as it was.
// Traceable: the choice is made with `where`, never a C++ branch on the step, so one jitted
// train step serves every micro-step (the inner update is computed on every call, as Optax).
//
//   optim::MultiSteps opt(optim::adamw({.learning_rate = 3e-4}), /*every_k=*/4);
//   auto [updates, state] = opt.update(grads, state, params);
//   Array applied = optim::MultiSteps::has_updated(state);   // bool scalar
//
// State: part 0 holds "mini_step" and "gradient_step" (i32) and "acc_grads" (f32, like
// Optax's default accumulator dtype); the inner optimizer's parts follow.
// Not supported: Optax's should_skip_update_fn and a schedule for k.
#pragma once

#include "core/array.h"
#include "optim/transform.h"

namespace graft::optim {

class MultiSteps : public GradientTransformation {
 public:
  MultiSteps(GradientTransformation inner, int every_k);
  // True when the last update applied the inner optimizer (mini_step == 0 and
  // gradient_step > 0), like optax.MultiSteps.has_updated.
  static Array has_updated(const State& state);
};

}  // namespace graft::optim
