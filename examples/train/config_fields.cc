#include "examples/train/config_fields.h"

#include <cmath>
#include <sstream>

#include "absl/strings/numbers.h"

namespace graft::train::internal {
namespace {

using T = FieldType;

// F(section, key, type, help [, choices]): the member is config.section.key.
// clang-format off
#define F(SECTION, KEY, TYPE, HELP, ...)                                            \
  Field{#SECTION, #KEY, TYPE, std::vector<std::string>{__VA_ARGS__}, HELP,          \
        [](TrainConfig& c) -> void* { return static_cast<void*>(&c.SECTION.KEY); }}
// clang-format on

std::vector<Field> make_fields() {
  return {
      F(job, description, T::kString, "free text, printed at start"),
      F(job, dump_folder, T::kString, "outputs: tensorboard, checkpoints, samples"),

      F(model, flavor, T::kString, "model name"),
      F(model, vocab_size, T::kInt, "0 = take from the tokenizer"),
      F(model, dim, T::kInt, "model width"),
      F(model, n_layers, T::kInt, "transformer blocks"),
      F(model, n_heads, T::kInt, "query heads"),
      F(model, n_kv_heads, T::kInt, "key/value heads (GQA); divides n_heads"),
      F(model, ffn_dim, T::kInt, "SwiGLU hidden width of dense layers"),
      F(model, rope_theta, T::kFloat, "RoPE base"),
      F(model, norm_eps, T::kFloat, "RMSNorm epsilon"),
      F(model, tied_embeddings, T::kBool, "output projection = embedding^T"),
      F(model, from_hf_config, T::kBool,
        "take dim, n_layers, heads, ffn_dim, rope_theta, norm_eps, vocab_size, tied_embeddings "
        "from checkpoint.initial_load_hf's config.json"),
      F(model, remat, T::kString, "activation checkpointing", "none", "dots", "full"),
      F(model, compute_dtype, T::kString, "activations / matmuls", "float32", "bfloat16"),
      F(model, n_routed_experts, T::kInt, "MoE experts; 0 = dense model"),
      F(model, top_k, T::kInt, "experts per token"),
      F(model, moe_every, T::kInt, "every n-th layer is MoE"),
      F(model, expert_ffn_dim, T::kInt, "SwiGLU hidden width of one expert"),
      F(model, n_shared_experts, T::kInt, "always-on experts"),
      F(model, router, T::kString, "router scores", "softmax", "sigmoid"),
      F(model, aux_loss_weight, T::kFloat, "load-balancing loss weight"),
      F(model, z_loss_weight, T::kFloat, "router z-loss weight"),
      F(model, moe_capacity_factor, T::kFloat,
        "0 = dropless; > 0: expert capacity per token group (GShard), needed for EP"),
      F(model, moe_token_groups, T::kInt, "token groups of the capacity dispatch"),

      F(optimizer, name, T::kString, "optimizer", "adamw", "adam", "lion", "sgd"),
      F(optimizer, lr, T::kFloat, "peak learning rate"),
      F(optimizer, beta1, T::kFloat, "adam/lion beta1"),
      F(optimizer, beta2, T::kFloat, "adam/lion beta2"),
      F(optimizer, eps, T::kFloat, "adam epsilon"),
      F(optimizer, weight_decay, T::kFloat, "decoupled weight decay"),
      F(optimizer, momentum, T::kFloat, "sgd momentum"),

      F(lr_scheduler, warmup_steps, T::kInt, "linear warmup steps"),
      F(lr_scheduler, decay_type, T::kString, "decay after warmup", "cosine", "linear", "wsd",
        "constant"),
      F(lr_scheduler, decay_ratio, T::kFloat, "wsd: fraction of steps decaying"),
      F(lr_scheduler, min_lr_ratio, T::kFloat, "final lr / peak lr"),

      F(training, dataset, T::kString,
        "\"default\" (built-in corpus), a text or JSON Lines (.jsonl[.gz|.zst]) file/dir"),
      F(training, tokenizer, T::kString, "tokenizer", "byte", "bpe", "hf:<tokenizer.json>"),
      F(training, tokenizer_vocab_size, T::kInt, "bpe vocabulary size"),
      F(training, tokenizer_eot, T::kString,
        "hf: end-of-text token; \"\" = <|endoftext|>, <|end_of_text|>, </s> or <eos>"),
      F(training, data_dir, T::kString, "prepared token files; \"\" = <dump_folder>/data"),
      F(training, batch_size, T::kInt, "sequences per step"),
      F(training, seq_len, T::kInt, "tokens per sequence"),
      F(training, steps, T::kInt, "optimizer steps; 0 = no training"),
      F(training, max_norm, T::kFloat, "clip gradients to this global norm; 0 = off"),
      F(training, gradient_accumulation_steps, T::kInt,
        "micro-batches per step; divides batch_size"),
      F(training, seed, T::kInt, "PRNG seed"),
      F(training, device, T::kString,
        "where the step runs (cuda: the first GPU, or the first N for [parallelism] degrees)",
        "cpu", "cuda"),
      F(training, time_limit_seconds, T::kFloat, "stop early after this long; 0 = none"),

      F(checkpoint, enable, T::kBool, "save checkpoints"),
      F(checkpoint, folder, T::kString, "relative to dump_folder"),
      F(checkpoint, interval, T::kInt, "steps between saves"),
      F(checkpoint, keep_latest_k, T::kInt, "0 = keep all"),
      F(checkpoint, async_mode, T::kString, "save in the background", "disabled", "async"),
      F(checkpoint, load_step, T::kInt, "-1 = latest"),
      F(checkpoint, initial_load_hf, T::kString,
        "Hugging Face Llama folder (or safetensors file) to start from; \"\" = random init"),
      F(checkpoint, initial_load_hf_allow_unused, T::kBool,
        "ignore tensors of initial_load_hf that the Llama does not use"),
      F(checkpoint, export_hf, T::kString,
        "write the final params here as a Hugging Face Llama folder; \"\" = no"),

      F(metrics, log_freq, T::kInt, "steps between progress lines"),
      F(metrics, eval_freq, T::kInt, "steps between validations; 0 = never"),
      F(metrics, eval_batches, T::kInt, "batches per validation"),
      F(metrics, enable_tensorboard, T::kBool, "write TensorBoard event files"),
      F(metrics, save_tb_folder, T::kString, "relative to dump_folder"),
      F(metrics, peak_flops, T::kFloat, "FLOP/s for MFU; 0 = measure at start"),

      F(sample, prompt, T::kString, "text to continue after training"),
      F(sample, max_new_tokens, T::kInt, "0 = no sampling"),
      F(sample, temperature, T::kFloat, "0 = greedy"),
      F(sample, top_k, T::kInt, "0 = whole vocabulary"),

      F(parallelism, data_parallel_replicate_degree, T::kInt,
        "devices the batch is split over (parameters replicated)"),
      F(parallelism, data_parallel_shard_degree, T::kInt, "FSDP: devices parameters and optimizer state are split over"),
      F(parallelism, tensor_parallel_degree, T::kInt,
        "Megatron tensor parallel: devices each layer's heads and hidden units are split over"),
      F(parallelism, expert_parallel_degree, T::kInt,
        "MoE experts split over dp_shard: 1, or data_parallel_shard_degree"),
  };
}
#undef F

}  // namespace

std::string value_text(const FieldValue& v) {
  std::ostringstream os;
  std::visit(
      [&](const auto& x) {
        using X = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<X, bool>) {
          os << (x ? "true" : "false");
        } else if constexpr (std::is_same_v<X, std::string>) {
          os << '"' << x << '"';
        } else {
          os << x;
        }
      },
      v);
  return os.str();
}

