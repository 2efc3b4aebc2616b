// Layer-wise trust ratios (optax.scale_by_trust_ratio) and the optimizers built on them:
// LAMB (You et al. 2019) and LARS (You et al. 2017).
#include "core/ops.h"
#include "optim/optimizers.h"

namespace graft::optim {
namespace {

// The L2 (Frobenius) norm of a whole leaf, min_norm where it is <= min_norm (numerics.safe_norm).
Array safe_norm(const Array& x, double min_norm) {
  Array norm = sqrt(sum(x * x));
  return where(norm <= Array(min_norm), full_like(norm, min_norm), norm);
}

}  // namespace

GradientTransformation scale_by_trust_ratio(const ScaleByTrustRatioOptions& o) {
  return make_transformation(
      "scale_by_trust_ratio", [](const FlatParams&) { return Slots{}; },
      [o](const std::vector<Array>& updates, const Slots& state, const FlatParams& p) {
        if (p.leaves.size() != updates.size()) {
          fail("optim.update", "scale_by_trust_ratio needs params: call update(grads, state, ",
               "params)");
        }
        std::vector<Array> out;
        for (size_t i = 0; i < updates.size(); ++i) {
          const Array& u = updates[i];
          Array param_norm = safe_norm(p.leaves[i], o.min_norm);
          Array update_norm = safe_norm(u, o.min_norm);
          Array ratio = o.trust_coefficient * param_norm / (update_norm + o.eps);
          Array zero_norm = logical_or(param_norm == Array(0.0), update_norm == Array(0.0));
          Array safe_ratio = where(zero_norm, full_like(ratio, 1.0), ratio);
          out.push_back(u * astype(safe_ratio, u.dtype()));
        }
        return std::pair{out, state};
      });
}

GradientTransformation lamb(const LambOptions& o) {
  return chain(scale_by_adam({.b1 = o.b1, .b2 = o.b2, .eps = o.eps, .eps_root = o.eps_root}),
               add_decayed_weights(o.weight_decay, o.mask), scale_by_trust_ratio(),
               scale_by_learning_rate(o.learning_rate));
}

GradientTransformation lars(const LarsOptions& o) {
  return chain(
      add_decayed_weights(o.weight_decay, o.weight_decay_mask),
      masked(scale_by_trust_ratio({.trust_coefficient = o.trust_coefficient, .eps = o.eps}),
             o.trust_ratio_mask),
      scale_by_learning_rate(o.learning_rate), trace(o.momentum, o.nesterov));
}

}  // namespace graft::optim
