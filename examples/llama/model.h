// The models the training program can run, behind one small interface so the trainer is
// written once: a dense Llama, and (model.n_routed_experts > 0) a Llama whose feed-forward
// blocks are mixtures of experts.
//
// A Model knows its parameter pytree type, how to initialize it, its training loss (with
// named auxiliary scalars: MoE losses, per-expert load), how to sample, and its FLOPs per
// token for MFU.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>

#include "absl/status/statusor.h"
#include "checkpoint/hf.h"
#include "core/array.h"
#include "examples/train/train_config.h"
#include "nn/llama.h"
#include "nn/moe_llama.h"

namespace graft::llama_train {

using Metrics = std::map<std::string, Array>;  // named f32 arrays, reported by the trainer

// The nn::LlamaConfig that [model] describes; vocab_size 0 takes the tokenizer's.
absl::StatusOr<nn::LlamaConfig> llama_config(const train::ModelConfig& model,
                                             int64_t tokenizer_vocab);

struct DenseLlama {
  using Params = nn::LlamaParams;
  nn::LlamaConfig config;

  Params init(const Array& key) const { return nn::llama_init(config, key); }
  std::pair<Array, Metrics> loss(const Params& params, const Array& inputs,
                                 const Array& targets) const {
    return {nn::llama_loss(params, inputs, targets, config), Metrics{}};
  }
  // The token cross-entropy alone (validation; equals loss for a dense model).
  Array cross_entropy(const Params& params, const Array& inputs, const Array& targets) const {
    return nn::llama_loss(params, inputs, targets, config);
  }
  // Names for Hugging Face import / export (examples/llama/hf_names.h).
  std::optional<checkpoint::HfNameFn> hf_names() const;
  // Samples among the first `vocab` ids only (the tokenizer's: a padded model vocabulary's
  // extra rows are never targets, so they are not tokens).
  Array generate(const Params& params, const Array& prompt, int64_t max_new_tokens,
                 double temperature, int64_t top_k, int64_t vocab, const Array& key) const;
  double flops_per_token(int64_t seq_len) const { return nn::flops_per_token(config, seq_len); }
  int64_t num_params() const { return nn::count_params(config); }
  std::string describe() const;
};

// [model] with n_routed_experts > 0: the MoE Llama (nn/moe_llama.h).
absl::StatusOr<nn::MoELlamaConfig> moe_llama_config(const train::ModelConfig& model,
                                                    int64_t tokenizer_vocab);

struct MoELlama {
  using Params = nn::MoELlamaParams;
  nn::MoELlamaConfig config;

  Params init(const Array& key) const { return nn::moe_llama_init(config, key); }
  // The loss adds the weighted router losses; the metrics report them, the plain
  // cross-entropy and the per-expert load (fraction of assignments, averaged over layers).
  std::pair<Array, Metrics> loss(const Params& params, const Array& inputs,
                                 const Array& targets) const;
  Array cross_entropy(const Params& params, const Array& inputs, const Array& targets) const {
    return nn::moe_llama_loss(params, inputs, targets, config).cross_entropy;
  }
  // Samples among the first `vocab` ids only (the tokenizer's: a padded model vocabulary's
  // extra rows are never targets, so they are not tokens).
  Array generate(const Params& params, const Array& prompt, int64_t max_new_tokens,
                 double temperature, int64_t top_k, int64_t vocab, const Array& key) const;
  double flops_per_token(int64_t seq_len) const { return nn::flops_per_token(config, seq_len); }
  int64_t num_params() const { return nn::count_params(config); }
  std::optional<checkpoint::HfNameFn> hf_names() const { return std::nullopt; }
  std::string describe() const;
};

}  // namespace graft::llama_train
