#include "nn/moe.h"

#include <algorithm>
#include <string>

#include "core/error.h"
#include "core/ops.h"
#include "core/random/random.h"
#include "nn/moe_capacity.h"

namespace graft::nn {

namespace {

// silu(a) * b with a = x @ w1, b = x @ w3 (private: nn/ will get a public SwiGLU elsewhere).
Array silu_gate(const Array& a, const Array& b) { return a * sigmoid(a) * b; }

void check(const MoEConfig& cfg, const char* op) {
  absl::Status s = cfg.validate();
  if (!s.ok()) fail(op, "invalid config: ", std::string(s.message()));
}

}  // namespace

absl::Status MoEConfig::validate() const {
  auto bad = [](const std::string& m) { return absl::InvalidArgumentError("[MoEConfig] " + m); };
  if (dim <= 0) return bad("dim must be > 0, got " + std::to_string(dim));
  if (n_experts <= 0) return bad("n_experts must be > 0, got " + std::to_string(n_experts));
  if (top_k <= 0 || top_k > n_experts) {
    return bad("top_k must be in [1, n_experts=" + std::to_string(n_experts) + "], got " +
               std::to_string(top_k));
  }
  if (expert_ffn_dim <= 0) {
    return bad("expert_ffn_dim must be > 0, got " + std::to_string(expert_ffn_dim));
  }
  if (n_shared_experts < 0) return bad("n_shared_experts must be >= 0");
  if (n_shared_experts > 0 && shared_ffn_dim <= 0) {
    return bad("shared_ffn_dim must be > 0 when n_shared_experts > 0, got " +
               std::to_string(shared_ffn_dim));
  }
  if (!(aux_loss_weight >= 0) || !(z_loss_weight >= 0)) {
    return bad("aux_loss_weight and z_loss_weight must be >= 0");
  }
  if (!(init_std >= 0) || !(out_init_scale >= 0)) {
    return bad("init_std and out_init_scale must be >= 0");
  }
  if (!(capacity_factor >= 0)) {
    return bad("capacity_factor must be >= 0 (0: dropless), got " +
               std::to_string(capacity_factor));
  }
  if (token_groups < 1) {
    return bad("token_groups must be >= 1, got " + std::to_string(token_groups));
  }
  if (sharding) {
    if (capacity_factor == 0) {
      return bad("sharding (expert parallelism) needs the capacity mode (capacity_factor > 0): "
                 "the dropless dispatch cannot be split by expert");
    }
    const auto& names = sharding->mesh.axis_names();
    if (std::find(names.begin(), names.end(), sharding->expert_axis) == names.end()) {
      return bad("sharding.expert_axis '" + sharding->expert_axis + "' is not an axis of " +
                 sharding->mesh.str());
    }
    const int64_t ep = sharding->mesh.axis_size(sharding->expert_axis);
    if (n_experts % ep != 0 || token_groups % ep != 0) {
      return bad("n_experts (" + std::to_string(n_experts) + ") and token_groups (" +
                 std::to_string(token_groups) + ") must be multiples of the expert axis size " +
                 std::to_string(ep));
    }
  }
  return absl::OkStatus();
}

MoEParams moe_init(const MoEConfig& cfg, const Array& key) {
  check(cfg, "moe_init");
  const int64_t d = cfg.dim, e = cfg.n_experts, h = cfg.expert_ffn_dim;
  const int64_t hs = cfg.n_shared_experts * cfg.shared_ffn_dim;
  Array keys = random::split(key, 7);
  auto normal = [&](int i, const Shape& shape, double scale) {
    return random::normal(reshape(slice_axis(keys, 0, i, i + 1), {2}), shape) *
           (cfg.init_std * scale);
  };
  const double out = cfg.out_init_scale;
  return MoEParams{normal(0, {d, e}, 1),      normal(1, {e, d, h}, 1), normal(2, {e, d, h}, 1),
                   normal(3, {e, h, d}, out), normal(4, {d, hs}, 1),   normal(5, {d, hs}, 1),
                   normal(6, {hs, d}, out)};
}

MoERouting moe_route(const Array& router, const Array& x, const MoEConfig& cfg) {
  check(cfg, "moe_apply");
  if (x.ndim() != 2 || x.shape()[1] != cfg.dim) {
    fail("moe_apply", "x must be [N, dim=", cfg.dim, "], got ", x.aval().str());
  }
  if (router.shape() != Shape{cfg.dim, cfg.n_experts}) {
    fail("moe_apply", "router must be [dim, n_experts] = [", cfg.dim, ", ", cfg.n_experts,
         "], got ", router.aval().str());
  }
  const int64_t k = cfg.top_k, e = cfg.n_experts;
  Array logits = matmul(astype(x, DType::kF32), astype(router, DType::kF32));
  Array scores = cfg.router == RouterScore::kSoftmax ? softmax(logits, -1) : sigmoid(logits);
  // Top k by a stable sort of the negated scores: ties go to the lower expert id, as in
  // lax.top_k. The indices carry no gradient; the weights do (through the gather).
  Array experts = slice_axis(argsort(-scores, -1), 1, 0, k);
  Array weights = take_along_axis(scores, experts, 1);
  if (cfg.normalize_topk) weights = weights / sum(weights, {-1}, true);
  Array group_sizes = sum(one_hot(reshape(experts, {-1}), e, DType::kI32), {0});
  return MoERouting{experts, weights, logits, scores, group_sizes};
}

namespace {

// The dropless dispatch: the weighted sum of each token's top_k experts' outputs, [N, dim].
Array routed_dropless(const MoEParams& p, const Array& x, const MoEConfig& cfg,
                      const MoERouting& r) {
  const int64_t n = x.shape()[0], k = cfg.top_k;
  const DType dt = x.dtype();
  // Dropless dispatch: the N*k assignments sorted by expert (stable, so each expert's rows
  // keep token order), token rows gathered into consecutive groups.
  Array flat_experts = reshape(r.experts, {n * k});
  Array order = argsort(flat_experts);  // sorted -> flat
  Array token = floor_divide(order, scalar(static_cast<double>(k), DType::kI32));
  Array xs = take(x, token, 0, GatherMode::kClip);  // [N*k, dim]
  Array a = ragged_dot(xs, astype(p.w1, dt), r.group_sizes);
  Array b = ragged_dot(xs, astype(p.w3, dt), r.group_sizes);
  Array ys = ragged_dot(silu_gate(a, b), astype(p.w2, dt), r.group_sizes);  // [N*k, dim]
  Array ws = take(reshape(r.weights, {n * k}), order, 0, GatherMode::kClip);
  ys = ys * astype(expand_dims(ws, {1}), dt);
  // Combine: the inverse permutation puts each token's k results together.
  Array inverse = argsort(order);
  return sum(reshape(take(ys, inverse, 0, GatherMode::kClip), {n, k, cfg.dim}), {1});
}

}  // namespace

MoEOutput moe_apply(const MoEParams& p, const Array& x, const MoEConfig& cfg) {
  MoERouting r = moe_route(p.router, x, cfg);
  const int64_t n = x.shape()[0], k = cfg.top_k, e = cfg.n_experts;
  const DType dt = x.dtype();
  Array y = cfg.capacity_factor > 0 ? routed_capacity(p, x, cfg, r) : routed_dropless(p, x, cfg, r);
  if (cfg.n_shared_experts > 0) {
    Array sa = matmul(x, astype(p.shared_w1, dt)), sb = matmul(x, astype(p.shared_w3, dt));
    y = y + matmul(silu_gate(sa, sb), astype(p.shared_w2, dt));
  }
  // Statistics: f_e from the counts (no gradient), P_e the mean routing probability (for
  // sigmoid scores, normalized per token as in DeepSeek-V3's balance loss).
  Array load = astype(r.group_sizes, DType::kF32) / static_cast<double>(n * k);
  Array probs =
      cfg.router == RouterScore::kSoftmax ? r.scores : r.scores / sum(r.scores, {-1}, true);
  Array aux = sum(load * mean(probs, {0})) * static_cast<double>(e);
  Array z = mean(square(logsumexp(r.logits, {-1})));
  Array loss = aux * cfg.aux_loss_weight + z * cfg.z_loss_weight;
  return MoEOutput{astype(y, dt), MoEStats{aux, z, loss, load}};
}

}  // namespace graft::nn