const char* field_type_name(FieldType type) {
  switch (type) {
    case FieldType::kInt:
      return "integer";
    case FieldType::kFloat:
      return "float";
    case FieldType::kBool:
      return "boolean";
    case FieldType::kString:
      return "string";
  }
  return "?";
}

const std::vector<Field>& fields() {
  static const std::vector<Field> table = make_fields();
  return table;
}

const Field* find_field(std::string_view dotted_name) {
  for (const Field& f : fields()) {
    if (f.name() == dotted_name) return &f;
  }
  return nullptr;
}

bool is_section(std::string_view name) {
  for (const Field& f : fields()) {
    if (f.section == name) return true;
  }
  return false;
}

FieldValue Field::get(const TrainConfig& config) const {
  void* p = member(const_cast<TrainConfig&>(config));  // read only
  switch (type) {
    case FieldType::kInt:
      return *static_cast<int64_t*>(p);
    case FieldType::kFloat:
      return *static_cast<double*>(p);
    case FieldType::kBool:
      return *static_cast<bool*>(p);
    case FieldType::kString:
      return *static_cast<std::string*>(p);
  }
  return int64_t{0};
}

absl::Status Field::set(TrainConfig& config, const FieldValue& value,
                        const std::string& where) const {
  void* p = member(config);
  switch (type) {
    case FieldType::kInt:
      *static_cast<int64_t*>(p) = std::get<int64_t>(value);
      break;
    case FieldType::kFloat: {
      double d = std::holds_alternative<int64_t>(value)
                     ? static_cast<double>(std::get<int64_t>(value))
                     : std::get<double>(value);
      if (!std::isfinite(d)) return key_error(where, name(), value_text(value), "must be finite");
      *static_cast<double*>(p) = d;
      break;
    }
    case FieldType::kBool:
      *static_cast<bool*>(p) = std::get<bool>(value);
      break;
    case FieldType::kString: {
      const std::string& s = std::get<std::string>(value);
      if (!choices.empty()) {
        bool ok = false;
        std::string list;
        for (const std::string& c : choices) {
          // "hf:<tokenizer.json>": any value of the form hf:<something>.
          const size_t open = c.find('<');
          ok |= c == s || (open != std::string::npos && c.back() == '>' &&
                           s.size() > open && s.compare(0, open, c, 0, open) == 0);
          list += (list.empty() ? "\"" : ", \"") + c + "\"";
        }
        if (!ok) return key_error(where, name(), value_text(value), "must be one of " + list);
      }
      *static_cast<std::string*>(p) = s;
      break;
    }
  }
  return absl::OkStatus();
}

