// Mixture-of-experts feed-forward layer with dropless routing (MegaBlocks / DeepSeek-MoE).
//
// Each token is routed to its top_k experts (router logits in f32; scores by softmax or
// sigmoid; weights optionally renormalized over the top k). Nothing is dropped and nothing
// loops over tokens: the N * top_k (token, expert) assignments are sorted by expert (stable),
// the token rows gathered, and each expert's SwiGLU runs as one grouped matmul (ragged_dot)
// over its consecutive rows; the weighted results are un-permuted and summed per token.
// Optional shared experts (a SwiGLU every token passes through) are added on top.
// With capacity_factor > 0 the routed experts use GShard's capacity dispatch instead
// (nn/moe_capacity.h): fixed-size expert buffers that layouts can split by expert, so expert
// parallelism is a sharding annotation (MoESharding) and jit's partitioner adds all_to_all.
// Everything is built from ops, so moe_apply traces under jit / grad / vmap / scan; stacked
// MoEParams (a leading [n_layers] axis on every leaf) slice per layer under scan.
// Errors: an invalid config gives absl::InvalidArgumentError from validate(); moe_init and
// moe_apply throw graft::Error ("[moe_init] ..." / "[moe_apply] ...") on bad configs/shapes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "core/array.h"
#include "core/sharding/device_put.h"
#include "core/tree/tree.h"

namespace graft::nn {

enum class RouterScore { kSoftmax, kSigmoid };

// Expert parallelism by annotation (capacity mode only): the dispatched tokens [E, G, C, dim]
// are constrained split over `expert_axis` by expert, the token groups [G, S, dim] and the
// experts' outputs by group, so jit's partitioner moves them with all_to_all. The caller
// places the expert weights (w1 / w3 / w2) split on E over the same axis (device_put).
struct MoESharding {
  Mesh mesh;
  std::string expert_axis;
};

struct MoEConfig {
  int64_t dim = 0;
  int64_t n_experts = 0;
  int64_t top_k = 1;
  int64_t expert_ffn_dim = 0;    // hidden size of each routed expert
  int64_t n_shared_experts = 0;  // 0: none
  int64_t shared_ffn_dim = 0;    // hidden size of one shared expert
  RouterScore router = RouterScore::kSoftmax;
  bool normalize_topk = true;     // renormalize the k selected weights to sum to 1
  double aux_loss_weight = 0.01;  // load-balancing loss weight (in MoEStats::loss)
  double z_loss_weight = 0.0;     // router z-loss weight (in MoEStats::loss)
  double init_std = 0.02;
  double out_init_scale = 1.0;  // output projections (w2) start at init_std * out_init_scale
  // 0: dropless (sorted tokens, ragged_dot). > 0: capacity dispatch: the N tokens in
  // token_groups groups of S = N / token_groups, each expert taking at most
  // C = min(S, ceil(capacity_factor * S * top_k / n_experts)) assignments per group; the rest
  // are dropped (their weight counts 0). See nn/moe_capacity.h.
  double capacity_factor = 0.0;
  int64_t token_groups = 1;
  std::optional<MoESharding> sharding;  // capacity mode only

  absl::Status validate() const;
};

// Routed experts w1 / w3 [E, dim, h], w2 [E, h, dim]; router [dim, E]; the shared experts
// as one SwiGLU of width n_shared_experts * shared_ffn_dim (zero-width when there are none).
struct MoEParams {
  Array router;
  Array w1, w3, w2;
  Array shared_w1, shared_w3, shared_w2;
};

struct MoEStats {
  Array aux_loss;     // f32 scalar, unweighted: E * sum_e f_e * P_e (1 when balanced)
  Array z_loss;       // f32 scalar, unweighted: mean_tokens(logsumexp(logits)^2)
  Array loss;         // f32 scalar: aux_loss_weight * aux_loss + z_loss_weight * z_loss
  Array expert_load;  // f32 [E]: f_e, the fraction of the N * k assignments to expert e
};

struct MoEOutput {
  Array y;  // [N, dim], x's dtype
  MoEStats stats;
};

// Normal(0, init_std) weights (f32); w2 and shared_w2 scaled by out_init_scale.
MoEParams moe_init(const MoEConfig& cfg, const Array& key);

// x [N, dim] (any float dtype; experts compute in x's dtype, the router in f32).
MoEOutput moe_apply(const MoEParams& params, const Array& x, const MoEConfig& cfg);

// The routing alone (exposed for tests and diagnostics): per token its top_k experts
// (i32 [N, k], best first) and their weights (f32 [N, k]), the router logits (f32 [N, E])
// and scores (f32 [N, E]), and the group sizes (i32 [E]) of the sorted assignments.
struct MoERouting {
  Array experts, weights, logits, scores, group_sizes;
};
MoERouting moe_route(const Array& router, const Array& x, const MoEConfig& cfg);

}  // namespace graft::nn

GRAFT_TREE(graft::nn::MoEParams, router, w1, w3, w2, shared_w1, shared_w3, shared_w2);
GRAFT_TREE(graft::nn::MoEStats, aux_loss, z_loss, loss, expert_load);
GRAFT_TREE(graft::nn::MoEOutput, y, stats);
