// Adagrad's scaling (optax.scale_by_rss) and the adagrad optimizer.
#include "core/ops.h"
#include "optim/optimizers.h"

namespace graft::optim {

GradientTransformation scale_by_rss(double initial_accumulator_value, double eps) {
  return make_transformation(
      "scale_by_rss",
      [initial_accumulator_value](const FlatParams& p) {
        std::vector<Array> sum_sq;
        for (const Array& x : p.leaves) sum_sq.push_back(full_like(x, initial_accumulator_value));
        return Slots{{"sum_of_squares", sum_sq}};
      },
      [eps](const std::vector<Array>& updates, const Slots& state, const FlatParams&) {
        const std::vector<Array>& acc = slot(state, "sum_of_squares", updates.size());
        std::vector<Array> out, new_acc;
        for (size_t i = 0; i < updates.size(); ++i) {
          const Array& g = updates[i];
          Array t = g * g + acc[i];
          Array inv = where(t > Array(0.0), rsqrt(t + eps), zeros_like(t));
          out.push_back(inv * g);
          new_acc.push_back(astype(t, acc[i].dtype()));
        }
        return std::pair{out, Slots{{"sum_of_squares", new_acc}}};
      });
}

GradientTransformation adagrad(const AdagradOptions& o) {
  return chain(scale_by_rss(o.initial_accumulator_value, o.eps),
               scale_by_learning_rate(o.learning_rate));
}

}  // namespace graft::optim
