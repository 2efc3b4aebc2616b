// Optimizers as chains of building blocks, with Optax's names, defaults and semantics:
//
//   sgd    = chain(trace(momentum, nesterov) if momentum, scale_by_learning_rate(lr))
//   adam   = chain(scale_by_adam, scale_by_learning_rate(lr))
//   adamw  = chain(scale_by_adam, add_decayed_weights(wd, mask), scale_by_learning_rate(lr))
//   lion   = chain(scale_by_lion, add_decayed_weights(wd, mask), scale_by_learning_rate(lr))
//   rmsprop = chain(scale_by_rms (scale_by_stddev if centered), scale_by_learning_rate(lr),
//                   trace(momentum, nesterov) if momentum)
//   adagrad = chain(scale_by_rss, scale_by_learning_rate(lr))
//   adamax  = chain(scale_by_adamax, scale_by_learning_rate(lr))
//   nadam   = adam with nesterov = true
//   radam   = chain(scale_by_radam, scale_by_learning_rate(lr))
//   lamb    = chain(scale_by_adam, add_decayed_weights(wd, mask), scale_by_trust_ratio,
//                   scale_by_learning_rate(lr))
//   lars    = chain(add_decayed_weights(wd, wd_mask), masked(scale_by_trust_ratio,
//                   trust_ratio_mask), scale_by_learning_rate(lr), trace(momentum, nesterov))
//
// Optax requires the learning rate; the defaults below are only conveniences.
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
// optax.nadam: adam(options) with nesterov = true (whatever options.nesterov says).
GradientTransformation nadam(const AdamOptions& options = {});

struct LionOptions {
  Schedule learning_rate = 1e-4;
  double b1 = 0.9;
  double b2 = 0.99;
  Schedule weight_decay = 1e-3;
  Mask mask;
};
GradientTransformation lion(const LionOptions& options = {});

struct RmspropOptions {
  Schedule learning_rate = 1e-2;
  double decay = 0.9;
  double eps = 1e-8;
  double initial_scale = 0.0;
  bool eps_in_sqrt = true;  // Optax's default; PyTorch adds eps outside the sqrt
  bool centered = false;
  std::optional<double> momentum;  // none: no trace (Optax's identity)
  bool nesterov = false;
  bool bias_correction = false;
};
GradientTransformation rmsprop(const RmspropOptions& options = {});

struct AdagradOptions {
  Schedule learning_rate = 1e-2;
  double initial_accumulator_value = 0.1;
  double eps = 1e-7;
};
GradientTransformation adagrad(const AdagradOptions& options = {});

struct AdamaxOptions {
  Schedule learning_rate = 1e-3;
  double b1 = 0.9;
  double b2 = 0.999;
  double eps = 1e-8;
};
GradientTransformation adamax(const AdamaxOptions& options = {});

struct RAdamOptions {
  Schedule learning_rate = 1e-3;
  double b1 = 0.9;
  double b2 = 0.999;
  double eps = 1e-8;
  double eps_root = 0.0;
  double threshold = 5.0;
  bool nesterov = false;
};
GradientTransformation radam(const RAdamOptions& options = {});

struct LambOptions {
  Schedule learning_rate = 1e-3;
  double b1 = 0.9;
  double b2 = 0.999;
  double eps = 1e-6;
  double eps_root = 0.0;
  Schedule weight_decay = 0.0;
  Mask mask;  // leaves that decay; empty: all
};
GradientTransformation lamb(const LambOptions& options = {});

struct LarsOptions {
  Schedule learning_rate = 1e-2;
  Schedule weight_decay = 0.0;
  Mask weight_decay_mask;  // empty: all leaves (Optax's True)
  double trust_coefficient = 0.001;
  double eps = 0.0;
  Mask trust_ratio_mask;  // empty: all leaves (Optax's True)
  double momentum = 0.9;
  bool nesterov = false;
};
GradientTransformation lars(const LarsOptions& options = {});

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

// optax.contrib.muon: 2-D leaves get chain(scale_by_muon, scale_by_shape(consistent_rms),
// add_decayed_weights(weight_decay, mask), scale_by_learning_rate(lr)); every other leaf gets
// adamw(adam_learning_rate or lr, adam_b1, adam_b2, eps, adam_eps_root, adam_weight_decay,
// nesterov), as a multi_transform with labels "adam" and "muon". Optax's
// muon_weight_dimension_numbers (muon on reshaped N-D leaves) is not supported.
struct MuonOptions {
  Schedule learning_rate = 2e-2;
  std::vector<std::array<double, 3>> ns_coeffs = {{3.4445, -4.7750, 2.0315}};
  int ns_steps = 5;
  double beta = 0.95;
  double eps = 1e-8;
  Schedule weight_decay = 0.0;
  Mask weight_decay_mask;
  bool nesterov = true;
  bool adaptive = false;
  double adam_b1 = 0.9;
  double adam_b2 = 0.999;
  double adam_eps_root = 0.0;
  Schedule adam_weight_decay = 0.0;
  std::optional<Schedule> adam_learning_rate;
  std::optional<double> consistent_rms;
};
GradientTransformation muon(const MuonOptions& options = {});

}  // namespace graft::optim
