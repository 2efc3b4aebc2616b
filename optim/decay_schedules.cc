// More of optax.schedules: exponential_decay, piecewise_constant_schedule,
// polynomial_schedule, piecewise_interpolate_schedule, cosine_onecycle_schedule and
// linear_onecycle_schedule, op by op as Optax computes them (tests/optim/optax_parity_test.cc
// checks them against Optax).
#include <cmath>
#include <numbers>

#include "core/error.h"
#include "core/ops.h"
#include "optim/schedule.h"

namespace graft::optim {

Schedule exponential_decay(double init_value, int64_t transition_steps, double decay_rate,
                           int64_t transition_begin, bool staircase,
                           std::optional<double> end_value) {
  if (transition_steps <= 0 || decay_rate == 0.0) return Schedule(init_value);
  if (transition_begin < 0) transition_begin = 0;  // as Optax
  return Schedule(
      [=](const Array& count) {
        Array decreased = astype(count, DType::kI32) - transition_begin;
        Array p = astype(decreased, DType::kF32) / static_cast<double>(transition_steps);
        if (staircase) p = floor(p);
        Array init = full({}, init_value, DType::kF32);
        Array v = where(decreased <= Array(0), init, init_value * power(Array(decay_rate), p));
        if (end_value.has_value()) {
          v = decay_rate < 1.0 ? maximum(v, Array(*end_value)) : minimum(v, Array(*end_value));
        }
        return v;
      },
      "exponential_decay");
}

Schedule piecewise_constant_schedule(double init_value,
                                     const std::map<int64_t, double>& boundaries_and_scales) {
  for (const auto& [b, scale] : boundaries_and_scales) {
    if (scale < 0.0) {
      fail("optim.piecewise_constant_schedule", "expects non-negative scale factors, got ", scale,
           " at ", b);
    }
  }
  return Schedule(
      [=](const Array& count) {
        Array step = astype(count, DType::kI32);
        Array v = full({}, init_value, DType::kF32);
        for (const auto& [boundary, scale] : boundaries_and_scales) {
          v = where(step < Array(boundary), v, scale * v);
        }
        return v;
      },
      "piecewise_constant");
}

Schedule polynomial_schedule(double init_value, double end_value, double power_,
                             int64_t transition_steps, int64_t transition_begin) {
  if (transition_steps <= 0) return Schedule(init_value);
  if (transition_begin < 0) transition_begin = 0;
  return Schedule(
      [=](const Array& count) {
        Array c =
            clip(astype(count, DType::kI32) - transition_begin, Array(0), Array(transition_steps));
        Array frac = 1.0 - astype(c, DType::kF32) / static_cast<double>(transition_steps);
        // jnp's frac ** 2 is an integer power (a multiply), as here.
        Array fp = power_ == 2.0 ? frac * frac : power(frac, Array(power_));
        return (init_value - end_value) * fp + end_value;
      },
      "polynomial");
}

Schedule piecewise_interpolate_schedule(InterpolateType type, double init_value,
                                        const std::map<int64_t, double>& boundaries_and_scales) {
  std::vector<int64_t> bounds{0};
  std::vector<float> values{static_cast<float>(init_value)};  // f32 cumprod, as Optax's
  for (const auto& [b, scale] : boundaries_and_scales) {
    if (scale < 0.0) {
      fail("optim.piecewise_interpolate_schedule", "expects non-negative scale factors, got ",
           scale, " at ", b);
    }
    bounds.push_back(b);
    values.push_back(values.back() * static_cast<float>(scale));
  }
  return Schedule(
      [=](const Array& count) {
        Array step = astype(count, DType::kI32);
        Array fstep = astype(step, DType::kF32);
        Array out = where(Array(bounds.back()) <= step, full({}, values.back(), DType::kF32),
                          full({}, 0.0, DType::kF32));
        for (size_t i = 0; i + 1 < bounds.size(); ++i) {
          float start = values[i], end = values[i + 1];
          float rise = end - start, half_fall = (start - end) / 2.0f;  // f32, as Optax
          double size = static_cast<double>(std::max<int64_t>(bounds[i + 1] - bounds[i], 1));
          Array pct = (fstep - static_cast<double>(bounds[i])) / size;
          Array v = type == InterpolateType::kLinear
                        ? rise * pct + start
                        : end + half_fall * (cos(std::numbers::pi * pct) + 1.0);
          Array in = logical_and(Array(bounds[i]) <= step, step < Array(bounds[i + 1]));
          out = where(in, v, out);
        }
        return out;
      },
      type == InterpolateType::kLinear ? "piecewise_linear" : "piecewise_cosine");
}

Schedule cosine_onecycle_schedule(int64_t transition_steps, double peak_value, double pct_start,
                                  double div_factor, double final_div_factor) {
  if (transition_steps <= 0) {
    fail("optim.cosine_onecycle_schedule", "transition_steps must be positive, got ",
         transition_steps);
  }
  // Assigned in order so that a repeated boundary keeps the later scale, as a Python dict.
  std::map<int64_t, double> scales;
  scales[static_cast<int64_t>(pct_start * static_cast<double>(transition_steps))] = div_factor;
  scales[transition_steps] = 1.0 / (div_factor * final_div_factor);
  return piecewise_interpolate_schedule(InterpolateType::kCosine, peak_value / div_factor, scales);
}

Schedule linear_onecycle_schedule(int64_t transition_steps, double peak_value, double pct_start,
                                  double pct_final, double div_factor, double final_div_factor) {
  if (transition_steps <= 0) {
    fail("optim.linear_onecycle_schedule", "transition_steps must be positive, got ",
         transition_steps);
  }
  double t = static_cast<double>(transition_steps);
  std::map<int64_t, double> scales;  // a repeated boundary keeps the later scale, as in Python
  scales[static_cast<int64_t>(pct_start * t)] = div_factor;
  scales[static_cast<int64_t>(pct_final * t)] = 1.0 / div_factor;
  scales[transition_steps] = 1.0 / final_div_factor;
  return piecewise_interpolate_schedule(InterpolateType::kLinear, peak_value / div_factor, scales);
}

}  // namespace graft::optim
