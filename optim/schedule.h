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
#include <map>
#include <optional>
#include <string>
#include <vector>

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

// init_value * decay_rate^((t - transition_begin) / transition_steps) after transition_begin
// (init_value before), the exponent floored when staircase; clipped at end_value from below
// (decay_rate < 1) or above (decay_rate > 1) when given (optax.exponential_decay). Constant
// init_value when transition_steps <= 0 or decay_rate == 0.
Schedule exponential_decay(double init_value, int64_t transition_steps, double decay_rate,
                           int64_t transition_begin = 0, bool staircase = false,
                           std::optional<double> end_value = std::nullopt);

// init_value, multiplied by scale at every boundary the step has reached (step >= boundary),
// e.g. {{1000, 0.1}, {2000, 0.1}} (optax.piecewise_constant_schedule). Scales must be >= 0.
Schedule piecewise_constant_schedule(double init_value,
                                     const std::map<int64_t, double>& boundaries_and_scales = {});

// (init_value - end_value) * (1 - t / transition_steps)^power + end_value with t =
// clip(step - transition_begin, 0, transition_steps) (optax.polynomial_schedule).
Schedule polynomial_schedule(double init_value, double end_value, double power,
                             int64_t transition_steps, int64_t transition_begin = 0);

// Interpolates, linearly or by a half cosine, between the cumulative products init_value,
// init_value * scale_0, ... placed at 0 and the boundaries; the last value afterwards
// (optax.piecewise_interpolate_schedule).
enum class InterpolateType { kLinear, kCosine };
Schedule piecewise_interpolate_schedule(InterpolateType type, double init_value,
                                        const std::map<int64_t, double>& boundaries_and_scales);

// One-cycle (Smith & Topin 2017): cosine from peak_value / div_factor up to peak_value at
// int(pct_start * transition_steps), then down to peak_value / (div_factor * final_div_factor)
// at transition_steps (optax.cosine_onecycle_schedule).
Schedule cosine_onecycle_schedule(int64_t transition_steps, double peak_value,
                                  double pct_start = 0.3, double div_factor = 25.0,
                                  double final_div_factor = 1e4);

// One-cycle, linear: peak_value / div_factor up to peak_value at int(pct_start * T), back down
// to peak_value / div_factor at int(pct_final * T), then to that / final_div_factor at T
// (optax.linear_onecycle_schedule).
Schedule linear_onecycle_schedule(int64_t transition_steps, double peak_value,
                                  double pct_start = 0.3, double pct_final = 0.85,
                                  double div_factor = 25.0, double final_div_factor = 1e4);

}  // namespace graft::optim
