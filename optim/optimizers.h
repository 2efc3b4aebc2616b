// Optimizers as chains of building blocks, with Optax's names, defaults and semantics:
//
//   sgd    = chain(trace(momentum, nesterov) if momentum, scale_by_learning_rate(lr))
//   adam   = chain(scale_by_adam, scale_by_learning_rate(lr))
//   adamw  = chain(scale_by_adam, add_decayed_weights(wd, mask), scale_by_learning_rate(lr))
//   lion   = chain(scale_by_lion, add_decayed_weights(wd, mask), scale_by_learning_rate(lr))
//
// Decoupled weight decay is multiplied by the learning rate (it is added before the lr
// scaling), as in Optax and PyTorch's AdamW. Moments have the params' dtype; counts are i32.
#pragma once

#include <optional>

#include "optim/schedule.h"
#include "optim/transform.h"
#include "optim/transformations.h"

namespace graft::optim {

struct SgdOptions {
  Schedule learning_rate = 1e-2;
  std::optional<double> momentum;  // none: plain SGD, no state but the lr's
  bool nesterov = false;
};
GradientTransformation sgd(const SgdOptions& options = {});

struct AdamOptions {
  Schedule learning_rate = 1e-3;
  double b1 = 0.9;
  double b2 = 0.999;
  double eps = 1e-8;
  double eps_root = 0.0;
  bool nesterov = false;
};
GradientTransformation adam(const AdamOptions& options = {});

struct AdamWOptions {
  Schedule learning_rate = 1e-3;
  double b1 = 0.9;
  double b2 = 0.999;
  double eps = 1e-8;
  double eps_root = 0.0;
  Schedule weight_decay = 1e-4;
  Mask mask;  // leaves that decay; empty: all (e.g. ndim_at_least(2) for matrices only)
  bool nesterov = false;
};
GradientTransformation adamw(const AdamWOptions& options = {});

struct LionOptions {
  Schedule learning_rate = 1e-4;
  double b1 = 0.9;
  double b2 = 0.99;
  Schedule weight_decay = 1e-3;
  Mask mask;
};
GradientTransformation lion(const LionOptions& options = {});

// optax.adafactor: chain(scale_by_factored_rms, clip_by_block_rms(clipping_threshold) if set,
// scale_by_learning_rate(lr, flip_sign=false) if set, scale_by_param_block_rms if
// multiply_by_parameter_scale, add_decayed_weights(weight_decay_rate, mask) if set, scale(-1)).
// Optax's momentum option is not supported.
struct AdafactorOptions {
  std::optional<Schedule> learning_rate;  // none: no lr scaling (the relative step size only)
  int64_t min_dim_size_to_factor = 128;
  double decay_rate = 0.8;
  int64_t decay_offset = 0;
  bool multiply_by_parameter_scale = true;
  std::optional<double> clipping_threshold = 1.0;
  std::optional<Schedule> weight_decay_rate;
  double eps = 1e-30;
  bool factored = true;
  Mask weight_decay_mask;
};
GradientTransformation adafactor(const AdafactorOptions& options = {});

}  // namespace graft::optim
