// Schedules: a learning rate (or weight decay) as a function of the step count, like
// optax.schedules. A schedule is traceable: called on an i32 Array count (a tracer under jit)
// it builds an f32 scalar Array with ops only (where, minimum, cos), never a C++ branch on the
// count. Called with a plain integer it evaluates at once, for logging:
//
//   auto lr = graft::optim::warmup_cosine_decay(0.0, 3e-4, 2000, 100000, 3e-5);
//   std::cout << "lr " << lr(step) << "\n";          // float
//   Array lr_now = lr(state_count);                   // f32 scalar Array, traceable
//
// A plain number converts implicitly to a constant schedule, so every optimizer option that
// takes a learning rate takes either.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "core/array.h"

namespace graft::optim {

class Schedule {
 public:
  using Fn = std::function<Array(const Array& count)>;

  Schedule(double value);  // NOLINT(runtime/explicit): a constant
  Schedule(Fn fn, std::string name);

  // The value at `count` (an integer scalar Array, e.g. an optimizer's i32 count): f32 scalar.
  Array operator()(const Array& count) const;
  // The value at a plain step, evaluated now.
  float operator()(int64_t step) const;

  bool is_constant() const { return fn_ == nullptr; }
  double constant_value() const { return value_; }  // meaningful when is_constant()
  const std::string& name() const { return name_; }

 private:
  Fn fn_;
  double value_ = 0;
  std::string name_;
};

Schedule constant_schedule(double value);

// init_value -> end_value linearly over transition_steps, starting at transition_begin
// (optax.linear_schedule); constant init_value when transition_steps <= 0.
Schedule linear_schedule(double init_value, double end_value, int64_t transition_steps,
                         int64_t transition_begin = 0);

// init_value * ((1 - alpha) * 0.5 * (1 + cos(pi * min(t, decay_steps) / decay_steps)) + alpha)
// (optax.cosine_decay_schedule, exponent 1). decay_steps must be positive.
Schedule cosine_decay(double init_value, int64_t decay_steps, double alpha = 0.0);

// Linear warmup init_value -> peak_value over warmup_steps, then cosine decay to end_value at
// decay_steps (total, warmup included), like optax.warmup_cosine_decay_schedule.
Schedule warmup_cosine_decay(double init_value, double peak_value, int64_t warmup_steps,
                             int64_t decay_steps, double end_value = 0.0);

// Warmup-stable-decay (WSD, "trapezoidal"): linear warmup init_value -> peak_value over
// warmup_steps, constant peak_value, then a decay to end_value over the last
// decay_steps = int(decay_fraction * total_steps) steps; end_value afterwards.
enum class DecayShape { kLinear, kCosine, kSqrt };  // sqrt: peak - (peak - end) * sqrt(frac)
struct WsdOptions {
  double peak_value = 1.0;
  int64_t warmup_steps = 0;
  int64_t total_steps = 1;
  double decay_fraction = 0.1;
  double init_value = 0.0;
  double end_value = 0.0;
  DecayShape decay = DecayShape::kLinear;
};
Schedule warmup_stable_decay(const WsdOptions& options);

// Optax's join_schedules: schedules[0] until boundaries[0], then schedules[1] counted from
// boundaries[0], and so on. boundaries.size() == schedules.size() - 1.
Schedule join_schedules(std::vector<Schedule> schedules, std::vector<int64_t> boundaries);

}  // namespace graft::optim
