#include "examples/llama/model.h"

#include <sstream>

#include "core/error.h"
#include "core/ops.h"
#include "examples/llama/hf_names.h"
#include "nn/generate.h"

namespace graft::llama_train {

absl::StatusOr<nn::MoELlamaConfig> moe_llama_config(const train::ModelConfig& m,
                                                    int64_t tokenizer_vocab) {
  auto base = llama_config(m, tokenizer_vocab);
  if (!base.ok()) return base.status();
  nn::MoELlamaConfig c;
  c.base = *base;
  c.moe_every = m.moe_every;
  c.moe.dim = m.dim;
  c.moe.n_experts = m.n_routed_experts;
  c.moe.top_k = m.top_k;
  c.moe.expert_ffn_dim = m.expert_ffn_dim;
  c.moe.n_shared_experts = m.n_shared_experts;
  c.moe.shared_ffn_dim = m.expert_ffn_dim;
  c.moe.router = m.router == "sigmoid" ? nn::RouterScore::kSigmoid : nn::RouterScore::kSoftmax;
  c.moe.normalize_topk = true;
  c.moe.aux_loss_weight = m.aux_loss_weight;
  c.moe.z_loss_weight = m.z_loss_weight;
  c.moe.capacity_factor = m.moe_capacity_factor;
  c.moe.token_groups = m.moe_token_groups;
  try {
    c.validate();
  } catch (const Error& e) {
    return absl::InvalidArgumentError(std::string("[model] ") + e.what());
  }
  return c;
}

std::pair<Array, Metrics> MoELlama::loss(const Params& params, const Array& inputs,
                                         const Array& targets) const {
  nn::MoELlamaLoss l = nn::moe_llama_loss(params, inputs, targets, config);
  return {l.loss, Metrics{{"moe/cross_entropy", l.cross_entropy},
                          {"moe/aux_loss", l.stats.aux_loss},
                          {"moe/z_loss", l.stats.z_loss},
                          {"moe/expert_load", l.stats.expert_load}}};
}

Array MoELlama::generate(const Params& params, const Array& prompt, int64_t max_new_tokens,
                         double temperature, int64_t top_k, int64_t vocab, const Array& key) const {
  // Sampling runs the dropless dispatch: at inference no token is dropped, and the token
  // counts of a prompt and of one new token need not split into the training's groups.
  nn::MoELlamaConfig c = config;
  c.moe.capacity_factor = 0;
  c.moe.token_groups = 1;
  c.moe.sharding.reset();
  return nn::generate_with(
      params, [c](const Params& p, const Array& t) { return nn::moe_llama_hidden(p, t, c).hidden; },
      [c, vocab](const Params& p) {
        return slice_axis(nn::moe_llama_output_weight(p, c), 1, 0, vocab);  // [dim, vocab]
      },
      vocab, prompt, max_new_tokens, temperature, top_k, key);
}

std::string MoELlama::describe() const {
  std::ostringstream os;
  os << "MoE Llama " << config.base << ", " << config.moe.n_experts << " experts (top "
     << config.moe.top_k << ", hidden " << config.moe.expert_ffn_dim << ", "
     << config.moe.n_shared_experts << " shared) every " << config.moe_every << " layer(s), "
     << num_params() << " parameters (" << nn::count_active_matmul_params(config)
     << " active in matmuls)";
  return os.str();
}

absl::StatusOr<nn::LlamaConfig> llama_config(const train::ModelConfig& m, int64_t tokenizer_vocab) {
  nn::LlamaConfig c;
  c.vocab_size = m.vocab_size == 0 ? tokenizer_vocab : m.vocab_size;
  if (c.vocab_size < tokenizer_vocab) {
    return absl::InvalidArgumentError("model.vocab_size = " + std::to_string(m.vocab_size) +
                                      " is smaller than the tokenizer's vocabulary (" +
                                      std::to_string(tokenizer_vocab) + ")");
  }
  c.dim = m.dim;
  c.n_layers = m.n_layers;
  c.n_heads = m.n_heads;
  c.n_kv_heads = m.n_kv_heads;
  c.ffn_dim = m.ffn_dim;
  c.rope_theta = m.rope_theta;
  c.norm_eps = m.norm_eps;
  c.tied_output = m.tied_embeddings;
  c.remat = m.remat == "full"   ? nn::Remat::kNothingSaveable
            : m.remat == "dots" ? nn::Remat::kDotsSaveable
                                : nn::Remat::kNone;
  c.compute_dtype = m.compute_dtype == "bfloat16" ? DType::kBF16 : DType::kF32;
  try {
    c.validate();
  } catch (const Error& e) {
    return absl::InvalidArgumentError(std::string("[model] ") + e.what());
  }
  return c;
}

Array DenseLlama::generate(const Params& params, const Array& prompt, int64_t max_new_tokens,
                           double temperature, int64_t top_k, int64_t vocab,
                           const Array& key) const {
  const nn::LlamaConfig c = config;
  return nn::generate_with(
      params, [c](const Params& p, const Array& t) { return nn::llama_hidden(p, t, c); },
      [c, vocab](const Params& p) {
        return slice_axis(nn::llama_output_weight(p, c), 1, 0, vocab);  // [dim, vocab]
      },
      vocab, prompt, max_new_tokens, temperature, top_k, key);
}

std::optional<checkpoint::HfNameFn> DenseLlama::hf_names() const { return llama_hf_names(); }

std::string DenseLlama::describe() const {
  std::ostringstream os;
  os << "Llama " << config << ", " << num_params() << " parameters ("
     << nn::count_matmul_params(config) << " in matmuls)";
  return os.str();
}

}  // namespace graft::llama_train
