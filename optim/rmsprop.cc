// RMSProp's scalings (optax.scale_by_rms, optax.scale_by_stddev) and the rmsprop optimizer.
#include "core/ops.h"
#include "optim/optimizers.h"

namespace graft::optim {
namespace {

// One array per leaf filled with `value` (Optax's tree.full_like).
std::vector<Array> full_for(const FlatParams& p, double value) {
  std::vector<Array> out;
  for (const Array& x : p.leaves) out.push_back(full_like(x, value));
  return out;
}

// moment / (1 - decay^count), the f32 factor cast to the moment's dtype
// (optax.tree.bias_correction).
Array debias(const Array& moment, double decay, const Array& count) {
  Array c = 1.0 - power(Array(decay), astype(count, DType::kF32));
  return moment / astype(c, moment.dtype());
}

// The rms and stddev scalings share everything but the centering.
GradientTransformation rms_like(const char* name, const ScaleByRmsOptions& o, bool centered) {
  return make_transformation(
      name,
      [o, centered](const FlatParams& p) {
        Slots s{{"nu", full_for(p, o.initial_scale)}};
        if (centered) s["mu"] = zeros_for(p);
        if (o.bias_correction) s["count"] = {zero_count()};
        return s;
      },
      [o, centered](const std::vector<Array>& updates, const Slots& state, const FlatParams&) {
        size_t n = updates.size();
        const std::vector<Array>& nu = slot(state, "nu", n);
        Slots next;
        Array count_inc;
        if (o.bias_correction) {
          count_inc = safe_increment(slot(state, "count", 1)[0]);
          next["count"] = {count_inc};
        }
        std::vector<Array> out, new_mu, new_nu;
        for (size_t i = 0; i < n; ++i) {
          const Array& g = updates[i];
          Array v = (1.0 - o.decay) * (g * g) + o.decay * nu[i];
          Array v_hat = o.bias_correction ? debias(v, o.decay, count_inc) : v;
          if (centered) {
            const Array& mu = slot(state, "mu", n)[i];
            Array m = (1.0 - o.decay) * g + o.decay * mu;
            Array m_hat = o.bias_correction ? debias(m, o.decay, count_inc) : m;
            v_hat = v_hat - m_hat * m_hat;
            new_mu.push_back(astype(m, mu.dtype()));
          }
          Array scaling = o.eps_in_sqrt ? rsqrt(v_hat + o.eps) : 1.0 / (sqrt(v_hat) + o.eps);
          out.push_back(scaling * g);
          new_nu.push_back(astype(v, nu[i].dtype()));
        }
        next["nu"] = new_nu;
        if (centered) next["mu"] = new_mu;
        return std::pair{out, next};
      });
}

}  // namespace

GradientTransformation scale_by_rms(const ScaleByRmsOptions& o) {
  return rms_like("scale_by_rms", o, false);
}

GradientTransformation scale_by_stddev(const ScaleByRmsOptions& o) {
  return rms_like("scale_by_stddev", o, true);
}

GradientTransformation rmsprop(const RmspropOptions& o) {
  ScaleByRmsOptions s{o.decay, o.eps, o.initial_scale, o.eps_in_sqrt, o.bias_correction};
  return chain(o.centered ? scale_by_stddev(s) : scale_by_rms(s),
               scale_by_learning_rate(o.learning_rate),
               o.momentum.has_value() ? trace(*o.momentum, o.nesterov) : identity());
}

}  // namespace graft::optim
