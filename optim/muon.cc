// Muon (optax.contrib.muon): momentum orthogonalized by a Newton-Schulz iteration for matrices,
// AdamW for every other leaf.
#include <cmath>

#include "core/error.h"
#include "core/ops.h"
#include "optim/optimizers.h"
#include "optim/wrappers.h"

namespace graft::optim {
namespace {

constexpr const char* kWho = "optim.muon";

Array bias_correction(const Array& x, double decay, const Array& count) {
  Array c = 1.0 - power(Array(decay), astype(count, DType::kF32));
  return x / astype(c, x.dtype());
}

// The coefficient triples the iteration uses, one per step (Optax: a single triple repeats
// ns_steps times; a list must have at most ns_steps rows and is used once, row by row).
std::vector<std::array<double, 3>> steps_of(const ScaleByMuonOptions& o) {
  if (o.ns_coeffs.empty()) fail(kWho, "ns_coeffs is empty");
  if (o.ns_coeffs.size() == 1) {
    return std::vector<std::array<double, 3>>(std::max(o.ns_steps, 0), o.ns_coeffs[0]);
  }
  if (static_cast<int>(o.ns_coeffs.size()) > o.ns_steps) {
    fail(kWho, "not enough ns_steps (", o.ns_steps, ") for ", o.ns_coeffs.size(),
         " rows of ns_coeffs");
  }
  return o.ns_coeffs;
}

Array newton_schulz(Array x, const std::vector<std::array<double, 3>>& coeffs, double eps) {
  bool transposed = x.shape()[0] > x.shape()[1];
  if (transposed) x = transpose(x);
  x = x / (sqrt(sum(x * x)) + eps);
  for (const auto& c : coeffs) {
    Array a = matmul(x, transpose(x));
    Array b = c[1] * a + c[2] * matmul(a, a);
    x = c[0] * x + matmul(b, x);
  }
  return transposed ? transpose(x) : x;
}

void check_matrix(const Array& g, const char* who) {
  if (g.ndim() != 2) {
    fail(who, "leaves must be matrices (2-D), got shape ", shape_str(g.shape()));
  }
}

}  // namespace

GradientTransformation scale_by_muon(const ScaleByMuonOptions& o) {
  std::vector<std::array<double, 3>> coeffs = steps_of(o);
  return make_transformation(
      "scale_by_muon",
      [](const FlatParams& p) {
        for (const Array& x : p.leaves) check_matrix(x, "optim.scale_by_muon");
        return Slots{{"count", {zero_count()}}, {"mu", zeros_for(p)}};
      },
      [o, coeffs](const std::vector<Array>& updates, const Slots& state, const FlatParams&) {
        size_t n = updates.size();
        const Array& count = slot(state, "count", 1)[0];
        const std::vector<Array>& mu = slot(state, "mu", n);
        Array count_inc = safe_increment(count);
        std::vector<Array> out, next;
        for (size_t i = 0; i < n; ++i) {
          const Array& g = updates[i];
          check_matrix(g, "optim.scale_by_muon");
          Array m = (1.0 - o.beta) * g + o.beta * mu[i];
          Array m_hat = o.nesterov
                            ? o.beta * bias_correction(m, o.beta, safe_increment(count_inc)) +
                                  (1.0 - o.beta) * bias_correction(g, o.beta, count_inc)
                            : bias_correction(m, o.beta, count_inc);
          Array u = newton_schulz(m_hat, coeffs, o.eps);
          if (o.adaptive) u = sum(m_hat * u) * u;
          out.push_back(u);
          next.push_back(astype(m, mu[i].dtype()));
        }
        return std::pair{out, Slots{{"count", {count_inc}}, {"mu", next}}};
      });
}

GradientTransformation scale_by_shape(std::optional<double> consistent_rms) {
  return make_transformation(
      "scale_by_shape", [](const FlatParams&) { return Slots{}; },
      [consistent_rms](const std::vector<Array>& updates, const Slots& state, const FlatParams&) {
        std::vector<Array> out;
        for (const Array& u : updates) {
          check_matrix(u, "optim.scale_by_shape");
          double fan_in = static_cast<double>(u.shape()[0]);
          double fan_out = static_cast<double>(u.shape()[1]);
          double s = consistent_rms ? std::sqrt(std::max(fan_in, fan_out)) * *consistent_rms
                                    : std::sqrt(std::max(1.0, fan_out / fan_in));
          out.push_back(s * u);
        }
        return std::pair{out, state};
      });
}

GradientTransformation muon(const MuonOptions& o) {
  GradientTransformation on_matrices =
      chain(scale_by_muon({o.ns_coeffs, o.ns_steps, o.beta, o.eps, o.nesterov, o.adaptive}),
            scale_by_shape(o.consistent_rms), add_decayed_weights(o.weight_decay, o.weight_decay_mask),
            scale_by_learning_rate(o.learning_rate));
  GradientTransformation on_others = adamw({.learning_rate = o.adam_learning_rate.value_or(o.learning_rate),
                                            .b1 = o.adam_b1,
                                            .b2 = o.adam_b2,
                                            .eps = o.eps,
                                            .eps_root = o.adam_eps_root,
                                            .weight_decay = o.adam_weight_decay,
                                            .nesterov = o.nesterov});
  return multi_transform({{"adam", on_others}, {"muon", on_matrices}},
                         [](const std::string&, const Array& x) {
                           return std::string(x.ndim() == 2 ? "muon" : "adam");
                         });
}

}  // namespace graft::optim
