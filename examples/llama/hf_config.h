// Hugging Face folders of the dense Llama (transformers' LlamaForCausalLM), both ways:
//  - export: config.json built from nn::LlamaConfig, generation_config.json, and the weights
//    through llama_hf_names(), as one folder (checkpoint/hf_folder.h) that
//    AutoModelForCausalLM.from_pretrained(dir) loads;
//  - import: a folder's config.json read with transformers' defaults for missing keys, then
//    checked against [model] (a disagreement is an error naming the key and both values) or,
//    with model.from_hf_config, taken as [model].
//
// config.json keys and the [model] keys they fix:
//   vocab_size -> vocab_size            hidden_size -> dim
//   intermediate_size -> ffn_dim        num_hidden_layers -> n_layers
//   num_attention_heads -> n_heads      num_key_value_heads -> n_kv_heads (null: n_heads)
//   head_dim -> dim / n_heads           rope_theta (or rope_parameters.rope_theta) -> rope_theta
//   rms_norm_eps -> norm_eps            tie_word_embeddings -> tied_embeddings
// and what graft's Llama always is: model_type "llama", hidden_act "silu", attention_bias and
// mlp_bias false, rope_type "default" (no scaling).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "checkpoint/hf_folder.h"
#include "core/dtype/dtype.h"
#include "examples/train/train_config.h"
#include "nlohmann/json.hpp"
#include "nn/llama.h"

namespace graft::llama_train {

// What config.json holds beyond nn::LlamaConfig.
struct LlamaHfExtras {
  std::optional<int64_t> bos_token_id;  // written when known
  std::optional<int64_t> eos_token_id;
  int64_t max_position_embeddings = 2048;  // the context the model was trained on
  DType dtype = DType::kF32;               // of the weights: torch_dtype / dtype
};

// config.json of a LlamaForCausalLM. rope_theta is written both at the top (transformers 4)
// and in rope_parameters (transformers 5). InvalidArgument for what the format cannot say
// here (rope scaling).
absl::StatusOr<nlohmann::json> llama_hf_config(const nn::LlamaConfig& config,
                                               const LlamaHfExtras& extras);
nlohmann::json llama_generation_config(const LlamaHfExtras& extras);

// The whole folder: config.json, generation_config.json, model.safetensors (or shards).
absl::Status export_llama_hf(const std::string& dir, const nn::LlamaParams& params,
                             const nn::LlamaConfig& config, const LlamaHfExtras& extras,
                             const checkpoint::HfFolderOptions& options = {});

// A config.json's Llama, missing keys at transformers' LlamaConfig defaults. InvalidArgument
// (prefixed by `where`) for a value of the wrong type or a model graft's Llama is not (bias,
// another activation, rope scaling, head_dim other than hidden_size / num_attention_heads,
// another model_type).
struct HfLlama {
  int64_t vocab_size = 32000;
  int64_t hidden_size = 4096;
  int64_t intermediate_size = 11008;
  int64_t num_hidden_layers = 32;
  int64_t num_attention_heads = 32;
  int64_t num_key_value_heads = 32;
  int64_t head_dim = 128;
  double rope_theta = 10000.0;
  double rms_norm_eps = 1e-6;
  bool tie_word_embeddings = false;
};
absl::StatusOr<HfLlama> parse_llama_hf_config(const nlohmann::json& config,
                                              const std::string& where);

// Every key where `hf` and the model disagree, in one InvalidArgument: "num_attention_heads =
// 8, model.n_heads = 4; ...". Floats agree to a relative 1e-6 (a value that went through
// float32 on the way still matches).
absl::Status check_llama_hf_config(const nlohmann::json& hf, const nn::LlamaConfig& model,
                                   const std::string& where);

// [model]'s keys of the table above, from `hf` (the others stay).
absl::Status model_from_hf_config(const nlohmann::json& hf, train::ModelConfig& model,
                                  const std::string& where);

// With model.from_hf_config: [model] from checkpoint.initial_load_hf's config.json (which
// must exist); without, nothing. Idempotent: the program calls it before printing the
// effective config, and run_training again.
absl::Status apply_from_hf_config(train::TrainConfig& config);

// checkpoint.initial_load_hf's config.json, when the folder has one, checked against the
// model the run builds.
absl::Status check_initial_hf_config(const train::TrainConfig& config,
                                     const nn::LlamaConfig& model);

// checkpoint.export_hf, before training: a folder (not a .safetensors file name) that an
// export can write (checkpoint::check_hf_export_dir), resolved against job.dump_folder.
absl::Status check_export_hf_path(const train::TrainConfig& config);

}  // namespace graft::llama_train
