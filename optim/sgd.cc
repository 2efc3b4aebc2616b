// Momentum (optax.trace) and SGD.
#include "core/ops.h"
#include "optim/optimizers.h"

namespace graft::optim {

GradientTransformation trace(double decay, bool nesterov) {
  return make_transformation(
      "trace",
      [](const FlatParams& p) {
        return Slots{{"trace", zeros_for(p)}};
      },
      [decay, nesterov](const std::vector<Array>& updates, const Slots& state, const FlatParams&) {
        const std::vector<Array>& t = slot(state, "trace", updates.size());
        std::vector<Array> out, new_t;
        for (size_t i = 0; i < updates.size(); ++i) {
          Array nt = updates[i] + decay * t[i];
          out.push_back(nesterov ? updates[i] + decay * nt : nt);
          new_t.push_back(astype(nt, t[i].dtype()));
        }
        return std::pair{out, Slots{{"trace", new_t}}};
      });
}

GradientTransformation sgd(const SgdOptions& o) {
  if (o.momentum.has_value()) {
    return chain(trace(*o.momentum, o.nesterov), scale_by_learning_rate(o.learning_rate));
  }
  return chain(scale_by_learning_rate(o.learning_rate));
}

}  // namespace graft::optim
