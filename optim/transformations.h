// Building blocks, each an Optax GradientTransformation of the same name and semantics.
// Optimizers (optimizers.h) are chains of these.
#pragma once

#include <array>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/array.h"
#include "core/tree/tree.h"
#include "optim/schedule.h"
#include "optim/transform.h"

namespace graft::optim {

// Picks parameter leaves by dotted path (tree_leaf_paths) and value (shape, dtype), e.g. weight
// decay only on matrices. It must not depend on array values: it is called on tracers, and
// on the params at init but on the updates at update (same paths and shapes), like Optax.
using Mask = std::function<bool(const std::string& path, const Array& leaf)>;
Mask ndim_at_least(int n);  // true for leaves with ndim >= n (decay matrices, not biases/norms)

// updates * step_size.
GradientTransformation scale(double step_size);
// updates * schedule(count); the state counts steps (i32 "count").
GradientTransformation scale_by_schedule(Schedule step_size);
// -learning_rate * updates (flip_sign = false: +): `scale` for a constant, `scale_by_schedule`
// for a schedule, as in Optax.
GradientTransformation scale_by_learning_rate(Schedule learning_rate, bool flip_sign = true);

// Momentum: t = g + decay * t; updates = t (or g + decay * t with nesterov). Slot "trace".
GradientTransformation trace(double decay, bool nesterov = false);

// Adam's scaling: slots "count" (i32), "mu", "nu" (param dtype); updates = mu_hat /
// (sqrt(nu_hat + eps_root) + eps) with bias-corrected moments (Nesterov variant as Optax).
struct ScaleByAdamOptions {
  double b1 = 0.9;
  double b2 = 0.999;
  double eps = 1e-8;
  double eps_root = 0.0;
  bool nesterov = false;
};
GradientTransformation scale_by_adam(const ScaleByAdamOptions& options = {});

// Lion's scaling: updates = sign((1 - b1) g + b1 mu); mu = (1 - b2) g + b2 mu. Slots "count",
// "mu".
GradientTransformation scale_by_lion(double b1 = 0.9, double b2 = 0.99);

// updates + weight_decay * params on the leaves `mask` selects (all when mask is empty).
// Needs params. A scheduled weight decay keeps a "count".
GradientTransformation add_decayed_weights(Schedule weight_decay, Mask mask = nullptr);

// Runs `inner` on the leaves `mask` selects only; other leaves pass through unchanged and get
// no state (optax.masked).
GradientTransformation masked(GradientTransformation inner, Mask mask);

// sqrt of the sum of squares of every leaf (optax.tree.norm / optax.global_norm).
Array global_norm_flat(const std::vector<Array>& leaves);
template <class P>
Array global_norm(const P& tree) {
  return global_norm_flat(tree_leaves(tree));
}

// Scales all updates by max_norm / global_norm when global_norm >= max_norm.
GradientTransformation clip_by_global_norm(double max_norm);

// RMSProp's scaling (optax.scale_by_rms): nu = decay * nu + (1 - decay) * g^2, starting at
// initial_scale; updates = g * rsqrt(nu_hat + eps) (eps_in_sqrt) or g / (sqrt(nu_hat) + eps),
// with nu_hat = nu / (1 - decay^t) when bias_correction, else nu. Slots "nu" (and "count" with
// bias_correction).
struct ScaleByRmsOptions {
  double decay = 0.9;
  double eps = 1e-8;
  double initial_scale = 0.0;
  bool eps_in_sqrt = true;
  bool bias_correction = false;
};
GradientTransformation scale_by_rms(const ScaleByRmsOptions& options = {});
// Centered RMSProp's scaling (optax.scale_by_stddev): also mu = EMA of g (bias-corrected with
// nu), and nu_hat - mu_hat^2 in place of nu_hat. Slots "mu", "nu" (and "count").
GradientTransformation scale_by_stddev(const ScaleByRmsOptions& options = {});

// Adagrad's scaling (optax.scale_by_rss): sum_of_squares += g^2 (starting at
// initial_accumulator_value); updates = g * rsqrt(sum_of_squares + eps), 0 where the sum is 0.
// Slot "sum_of_squares".
GradientTransformation scale_by_rss(double initial_accumulator_value = 0.1, double eps = 1e-7);

// Adamax's scaling (optax.scale_by_adamax): mu = EMA of g, nu = max(|g| + eps, b2 * nu);
// updates = mu_hat / nu. Slots "count", "mu", "nu".
GradientTransformation scale_by_adamax(double b1 = 0.9, double b2 = 0.999, double eps = 1e-8);

// Rectified Adam's scaling (optax.scale_by_radam): Adam's moments; while the variance is not
// tractable (rho_t < threshold) updates = mu_hat, afterwards r_t * mu_hat / (sqrt(nu_hat +
// eps_root) + eps). Slots "count", "mu", "nu".
struct ScaleByRAdamOptions {
  double b1 = 0.9;
  double b2 = 0.999;
  double eps = 1e-8;
  double eps_root = 0.0;
  double threshold = 5.0;
  bool nesterov = false;
};
GradientTransformation scale_by_radam(const ScaleByRAdamOptions& options = {});

// Layer-wise trust ratio (optax.scale_by_trust_ratio, used by lars and lamb): each leaf times
// trust_coefficient * |param| / (|update| + eps), norms floored at min_norm, and times 1 where
// either norm is 0. No state; needs params.
struct ScaleByTrustRatioOptions {
  double min_norm = 0.0;
  double trust_coefficient = 1.0;
  double eps = 0.0;
};
GradientTransformation scale_by_trust_ratio(const ScaleByTrustRatioOptions& options = {});

// Adafactor's pieces (adafactor.cc). Factored second moments: a leaf whose second largest dim
// is >= min_dim_size_to_factor keeps row and column means of g^2 + eps ("v_row", "v_col"),
// others a full "v"; decay at count t is 1 - (t - decay_offset + 1)^-decay_rate. Needs params.
struct FactoredRmsOptions {
  bool factored = true;
  double decay_rate = 0.8;
  int64_t decay_offset = 0;
  int64_t min_dim_size_to_factor = 128;
  double eps = 1e-30;
};
GradientTransformation scale_by_factored_rms(const FactoredRmsOptions& options = {});
// Each leaf divided by max(1, rms(leaf) / threshold).
GradientTransformation clip_by_block_rms(double threshold);
// Each leaf times max-like(rms(param), min_scale) (min_scale when rms <= min_scale).
GradientTransformation scale_by_param_block_rms(double min_scale = 1e-3);

// Optax breadth: elementwise clipping, NaN zeroing, EMA, accumulation, Muon's
// scaling. Semantics and state as Optax 0.2.8's functions of the same names.

// Each update clipped to [-max_delta, max_delta] (optax.clip). No state.
GradientTransformation clip(double max_delta);
// NaNs in the updates replaced by 0 (optax.zero_nans). Slot "found_nan": one bool scalar per
// leaf, true when that leaf had a NaN at the last update.
GradientTransformation zero_nans();
// ema = decay * ema + (1 - decay) * g; updates = ema (divided by 1 - decay^t when debias)
// (optax.ema). Slots "count" (i32), "ema" (param dtype).
GradientTransformation ema(double decay, bool debias = true);
// Sums updates over k calls and emits the sum on every k-th call, zeros otherwise
// (optax.apply_every). Slots "count" (i32, modulo k), "grad_acc". k must be >= 1.
GradientTransformation apply_every(int k = 1);

// Muon's scaling (optax.contrib.scale_by_muon) for 2-D leaves: mu = beta * mu + (1 - beta) * g;
// mu_hat bias-corrected (Nesterov: beta * mu_hat' + (1 - beta) * g_hat); then Newton-Schulz
// orthogonalization of mu_hat: x = mu_hat / (|mu_hat|_F + eps) (transposed when rows > cols),
// and per step x = c0 x + (c1 A + c2 A A) x with A = x x^T. `ns_coeffs` holds one triple (used
// ns_steps times) or one per step (at most ns_steps rows, each used once, as Optax).
// Only Optax's 'frobenius' preconditioning. Slots "count", "mu". Leaves must be 2-D.
struct ScaleByMuonOptions {
  std::vector<std::array<double, 3>> ns_coeffs = {{3.4445, -4.7750, 2.0315}};
  int ns_steps = 5;
  double beta = 0.95;
  double eps = 1e-8;
  bool nesterov = true;
  bool adaptive = false;  // scale by <mu_hat, orth> (the dual norm), as Optax
};
GradientTransformation scale_by_muon(const ScaleByMuonOptions& options = {});
// Muon's width scaling (optax.contrib.scale_by_shape) of 2-D leaves (fan_in = rows, fan_out =
// cols): sqrt(max(1, fan_out / fan_in)), or sqrt(max(fan_in, fan_out)) * consistent_rms.
GradientTransformation scale_by_shape(std::optional<double> consistent_rms = std::nullopt);

}  // namespace graft::optim
