// TrainConfig: everything a training run needs to know, in the sections of torchtitan's TOML
// files ([job], [model], [optimizer], [lr_scheduler], [training], [checkpoint], [metrics],
// [sample], [parallelism]). Plain values only, so this package does not depend on nn / optim /
// data; the training program maps them onto modules and optimizers.
//
// Sources, later ones win: the defaults below, a TOML file (--config=path), then command-line
// overrides `--section.key=value`. Unknown sections or keys, values of the wrong TOML type,
// unknown enum strings and out-of-range values are absl::InvalidArgumentError naming the key
// and where it came from ("run.toml:12:1" or "command line").
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"

namespace graft::train {

struct JobConfig {
  std::string description = "graft training run";
  std::string dump_folder = "./outputs";  // tensorboard, checkpoints and samples go below it
  bool operator==(const JobConfig&) const = default;
};

struct ModelConfig {
  std::string flavor = "debugmodel";
  int64_t vocab_size = 0;  // 0 = take it from the tokenizer
  int64_t dim = 256;
  int64_t n_layers = 4;
  int64_t n_heads = 8;
  int64_t n_kv_heads = 4;  // grouped-query attention: n_heads % n_kv_heads == 0
  int64_t ffn_dim = 768;
  double rope_theta = 10000.0;
  double norm_eps = 1e-5;
  bool tied_embeddings = false;
  // Take the keys a Hugging Face config.json fixes (dim, n_layers, heads, ffn_dim, rope_theta,
  // norm_eps, vocab_size, tied_embeddings) from checkpoint.initial_load_hf's config.json.
  bool from_hf_config = false;
  std::string remat = "none";             // "none" | "dots" | "full"
  std::string compute_dtype = "float32";  // "float32" | "bfloat16"
  // Mixture of experts; n_routed_experts == 0 is a dense model and the rest is ignored.
  int64_t n_routed_experts = 0;
  int64_t top_k = 2;
  int64_t moe_every = 1;  // layer i is MoE when (i + 1) % moe_every == 0
  int64_t expert_ffn_dim = 256;
  int64_t n_shared_experts = 0;
  std::string router = "softmax";  // "softmax" | "sigmoid"
  double aux_loss_weight = 0.01;
  double z_loss_weight = 0.001;
  // 0: dropless MoE. > 0: GShard capacity dispatch (nn/moe_capacity.h) over moe_token_groups
  // groups of tokens; what expert parallelism (parallelism.expert_parallel_degree) needs.
  double moe_capacity_factor = 0.0;
  int64_t moe_token_groups = 1;
  bool operator==(const ModelConfig&) const = default;
};

struct OptimizerConfig {
  std::string name = "adamw";  // "adamw" | "adam" | "lion" | "sgd"
  double lr = 8e-4;
  double beta1 = 0.9;
  double beta2 = 0.95;
  double eps = 1e-8;
  double weight_decay = 0.1;
  double momentum = 0.9;  // sgd only
  bool operator==(const OptimizerConfig&) const = default;
};

struct LrSchedulerConfig {
  int64_t warmup_steps = 20;
  std::string decay_type = "cosine";  // "cosine" | "linear" | "wsd" | "constant"
  double decay_ratio = 0.2;           // wsd: fraction of the steps spent decaying
  double min_lr_ratio = 0.1;          // final lr = lr * min_lr_ratio
  bool operator==(const LrSchedulerConfig&) const = default;
};

struct TrainingConfig {
  std::string dataset = "default";      // "default" = built-in corpus, a text or JSON Lines
                                        // file / directory
  std::string tokenizer = "byte";       // "byte" | "bpe" | "hf:<path to tokenizer.json>"
  int64_t tokenizer_vocab_size = 2048;  // bpe only; >= 256
  std::string tokenizer_eot = "";       // hf only: end-of-text token; "" = found by name
  std::string data_dir = "";            // prepared token files; "" = <dump_folder>/data
  int64_t batch_size = 8;
  int64_t seq_len = 256;
  int64_t steps = 1000;   // 0 = no training (evaluate / sample a loaded checkpoint)
  double max_norm = 1.0;  // gradient clipping by global norm; 0 = off
  int64_t gradient_accumulation_steps = 1;
  int64_t seed = 0;
  // "cpu", or "cuda": params, optimizer state and the step on the first GPU (graft built with
  // --config=cuda; one device, no [parallelism] degrees > 1).
  std::string device = "cpu";
  double time_limit_seconds = 0;  // 0 = none; else stop (and checkpoint) when exceeded
  bool operator==(const TrainingConfig&) const = default;
};

struct CheckpointConfig {
  bool enable = false;
  std::string folder = "checkpoint";  // relative to dump_folder unless absolute
  int64_t interval = 500;
  int64_t keep_latest_k = 3;            // 0 = keep all
  std::string async_mode = "disabled";  // "disabled" | "async"
  int64_t load_step = -1;               // -1 = latest
  std::string initial_load_hf;          // HF Llama folder or safetensors file to start from
  std::string export_hf;                // HF Llama folder for the final params (relative to dump)
  // Tensors of initial_load_hf that the Llama does not use are ignored (else an error).
  bool initial_load_hf_allow_unused = false;
  bool operator==(const CheckpointConfig&) const = default;
};

struct MetricsConfig {
  int64_t log_freq = 10;
  int64_t eval_freq = 100;  // 0 = never
  int64_t eval_batches = 8;
  bool enable_tensorboard = true;
  std::string save_tb_folder = "tb";  // relative to dump_folder unless absolute
  double peak_flops = 0;              // FLOP/s for MFU; 0 = measure at start
  bool operator==(const MetricsConfig&) const = default;
};

struct SampleConfig {
  std::string prompt = "Once upon a time";
  int64_t max_new_tokens = 64;  // 0 = no sampling
  double temperature = 0.8;     // 0 = greedy
  int64_t top_k = 40;           // 0 = whole vocabulary
  bool operator==(const SampleConfig&) const = default;
};

// torchtitan's degrees. data_parallel_replicate_degree alone: a shard_map over a one-axis
// mesh "data" (parameters replicated, each device its slice of every micro-batch).
// data_parallel_shard_degree > 1 (FSDP, HSDP with both): jit shardings over the mesh
// dp_replicate x dp_shard, the batch split over both, parameters and optimizer state split
// over dp_shard (examples/llama/placement.h). tensor_parallel_degree > 1: Megatron tensor
// parallelism by jit shardings over the mesh dp_replicate x dp_shard x tp (attention heads,
// SwiGLU hidden units and the output head's vocabulary split over tp; it must divide
// n_heads, n_kv_heads and ffn_dim; dense models only). The expert parallel degree is refused
// by validation (not supported yet).
struct ParallelismConfig {
  int64_t data_parallel_replicate_degree = 1;
  int64_t data_parallel_shard_degree = 1;
  int64_t tensor_parallel_degree = 1;
  int64_t expert_parallel_degree = 1;
  bool operator==(const ParallelismConfig&) const = default;
};

struct TrainConfig {
  JobConfig job;
  ModelConfig model;
  OptimizerConfig optimizer;
  LrSchedulerConfig lr_scheduler;
  TrainingConfig training;
  CheckpointConfig checkpoint;
  MetricsConfig metrics;
  SampleConfig sample;
  ParallelismConfig parallelism;
  bool operator==(const TrainConfig&) const = default;
};

// One `--section.key=value` from the command line, checked against the known keys.
struct Override {
  std::string key;  // "training.steps"
  std::string value;
  bool operator==(const Override&) const = default;
};

struct CommandLine {
  std::string config_path;  // from --config=path; "" = defaults only
  std::vector<Override> overrides;
  bool help = false;  // --help / -h
};

// Accepts `--config=path`, `--config path`, `--section.key=value`, `--section.key value`, and
// `--section.key` alone for booleans (= true). Unknown keys, values that do not parse as the
// key's type and stray positional arguments are InvalidArgumentError. argv[0] is skipped.
absl::StatusOr<CommandLine> parse_command_line(int argc, const char* const* argv);

// Defaults, then the TOML file at `path` (skipped when empty), then `overrides` in order; then
// validates the whole config. A missing file is NotFoundError.
absl::StatusOr<TrainConfig> load_train_config(const std::string& path,
                                              const std::vector<Override>& overrides = {});
absl::StatusOr<TrainConfig> load_train_config(const CommandLine& command_line);

// Parses TOML text; `source` names it in messages (a path, "<string>").
absl::StatusOr<TrainConfig> parse_train_config(const std::string& toml_text,
                                               const std::string& source = "<string>",
                                               const std::vector<Override>& overrides = {});

// Range and enum checks across the whole config (load_* call it already).
absl::Status validate(const TrainConfig& config);

// The effective config as TOML, every key, with a comment per key; parses back to `config`.
std::string to_toml(const TrainConfig& config);

// Every key's effective value, in to_toml's order: {"training.seed", "0"}, ...
std::vector<std::pair<std::string, std::string>> key_values(const TrainConfig& config);

// `--help` text: every key with its type and default.
std::string usage(const std::string& program);

}  // namespace graft::train
