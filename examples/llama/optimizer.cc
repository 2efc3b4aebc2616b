#include "examples/llama/optimizer.h"

#include <algorithm>
#include <string>
#include <vector>

namespace graft::llama_train {

optim::Schedule make_schedule(const train::TrainConfig& config) {
  const auto& s = config.lr_scheduler;
  const double peak = config.optimizer.lr;
  const double end = peak * s.min_lr_ratio;
  const int64_t steps = std::max<int64_t>(config.training.steps, 1);
  const int64_t warmup = std::min(s.warmup_steps, steps);
  if (s.decay_type == "wsd") {
    return optim::warmup_stable_decay({.peak_value = peak,
                                       .warmup_steps = warmup,
                                       .total_steps = steps,
                                       .decay_fraction = s.decay_ratio,
                                       .init_value = 0.0,
                                       .end_value = end});
  }
  if (s.decay_type == "cosine") {
    return optim::warmup_cosine_decay(0.0, peak, warmup, std::max(steps, warmup + 1), end);
  }
  optim::Schedule warm = optim::linear_schedule(0.0, peak, warmup);
  optim::Schedule after =
      s.decay_type == "linear"
          ? optim::linear_schedule(peak, end, std::max<int64_t>(steps - warmup, 1))
          : optim::constant_schedule(peak);
  return optim::join_schedules({warm, after}, {warmup});
}

optim::GradientTransformation make_optimizer(const train::TrainConfig& config,
                                             const optim::Schedule& schedule) {
  const auto& o = config.optimizer;
  optim::Mask decay = [](const std::string& path, const Array&) {
    return path.find("norm") == std::string::npos;
  };
  optim::GradientTransformation base = optim::identity();
  if (o.name == "adamw") {
    base = optim::adamw({.learning_rate = schedule,
                         .b1 = o.beta1,
                         .b2 = o.beta2,
                         .eps = o.eps,
                         .weight_decay = o.weight_decay,
                         .mask = decay});
  } else if (o.name == "adam") {
    base = optim::adam({.learning_rate = schedule, .b1 = o.beta1, .b2 = o.beta2, .eps = o.eps});
  } else if (o.name == "lion") {
    base = optim::lion({.learning_rate = schedule,
                        .b1 = o.beta1,
                        .b2 = o.beta2,
                        .weight_decay = o.weight_decay,
                        .mask = decay});
  } else {  // "sgd" (validate() rejects anything else)
    base = optim::sgd({.learning_rate = schedule, .momentum = o.momentum});
  }
  if (config.training.max_norm <= 0) return base;
  return optim::chain(optim::clip_by_global_norm(config.training.max_norm), base);
}

}  // namespace graft::llama_train
