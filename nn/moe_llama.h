// A Llama whose feed-forward blocks are mixtures of experts (nn/moe.h): every moe_every-th
// layer (layer i when (i + 1) % moe_every == 0) routes its tokens to top_k of n_experts
// SwiGLU experts plus optional shared experts; the other layers are dense Llama layers.
//
// Layers run as one `scan` over groups of moe_every layers (moe_every - 1 dense layers, then
// one MoE layer), so the trace is one group whatever the depth. Dense layers of a group are
// stacked [groups, moe_every - 1, ...], MoE layers [groups, ...]. The remat policy wraps the
// group body. The loss is the token cross-entropy plus, summed over MoE layers, each layer's
// weighted load-balancing and router z-losses (Switch Transformer / ST-MoE).
#pragma once

#include <cstdint>
#include <optional>

#include "core/array.h"
#include "core/tree/tree.h"
#include "nn/llama.h"
#include "nn/moe.h"

namespace graft::nn {

struct MoELlamaConfig {
  LlamaConfig base;       // vocabulary, attention, norms; base.ffn_dim sizes the dense layers
  MoEConfig moe;          // moe.dim is base.dim
  int64_t moe_every = 1;  // n_layers must be a multiple

  // Throws graft::Error("[MoELlamaConfig] ...").
  void validate() const;
  int64_t groups() const { return base.n_layers / moe_every; }
  // moe-small of bench/configs.md: llama-small with every FFN an MoE of 8
  // experts (hidden 512), top-2, softmax router, renormalized, one shared expert (512).
  static MoELlamaConfig small();
  static MoELlamaConfig tiny();  // llama-tiny with 4 experts (hidden 64), top-2, 1 shared
};

// One MoE layer's weights (stacked [groups, ...] in MoELlamaParams).
struct MoELlamaLayer {
  Array attn_norm, wq, wk, wv, wo, ffn_norm;
  MoEParams moe;
};

// The attention half of an MoE layer as a LlamaLayer (its ffn left empty), for
// llama_attention_block.
LlamaLayer attention_weights(const MoELlamaLayer& layer);

struct MoELlamaParams {
  Array embed;                      // [vocab, dim]
  std::optional<LlamaLayer> dense;  // [groups, moe_every - 1, ...]; absent when moe_every == 1
  MoELlamaLayer moe_layers;         // [groups, ...]
  Array final_norm;                 // [dim]
  std::optional<Array> output;      // [dim, vocab]; absent when tied
};

MoELlamaParams moe_llama_init(const MoELlamaConfig& config, const Array& key);

// Summed over the MoE layers (losses) or averaged (expert_load: fraction of assignments).
struct MoELlamaStats {
  Array aux_loss;     // unweighted load-balancing loss, mean over MoE layers
  Array z_loss;       // unweighted router z-loss, mean over MoE layers
  Array moe_loss;     // weighted, summed over MoE layers: what the loss adds
  Array expert_load;  // [n_experts], mean over MoE layers
};

struct MoELlamaHidden {
  Array hidden;  // final-normed [B, T, dim] in the compute dtype
  MoELlamaStats stats;
};
MoELlamaHidden moe_llama_hidden(const MoELlamaParams& params, const Array& tokens,
                                const MoELlamaConfig& config);
Array moe_llama_output_weight(const MoELlamaParams& params, const MoELlamaConfig& config);

struct MoELlamaLoss {
  Array loss;           // cross_entropy + stats.moe_loss: what training minimizes
  Array cross_entropy;  // mean token cross-entropy
  MoELlamaStats stats;
};
MoELlamaLoss moe_llama_loss(const MoELlamaParams& params, const Array& inputs, const Array& targets,
                            const MoELlamaConfig& config);

// Matmul parameters as torchtitan counts them for MoE: attention, dense MLPs, the router,
// shared experts, top_k / n_experts of the routed experts, and the output projection.
int64_t count_active_matmul_params(const MoELlamaConfig& config);
int64_t count_params(const MoELlamaConfig& config);  // everything, all experts
double flops_per_token(const MoELlamaConfig& config, int64_t seq_len);

}  // namespace graft::nn

GRAFT_TREE(graft::nn::MoELlamaLayer, attn_norm, wq, wk, wv, wo, ffn_norm, moe);
GRAFT_TREE(graft::nn::MoELlamaParams, embed, dense, moe_layers, final_norm, output);
GRAFT_TREE(graft::nn::MoELlamaStats, aux_loss, z_loss, moe_loss, expert_load);
