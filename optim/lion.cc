// Lion (Chen et al. 2023, optax.scale_by_lion in its default "hard" mode) and the lion
// optimizer.
#include "core/ops.h"
#include "optim/optimizers.h"

namespace graft::optim {

GradientTransformation scale_by_lion(double b1, double b2) {
  return make_transformation(
      "scale_by_lion",
      [](const FlatParams& p) {
        return Slots{{"count", {zero_count()}}, {"mu", zeros_for(p)}};
      },
      [b1, b2](const std::vector<Array>& updates, const Slots& state, const FlatParams&) {
        size_t n = updates.size();
        const Array& count = slot(state, "count", 1)[0];
        const std::vector<Array>& mu = slot(state, "mu", n);
        std::vector<Array> out, new_mu;
        for (size_t i = 0; i < n; ++i) {
          const Array& g = updates[i];
          out.push_back(sign((1.0 - b1) * g + b1 * mu[i]));
          new_mu.push_back(astype((1.0 - b2) * g + b2 * mu[i], mu[i].dtype()));
        }
        return std::pair{out, Slots{{"count", {safe_increment(count)}}, {"mu", new_mu}}};
      });
}

GradientTransformation lion(const LionOptions& o) {
  return chain(scale_by_lion(o.b1, o.b2), add_decayed_weights(o.weight_decay, o.mask),
               scale_by_learning_rate(o.learning_rate));
}

}  // namespace graft::optim