absl::Status parse_text_value(const Field& field, const std::string& text, const std::string& where,
                              FieldValue* out) {
  auto bad = [&] {
    return key_error(where, field.name(), "\"" + text + "\"",
                     std::string("expected ") + field_type_name(field.type));
  };
  switch (field.type) {
    case FieldType::kInt: {
      int64_t v;
      if (!absl::SimpleAtoi(text, &v)) return bad();
      *out = v;
      return absl::OkStatus();
    }
    case FieldType::kFloat: {
      double v;
      if (!absl::SimpleAtod(text, &v) || !std::isfinite(v)) return bad();
      *out = v;
      return absl::OkStatus();
    }
    case FieldType::kBool:
      if (text == "true" || text == "1") {
        *out = true;
      } else if (text == "false" || text == "0") {
        *out = false;
      } else {
        return bad();
      }
      return absl::OkStatus();
    case FieldType::kString:
      *out = text;
      return absl::OkStatus();
  }
  return bad();
}

absl::Status key_error(const std::string& where, const std::string& key, const std::string& value,
                       const std::string& message) {
  std::string text = where.empty() ? "" : where + ": ";
  text += key;
  if (!value.empty()) text += " = " + value;
  return absl::InvalidArgumentError(text + ": " + message);
}

}  // namespace graft::train::internal
