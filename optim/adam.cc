// Adam's moment estimates (optax.scale_by_adam), adam and adamw.
#include "core/ops.h"
#include "optim/optimizers.h"

namespace graft::optim {
namespace {

// decay^count as f32, computed before dividing so a bf16 moment never sees 1 - 1 = 0 (Optax).
Array bias_correction(const Array& moment, double decay, const Array& count) {
  Array c = 1.0 - power(Array(decay), astype(count, DType::kF32));
  return moment / astype(c, moment.dtype());
}

}  // namespace

GradientTransformation scale_by_adam(const ScaleByAdamOptions& o) {
  return make_transformation(
      "scale_by_adam",
      [](const FlatParams& p) {
        return Slots{{"count", {zero_count()}}, {"mu", zeros_for(p)}, {"nu", zeros_for(p)}};
      },
      [o](const std::vector<Array>& updates, const Slots& state, const FlatParams&) {
        size_t n = updates.size();
        const Array& count = slot(state, "count", 1)[0];
        const std::vector<Array>& mu = slot(state, "mu", n);
        const std::vector<Array>& nu = slot(state, "nu", n);
        Array count_inc = safe_increment(count);
        std::vector<Array> out, new_mu, new_nu;
        for (size_t i = 0; i < n; ++i) {
          const Array& g = updates[i];
          Array m = (1.0 - o.b1) * g + o.b1 * mu[i];
          Array v = (1.0 - o.b2) * (g * g) + o.b2 * nu[i];
          Array m_hat = o.nesterov ? o.b1 * bias_correction(m, o.b1, safe_increment(count_inc)) +
                                         (1.0 - o.b1) * bias_correction(g, o.b1, count_inc)
                                   : bias_correction(m, o.b1, count_inc);
          Array v_hat = bias_correction(v, o.b2, count_inc);
          out.push_back(m_hat / (sqrt(v_hat + o.eps_root) + o.eps));
          new_mu.push_back(astype(m, mu[i].dtype()));
          new_nu.push_back(astype(v, nu[i].dtype()));
        }
        return std::pair{out, Slots{{"count", {count_inc}}, {"mu", new_mu}, {"nu", new_nu}}};
      });
}

GradientTransformation adam(const AdamOptions& o) {
  return chain(scale_by_adam({o.b1, o.b2, o.eps, o.eps_root, o.nesterov}),
               scale_by_learning_rate(o.learning_rate));
}

GradientTransformation adamw(const AdamWOptions& o) {
  return chain(scale_by_adam({o.b1, o.b2, o.eps, o.eps_root, o.nesterov}),
               add_decayed_weights(o.weight_decay, o.mask),
               scale_by_learning_rate(o.learning_rate));
}

}  // namespace graft::optim
