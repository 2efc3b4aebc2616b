// Range and cross-key checks of a TrainConfig. Type and enum checks happen when a value is
// set (Field::set); these are the rules that need numbers or several keys.
#include <functional>
#include <string>

#include "examples/train/config_fields.h"

namespace graft::train::internal {
namespace {

class Checker {
 public:
  Checker(const TrainConfig& config, const std::function<std::string(const std::string&)>& where)
      : config_(config), where_(where) {}

  // Records the first failure: "<where>: key = value: message".
  void require(bool ok, const std::string& key, const std::string& message) {
    if (ok || !status_.ok()) return;
    const Field* field = find_field(key);
    std::string value = field ? value_text(field->get(config_)) : "";
    status_ = key_error(where_(key), key, value, message);
  }
  absl::Status status() const { return status_; }

 private:
  const TrainConfig& config_;
  const std::function<std::string(const std::string&)>& where_;
  absl::Status status_;
};

std::string str(int64_t v) { return std::to_string(v); }

}  // namespace

absl::Status check_ranges(const TrainConfig& c,
                          const std::function<std::string(const std::string&)>& where) {
  Checker k(c, where);
  // Enum strings (also checked on set, but a config built in code arrives here directly).
  for (const Field& f : fields()) {
    if (f.type == FieldType::kString && !f.choices.empty()) {
      TrainConfig copy = c;
      absl::Status s = f.set(copy, f.get(c), where(f.name()));
      if (!s.ok()) return s;
    }
  }

  const ModelConfig& m = c.model;
  k.require(m.vocab_size >= 0, "model.vocab_size", "must be >= 0 (0 = from the tokenizer)");
  k.require(m.dim > 0, "model.dim", "must be > 0");
  k.require(m.n_layers > 0, "model.n_layers", "must be > 0");
  k.require(m.n_heads > 0, "model.n_heads", "must be > 0");
  k.require(m.n_kv_heads > 0, "model.n_kv_heads", "must be > 0");
  k.require(m.n_heads <= 0 || m.dim % m.n_heads == 0, "model.n_heads",
            "must divide model.dim = " + str(m.dim));
  k.require(m.n_heads <= 0 || m.dim <= 0 || (m.dim / m.n_heads) % 2 == 0, "model.n_heads",
            "head dim model.dim / model.n_heads must be even (RoPE rotates pairs)");
  k.require(m.n_kv_heads <= 0 || m.n_heads % m.n_kv_heads == 0, "model.n_kv_heads",
            "must divide model.n_heads = " + str(m.n_heads));
  k.require(m.ffn_dim > 0, "model.ffn_dim", "must be > 0");
  k.require(m.rope_theta > 0, "model.rope_theta", "must be > 0");
  k.require(m.norm_eps > 0, "model.norm_eps", "must be > 0");
  k.require(m.n_routed_experts >= 0, "model.n_routed_experts", "must be >= 0 (0 = dense)");
  if (m.n_routed_experts > 0) {
    k.require(m.top_k >= 1 && m.top_k <= m.n_routed_experts, "model.top_k",
              "must be in [1, model.n_routed_experts = " + str(m.n_routed_experts) + "]");
    k.require(m.moe_every >= 1, "model.moe_every", "must be >= 1");
    k.require(m.expert_ffn_dim > 0, "model.expert_ffn_dim", "must be > 0");
  }
  k.require(m.n_shared_experts >= 0, "model.n_shared_experts", "must be >= 0");
  k.require(m.aux_loss_weight >= 0, "model.aux_loss_weight", "must be >= 0");
  k.require(m.z_loss_weight >= 0, "model.z_loss_weight", "must be >= 0");
  k.require(m.moe_capacity_factor >= 0, "model.moe_capacity_factor", "must be >= 0 (0 = dropless)");
  k.require(m.moe_token_groups >= 1, "model.moe_token_groups", "must be >= 1");

  const OptimizerConfig& o = c.optimizer;
  k.require(o.lr > 0, "optimizer.lr", "must be > 0");
  k.require(o.beta1 >= 0 && o.beta1 < 1, "optimizer.beta1", "must be in [0, 1)");
  k.require(o.beta2 >= 0 && o.beta2 < 1, "optimizer.beta2", "must be in [0, 1)");
  k.require(o.eps >= 0, "optimizer.eps", "must be >= 0");
  // Adam divides by sqrt(nu) + eps: with eps = 0 a parameter whose gradients have all been 0
  // gets 0 / 0 = NaN.
  k.require(o.eps > 0 || (o.name != "adam" && o.name != "adamw"), "optimizer.eps",
            "must be > 0 for " + o.name +
                " (it divides by sqrt(nu) + eps: a zero gradient "
                "gives 0 / 0 = NaN)");
  k.require(o.weight_decay >= 0, "optimizer.weight_decay", "must be >= 0");
  k.require(o.momentum >= 0 && o.momentum < 1, "optimizer.momentum", "must be in [0, 1)");

  const LrSchedulerConfig& l = c.lr_scheduler;
  k.require(l.warmup_steps >= 0, "lr_scheduler.warmup_steps", "must be >= 0");
  k.require(l.decay_ratio >= 0 && l.decay_ratio <= 1, "lr_scheduler.decay_ratio",
            "must be in [0, 1]");
  k.require(l.min_lr_ratio >= 0 && l.min_lr_ratio <= 1, "lr_scheduler.min_lr_ratio",
            "must be in [0, 1]");

  const TrainingConfig& t = c.training;
  k.require(!t.dataset.empty(), "training.dataset", "must not be empty (\"default\" = built-in)");
  k.require(t.tokenizer_vocab_size >= 256, "training.tokenizer_vocab_size",
            "must be >= 256 (the byte alphabet)");
  k.require(t.batch_size > 0, "training.batch_size", "must be > 0");
  k.require(t.seq_len > 0, "training.seq_len", "must be > 0");
  k.require(t.steps >= 0, "training.steps", "must be >= 0");
  k.require(t.max_norm >= 0, "training.max_norm", "must be >= 0 (0 = no clipping)");
  k.require(t.gradient_accumulation_steps >= 1, "training.gradient_accumulation_steps",
            "must be >= 1");
  k.require(t.batch_size <= 0 || t.gradient_accumulation_steps <= 0 ||
                t.batch_size % t.gradient_accumulation_steps == 0,
            "training.gradient_accumulation_steps",
            "must divide training.batch_size = " + str(t.batch_size));
  k.require(t.time_limit_seconds >= 0, "training.time_limit_seconds", "must be >= 0 (0 = none)");

  const CheckpointConfig& ck = c.checkpoint;
  k.require(!ck.folder.empty(), "checkpoint.folder", "must not be empty");
  k.require(ck.interval >= 1, "checkpoint.interval", "must be >= 1");
  k.require(ck.keep_latest_k >= 0, "checkpoint.keep_latest_k", "must be >= 0 (0 = keep all)");
  k.require(ck.load_step >= -1, "checkpoint.load_step", "must be >= -1 (-1 = latest)");

  const MetricsConfig& mt = c.metrics;
  k.require(mt.log_freq >= 1, "metrics.log_freq", "must be >= 1");
  k.require(mt.eval_freq >= 0, "metrics.eval_freq", "must be >= 0 (0 = never)");
  k.require(mt.eval_batches >= 1, "metrics.eval_batches", "must be >= 1");
  k.require(mt.peak_flops >= 0, "metrics.peak_flops", "must be >= 0 (0 = measure)");

  const SampleConfig& s = c.sample;
  k.require(s.max_new_tokens >= 0, "sample.max_new_tokens", "must be >= 0");
  k.require(s.temperature >= 0, "sample.temperature", "must be >= 0 (0 = greedy)");
  k.require(s.top_k >= 0, "sample.top_k", "must be >= 0 (0 = whole vocabulary)");
  k.require(m.vocab_size == 0 || s.max_new_tokens == 0 || s.top_k <= m.vocab_size, "sample.top_k",
            "must be <= model.vocab_size = " + str(m.vocab_size) + " (0 = whole vocabulary)");

  const ParallelismConfig& par = c.parallelism;
  const int64_t dp = par.data_parallel_replicate_degree;
  const int64_t fsdp = par.data_parallel_shard_degree;
  k.require(dp >= 1, "parallelism.data_parallel_replicate_degree", "must be >= 1");
  k.require(fsdp >= 1, "parallelism.data_parallel_shard_degree", "must be >= 1");
  const int64_t micro = t.gradient_accumulation_steps >= 1 && t.batch_size > 0
                            ? t.batch_size / t.gradient_accumulation_steps
                            : 0;
  k.require(dp < 1 || micro <= 0 || micro % dp == 0, "parallelism.data_parallel_replicate_degree",
            "must divide the micro-batch (training.batch_size / "
            "training.gradient_accumulation_steps = " +
                str(micro) + ")");
  k.require(dp < 1 || fsdp < 1 || micro <= 0 || micro % (dp * fsdp) == 0,
            "parallelism.data_parallel_shard_degree",
            "times data_parallel_replicate_degree must divide the micro-batch (" + str(micro) +
                ")");
  // Tensor parallelism splits attention by heads (q and k / v alike) and the SwiGLU by hidden
  // units, so the degree must divide each of them.
  const int64_t tp = par.tensor_parallel_degree;
  const std::string tp_key = "parallelism.tensor_parallel_degree";
  k.require(tp >= 1, tp_key, "must be >= 1");
  k.require(tp < 1 || m.n_heads <= 0 || m.n_heads % tp == 0, tp_key,
            "must divide model.n_heads = " + str(m.n_heads));
  k.require(tp < 1 || m.n_kv_heads <= 0 || m.n_kv_heads % tp == 0, tp_key,
            "must divide model.n_kv_heads = " + str(m.n_kv_heads));
  k.require(tp < 1 || m.ffn_dim <= 0 || m.ffn_dim % tp == 0, tp_key,
            "must divide model.ffn_dim = " + str(m.ffn_dim));
  k.require(tp <= 1 || m.n_routed_experts == 0, tp_key,
            "must be 1 for a mixture-of-experts model (model.n_routed_experts = " +
                str(m.n_routed_experts) + "): the trainer splits dense layers only");
  // The tokens one MoE layer sees at once: the micro-batch (jit partitions the global step
  // under FSDP), or one device's share of it under shard_map data parallelism.
  const int64_t moe_tokens = (fsdp > 1 || dp < 1 ? micro : micro / dp) * t.seq_len;
  if (m.n_routed_experts > 0 && m.moe_capacity_factor > 0 && m.moe_token_groups >= 1 &&
      moe_tokens > 0) {
    k.require(moe_tokens % m.moe_token_groups == 0, "model.moe_token_groups",
              "must divide the tokens of a micro-batch (" + str(moe_tokens) + ")");
  }
  // Expert parallelism borrows the dp_shard axis (as torchtitan does): experts split over it,
  // tokens exchanged with all_to_all by the capacity dispatch.
  const int64_t ep = par.expert_parallel_degree;
  if (ep != 1) {
    const std::string why = "must be 1 or equal to data_parallel_shard_degree";
    k.require(ep == fsdp, "parallelism.expert_parallel_degree",
              why + " = " + str(fsdp) + " (experts are split over the dp_shard axis)");
    k.require(m.n_routed_experts > 0, "parallelism.expert_parallel_degree",
              "needs an MoE model (model.n_routed_experts > 0): a dense model has no experts");
    k.require(m.n_routed_experts <= 0 || m.moe_capacity_factor > 0,
              "parallelism.expert_parallel_degree",
              "needs model.moe_capacity_factor > 0 (the dropless dispatch cannot be split by "
              "expert)");
    k.require(ep < 1 || m.n_routed_experts <= 0 || m.n_routed_experts % ep == 0,
              "parallelism.expert_parallel_degree",
              "must divide model.n_routed_experts = " + str(m.n_routed_experts));
    k.require(ep < 1 || m.n_routed_experts <= 0 || m.moe_token_groups % ep == 0,
              "parallelism.expert_parallel_degree",
              "must divide model.moe_token_groups = " + str(m.moe_token_groups));
  }
  return k.status();
}

}  // namespace graft::train::internal
