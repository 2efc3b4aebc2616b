// Scaling by a constant, a schedule or a learning rate (Optax's scale, scale_by_schedule,
// scale_by_learning_rate).
#include "core/ops.h"
#include "optim/transformations.h"

namespace graft::optim {

GradientTransformation scale(double step_size) {
  return make_transformation(
      "scale", [](const FlatParams&) { return Slots{}; },
      [step_size](const std::vector<Array>& updates, const Slots& state, const FlatParams&) {
        std::vector<Array> out;
        for (const Array& g : updates) out.push_back(step_size * g);
        return std::pair{out, state};
      });
}

GradientTransformation scale_by_schedule(Schedule step_size) {
  return make_transformation(
      "scale_by_schedule",
      [](const FlatParams&) {
        return Slots{{"count", {zero_count()}}};
      },
      [step_size](const std::vector<Array>& updates, const Slots& state, const FlatParams&) {
        const Array& count = slot(state, "count", 1)[0];
        Array s = step_size(count);
        std::vector<Array> out;
        for (const Array& g : updates) out.push_back(astype(s, g.dtype()) * g);
        return std::pair{out, Slots{{"count", {safe_increment(count)}}}};
      });
}

GradientTransformation scale_by_learning_rate(Schedule learning_rate, bool flip_sign) {
  double m = flip_sign ? -1.0 : 1.0;
  if (learning_rate.is_constant()) return scale(m * learning_rate.constant_value());
  return scale_by_schedule(
      Schedule([learning_rate, m](const Array& count) { return m * learning_rate(count); },
               learning_rate.name()));
}

}  // namespace graft::optim
