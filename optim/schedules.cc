// Schedules follow optax.schedules operation by operation (same order of f32 ops), so values
// agree with Optax to rounding; see tests/optim/schedules_test.cc.
#include <cmath>
#include <numbers>
#include <utility>

#include "core/error.h"
#include "core/ops.h"
#include "optim/schedule.h"

namespace graft::optim {

Schedule::Schedule(double value) : value_(value), name_("constant") {}

Schedule::Schedule(Fn fn, std::string name) : fn_(std::move(fn)), name_(std::move(name)) {
  if (fn_ == nullptr) fail("optim.Schedule", "empty function for schedule ", name_);
}

Array Schedule::operator()(const Array& count) const {
  if (fn_ == nullptr) return full({}, value_, DType::kF32);
  Array v = fn_(count);
  if (v.ndim() != 0) fail("optim.Schedule", name_, " returned shape ", shape_str(v.shape()));
  return astype(v, DType::kF32);
}

float Schedule::operator()(int64_t step) const {
  return (*this)(scalar(static_cast<double>(step), DType::kI32)).item<float>();
}

Schedule constant_schedule(double value) { return Schedule(value); }

Schedule linear_schedule(double init_value, double end_value, int64_t transition_steps,
                         int64_t transition_begin) {
  if (transition_steps <= 0) return Schedule(init_value);
  if (transition_begin < 0) transition_begin = 0;  // as Optax
  return Schedule(
      [=](const Array& count) {
        Array c =
            clip(astype(count, DType::kI32) - transition_begin, Array(0), Array(transition_steps));
        Array frac = 1.0 - astype(c, DType::kF32) / static_cast<double>(transition_steps);
        return (init_value - end_value) * frac + end_value;
      },
      "linear");
}

Schedule cosine_decay(double init_value, int64_t decay_steps, double alpha) {
  if (decay_steps <= 0) {
    fail("optim.cosine_decay", "decay_steps must be positive, got ", decay_steps);
  }
  double steps = static_cast<double>(decay_steps);
  return Schedule(
      [=](const Array& count) {
        Array c = minimum(astype(count, DType::kF32), Array(steps));
        Array cosine = 0.5 * (1.0 + cos(std::numbers::pi * c / steps));
        return init_value * ((1.0 - alpha) * cosine + alpha);
      },
      "cosine_decay");
}

Schedule join_schedules(std::vector<Schedule> schedules, std::vector<int64_t> boundaries) {
  if (schedules.empty() || boundaries.size() + 1 != schedules.size()) {
    fail("optim.join_schedules", "need one boundary fewer than schedules, got ", schedules.size(),
         " schedules and ", boundaries.size(), " boundaries");
  }
  return Schedule(
      [schedules = std::move(schedules), boundaries = std::move(boundaries)](const Array& count) {
        Array step = astype(count, DType::kI32);
        Array out = schedules[0](step);
        for (size_t i = 0; i < boundaries.size(); ++i) {
          out = where(step < boundaries[i], out, schedules[i + 1](step - boundaries[i]));
        }
        return out;
      },
      "join");
}

Schedule warmup_cosine_decay(double init_value, double peak_value, int64_t warmup_steps,
                             int64_t decay_steps, double end_value) {
  if (decay_steps - warmup_steps <= 0) {
    fail("optim.warmup_cosine_decay", "decay_steps (", decay_steps,
         ", warmup included) must exceed warmup_steps (", warmup_steps, ")");
  }
  double alpha = peak_value == 0.0 ? 0.0 : end_value / peak_value;
  return join_schedules({linear_schedule(init_value, peak_value, warmup_steps),
                         cosine_decay(peak_value, decay_steps - warmup_steps, alpha)},
                        {warmup_steps});
}

Schedule warmup_stable_decay(const WsdOptions& o) {
  int64_t decay_steps = static_cast<int64_t>(o.decay_fraction * static_cast<double>(o.total_steps));
  int64_t start = o.total_steps - decay_steps;
  if (o.decay_fraction < 0 || o.decay_fraction > 1 || o.warmup_steps < 0 ||
      o.warmup_steps > start) {
    fail("optim.warmup_stable_decay", "need 0 <= decay_fraction <= 1 and warmup_steps (",
         o.warmup_steps, ") <= total_steps - decay steps (", start, "), got decay_fraction ",
         o.decay_fraction, " and total_steps ", o.total_steps);
  }
  Schedule warmup = linear_schedule(o.init_value, o.peak_value, o.warmup_steps);
  if (decay_steps == 0) return join_schedules({warmup, Schedule(o.peak_value)}, {o.warmup_steps});
  Schedule decay(0.0);
  double peak = o.peak_value, end = o.end_value, steps = static_cast<double>(decay_steps);
  switch (o.decay) {
    case DecayShape::kLinear:
      decay = linear_schedule(peak, end, decay_steps);
      break;
    case DecayShape::kCosine:
      decay = cosine_decay(peak, decay_steps, peak == 0.0 ? 0.0 : end / peak);
      break;
    case DecayShape::kSqrt:
      decay = Schedule(
          [=](const Array& count) {
            Array frac = minimum(astype(count, DType::kF32), Array(steps)) / steps;
            return peak - (peak - end) * sqrt(frac);
          },
          "sqrt_decay");
      break;
  }
  return join_schedules({warmup, Schedule(o.peak_value), decay}, {o.warmup_steps, start});
}

}  // namespace graft::optim
