// Adam's relatives: Adamax (optax.scale_by_adamax), NAdam (adam with Nesterov momentum) and
// Rectified Adam (optax.scale_by_radam).
#include "core/ops.h"
#include "optim/optimizers.h"

namespace graft::optim {
namespace {

// moment / (1 - decay^count), the f32 factor cast to the moment's dtype
// (optax.tree.bias_correction).
Array debias(const Array& moment, double decay, const Array& count) {
  Array c = 1.0 - power(Array(decay), astype(count, DType::kF32));
  return moment / astype(c, moment.dtype());
}

Slots adam_slots(const FlatParams& p) {
  return Slots{{"count", {zero_count()}}, {"mu", zeros_for(p)}, {"nu", zeros_for(p)}};
}

}  // namespace

GradientTransformation scale_by_adamax(double b1, double b2, double eps) {
  return make_transformation(
      "scale_by_adamax", adam_slots,
      [b1, b2, eps](const std::vector<Array>& updates, const Slots& state, const FlatParams&) {
        size_t n = updates.size();
        Array count_inc = safe_increment(slot(state, "count", 1)[0]);
        const std::vector<Array>& mu = slot(state, "mu", n);
        const std::vector<Array>& nu = slot(state, "nu", n);
        std::vector<Array> out, new_mu, new_nu;
        for (size_t i = 0; i < n; ++i) {
          const Array& g = updates[i];
          Array m = (1.0 - b1) * g + b1 * mu[i];
          Array v = maximum(abs(g) + eps, b2 * nu[i]);
          out.push_back(debias(m, b1, count_inc) / v);
          new_mu.push_back(astype(m, mu[i].dtype()));
          new_nu.push_back(astype(v, nu[i].dtype()));
        }
        return std::pair{out, Slots{{"count", {count_inc}}, {"mu", new_mu}, {"nu", new_nu}}};
      });
}

GradientTransformation adamax(const AdamaxOptions& o) {
  return chain(scale_by_adamax(o.b1, o.b2, o.eps), scale_by_learning_rate(o.learning_rate));
}

GradientTransformation nadam(const AdamOptions& o) {
  AdamOptions n = o;
  n.nesterov = true;
  return adam(n);
}

GradientTransformation scale_by_radam(const ScaleByRAdamOptions& o) {
  double ro_inf = 2.0 / (1.0 - o.b2) - 1.0;
  return make_transformation(
      "scale_by_radam", adam_slots,
      [o, ro_inf](const std::vector<Array>& updates, const Slots& state, const FlatParams&) {
        size_t n = updates.size();
        Array count_inc = safe_increment(slot(state, "count", 1)[0]);
        const std::vector<Array>& mu = slot(state, "mu", n);
        const std::vector<Array>& nu = slot(state, "nu", n);
        // rho_t, the length of the approximated simple moving average, and the rectification.
        Array b2t = power(Array(o.b2), astype(count_inc, DType::kF32));
        Array ro = ro_inf - astype(2 * count_inc, DType::kF32) * b2t / (1.0 - b2t);
        Array r = sqrt((ro - 4.0) * (ro - 2.0) * ro_inf / (((ro_inf - 4.0) * (ro_inf - 2.0)) * ro));
        Array tractable = ro >= Array(o.threshold);
        std::vector<Array> out, new_mu, new_nu;
        for (size_t i = 0; i < n; ++i) {
          const Array& g = updates[i];
          Array m = (1.0 - o.b1) * g + o.b1 * mu[i];
          Array v = (1.0 - o.b2) * (g * g) + o.b2 * nu[i];
          Array m_hat = o.nesterov ? o.b1 * debias(m, o.b1, safe_increment(count_inc)) +
                                         (1.0 - o.b1) * debias(g, o.b1, count_inc)
                                   : debias(m, o.b1, count_inc);
          Array v_hat = debias(v, o.b2, count_inc);
          Array rectified = astype(r, m_hat.dtype()) * m_hat / (sqrt(v_hat + o.eps_root) + o.eps);
          out.push_back(where(tractable, rectified, m_hat));
          new_mu.push_back(astype(m, mu[i].dtype()));
          new_nu.push_back(astype(v, nu[i].dtype()));
        }
        return std::pair{out, Slots{{"count", {count_inc}}, {"mu", new_mu}, {"nu", new_nu}}};
      });
}

GradientTransformation radam(const RAdamOptions& o) {
  return chain(scale_by_radam({o.b1, o.b2, o.eps, o.eps_root, o.threshold, o.nesterov}),
               scale_by_learning_rate(o.learning_rate));
}

}  // namespace graft::optim
