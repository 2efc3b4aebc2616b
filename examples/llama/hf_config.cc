#include "examples/llama/hf_config.h"

#include <cmath>
#include <sstream>
#include <vector>

#include "absl/strings/match.h"
#include "examples/llama/data_setup.h"
#include "examples/llama/hf_names.h"

namespace graft::llama_train {
namespace {

using nlohmann::json;

std::string num(double v) {
  std::ostringstream os;
  os.precision(10);
  os << v;
  return os.str();
}

const char* torch_dtype(DType d) {
  switch (d) {
    case DType::kF32:
      return "float32";
    case DType::kBF16:
      return "bfloat16";
    case DType::kF16:
      return "float16";
    default:
      return nullptr;
  }
}

// Reads config.json values with transformers' defaults; the first error wins.
class Reader {
 public:
  Reader(const json& j, const std::string& where) : j_(j), where_(where) {}

  // The key's value, or nullptr when it is missing or null (transformers' default applies).
  const json* find(const json& obj, const std::string& key) const {
    auto it = obj.find(key);
    return it == obj.end() || it->is_null() ? nullptr : &*it;
  }
  int64_t integer(const std::string& key, int64_t fallback) {
    const json* v = find(j_, key);
    if (v == nullptr) return fallback;
    if (!v->is_number_integer()) return bad(key, *v, "an integer"), fallback;
    return v->get<int64_t>();
  }
  double number(const json& obj, const std::string& key, double fallback) {
    const json* v = find(obj, key);
    if (v == nullptr) return fallback;
    if (!v->is_number()) return bad(key, *v, "a number"), fallback;
    return v->get<double>();
  }
  bool boolean(const std::string& key, bool fallback) {
    const json* v = find(j_, key);
    if (v == nullptr) return fallback;
    if (!v->is_boolean()) return bad(key, *v, "true or false"), fallback;
    return v->get<bool>();
  }
  std::string text(const json& obj, const std::string& key, const std::string& fallback) {
    const json* v = find(obj, key);
    if (v == nullptr) return fallback;
    if (!v->is_string()) return bad(key, *v, "a string"), fallback;
    return v->get<std::string>();
  }
  // A value graft's Llama cannot be: the model is not one it can load.
  void unsupported(const std::string& key, const std::string& value, const std::string& why) {
    fail(key + " = " + value + ": " + why);
  }
  void fail(const std::string& message) {
    if (status_.ok()) status_ = absl::InvalidArgumentError(where_ + ": " + message);
  }
  const absl::Status& status() const { return status_; }

 private:
  void bad(const std::string& key, const json& v, const char* expected) {
    fail(key + " = " + v.dump() + ": expected " + expected);
  }
  const json& j_;
  const std::string& where_;
  absl::Status status_;
};

}  // namespace

absl::StatusOr<json> llama_hf_config(const nn::LlamaConfig& c, const LlamaHfExtras& x) {
  if (c.rope_scaling) {
    return absl::InvalidArgumentError(
        "HF export: rope scaling is not written to config.json (no [model] key sets it)");
  }
  const char* dtype = torch_dtype(x.dtype);
  if (dtype == nullptr) {
    return absl::InvalidArgumentError(std::string("HF export: weights of dtype ") +
                                      dtype_name(x.dtype) + " have no torch_dtype");
  }
  json j = {
      {"architectures", {"LlamaForCausalLM"}},
      {"model_type", "llama"},
      {"vocab_size", c.vocab_size},
      {"hidden_size", c.dim},
      {"intermediate_size", c.ffn_dim},
      {"num_hidden_layers", c.n_layers},
      {"num_attention_heads", c.n_heads},
      {"num_key_value_heads", c.n_kv_heads},
      {"head_dim", c.head_dim()},
      {"hidden_act", "silu"},
      {"max_position_embeddings", x.max_position_embeddings},
      {"rms_norm_eps", c.norm_eps},
      {"rope_theta", c.rope_theta},
      {"rope_parameters", {{"rope_type", "default"}, {"rope_theta", c.rope_theta}}},
      {"tie_word_embeddings", c.tied_output},
      {"attention_bias", false},
      {"attention_dropout", 0.0},
      {"mlp_bias", false},
      {"initializer_range", c.init_std},
      {"use_cache", true},
      {"torch_dtype", dtype},
      {"dtype", dtype},
  };
  // Missing ids would take LlamaConfig's defaults (1 and 2): null says "none".
  j["bos_token_id"] = x.bos_token_id ? json(*x.bos_token_id) : json(nullptr);
  j["eos_token_id"] = x.eos_token_id ? json(*x.eos_token_id) : json(nullptr);
  return j;
}

json llama_generation_config(const LlamaHfExtras& x) {
  json j = json::object();
  if (x.bos_token_id) j["bos_token_id"] = *x.bos_token_id;
  if (x.eos_token_id) j["eos_token_id"] = *x.eos_token_id;
  return j;
}

absl::Status export_llama_hf(const std::string& dir, const nn::LlamaParams& params,
                             const nn::LlamaConfig& config, const LlamaHfExtras& extras,
                             const checkpoint::HfFolderOptions& options) {
  LlamaHfExtras x = extras;
  x.dtype = params.embed.dtype();
  absl::StatusOr<json> cfg = llama_hf_config(config, x);
  if (!cfg.ok()) return cfg.status();
  return checkpoint::export_hf_folder(
      dir, params, llama_hf_names(),
      {.config = *cfg, .generation_config = llama_generation_config(x)}, options);
}

absl::StatusOr<HfLlama> parse_llama_hf_config(const json& j, const std::string& where) {
  Reader r(j, where);
  HfLlama h;
  const std::string type = r.text(j, "model_type", "llama");
  if (type != "llama") {
    r.unsupported("model_type", "\"" + type + "\"", "graft loads \"llama\" only");
  }
  h.vocab_size = r.integer("vocab_size", h.vocab_size);
  h.hidden_size = r.integer("hidden_size", h.hidden_size);
  h.intermediate_size = r.integer("intermediate_size", h.intermediate_size);
  h.num_hidden_layers = r.integer("num_hidden_layers", h.num_hidden_layers);
  h.num_attention_heads = r.integer("num_attention_heads", h.num_attention_heads);
  h.num_key_value_heads = r.integer("num_key_value_heads", h.num_attention_heads);
  for (auto [key, v] : {std::pair<const char*, int64_t>{"vocab_size", h.vocab_size},
                        {"hidden_size", h.hidden_size},
                        {"intermediate_size", h.intermediate_size},
                        {"num_hidden_layers", h.num_hidden_layers},
                        {"num_attention_heads", h.num_attention_heads},
                        {"num_key_value_heads", h.num_key_value_heads}}) {
    if (v <= 0) r.fail(std::string(key) + " = " + std::to_string(v) + ": must be > 0");
  }
  if (!r.status().ok()) return r.status();
  const int64_t natural = h.hidden_size / h.num_attention_heads;
  h.head_dim = r.integer("head_dim", natural);
  if (h.head_dim != natural || h.hidden_size % h.num_attention_heads != 0) {
    r.unsupported("head_dim", std::to_string(h.head_dim),
                  "graft's Llama has head_dim = hidden_size / num_attention_heads = " +
                      std::to_string(h.hidden_size) + " / " +
                      std::to_string(h.num_attention_heads));
  }
  // transformers 5 reads rope_scaling (if given) or rope_parameters, and rope_theta inside it
  // before the top-level (transformers 4) key.
  const json* rope = r.find(j, "rope_scaling");
  if (rope == nullptr) rope = r.find(j, "rope_parameters");
  if (rope != nullptr && !rope->is_object()) {
    r.fail("rope_parameters = " + rope->dump() + ": expected an object");
    rope = nullptr;
  }
  h.rope_theta = r.number(j, "rope_theta", 10000.0);
  if (rope != nullptr) {
    h.rope_theta = r.number(*rope, "rope_theta", h.rope_theta);
    const std::string rope_type = r.text(*rope, "rope_type", r.text(*rope, "type", "default"));
    if (rope_type != "default") {
      r.unsupported("rope_type", "\"" + rope_type + "\"",
                    "[model] has no rope scaling (graft loads rope_type \"default\" only)");
    }
  }
  h.rms_norm_eps = r.number(j, "rms_norm_eps", h.rms_norm_eps);
  h.tie_word_embeddings = r.boolean("tie_word_embeddings", false);
  if (r.boolean("attention_bias", false)) {
    r.unsupported("attention_bias", "true", "graft's Llama has no attention bias (false)");
  }
  if (r.boolean("mlp_bias", false)) {
    r.unsupported("mlp_bias", "true", "graft's Llama has no MLP bias (false)");
  }
  const std::string act = r.text(j, "hidden_act", "silu");
  if (act != "silu") {
    r.unsupported("hidden_act", "\"" + act + "\"", "graft's Llama uses SwiGLU (\"silu\")");
  }
  if (!r.status().ok()) return r.status();
  return h;
}

absl::Status check_llama_hf_config(const json& j, const nn::LlamaConfig& m,
                                   const std::string& where) {
  absl::StatusOr<HfLlama> h = parse_llama_hf_config(j, where);
  if (!h.ok()) return h.status();
  std::vector<std::string> diffs;
  auto ints = [&](const char* hf_key, int64_t hf, const std::string& key, int64_t v) {
    if (hf != v) {
      diffs.push_back(std::string(hf_key) + " = " + std::to_string(hf) + ", " + key + " = " +
                      std::to_string(v));
    }
  };
  auto floats = [&](const char* hf_key, double hf, const std::string& key, double v) {
    if (std::abs(hf - v) > 1e-6 * std::max(std::abs(hf), std::abs(v))) {
      diffs.push_back(std::string(hf_key) + " = " + num(hf) + ", " + key + " = " + num(v));
    }
  };
  ints("vocab_size", h->vocab_size, "the model's vocabulary (model.vocab_size, 0: the tokenizer's)",
       m.vocab_size);
  ints("hidden_size", h->hidden_size, "model.dim", m.dim);
  ints("intermediate_size", h->intermediate_size, "model.ffn_dim", m.ffn_dim);
  ints("num_hidden_layers", h->num_hidden_layers, "model.n_layers", m.n_layers);
  ints("num_attention_heads", h->num_attention_heads, "model.n_heads", m.n_heads);
  ints("num_key_value_heads", h->num_key_value_heads, "model.n_kv_heads", m.n_kv_heads);
  ints("head_dim", h->head_dim, "model.dim / model.n_heads", m.head_dim());
  floats("rope_theta", h->rope_theta, "model.rope_theta", m.rope_theta);
  floats("rms_norm_eps", h->rms_norm_eps, "model.norm_eps", m.norm_eps);
  if (h->tie_word_embeddings != m.tied_output) {
    diffs.push_back(std::string("tie_word_embeddings = ") +
                    (h->tie_word_embeddings ? "true" : "false") +
                    ", model.tied_embeddings = " + (m.tied_output ? "true" : "false"));
  }
  if (diffs.empty()) return absl::OkStatus();
  std::string list;
  for (const std::string& d : diffs) list += (list.empty() ? "" : "; ") + d;
  return absl::InvalidArgumentError(
      where + " disagrees with [model]: " + list +
      ". Set those [model] keys to the config.json's values, or model.from_hf_config = true to "
      "take [model] from it");
}

absl::Status model_from_hf_config(const json& j, train::ModelConfig& m, const std::string& where) {
  absl::StatusOr<HfLlama> h = parse_llama_hf_config(j, where);
  if (!h.ok()) return h.status();
  m.vocab_size = h->vocab_size;
  m.dim = h->hidden_size;
  m.ffn_dim = h->intermediate_size;
  m.n_layers = h->num_hidden_layers;
  m.n_heads = h->num_attention_heads;
  m.n_kv_heads = h->num_key_value_heads;
  m.rope_theta = h->rope_theta;
  m.norm_eps = h->rms_norm_eps;
  m.tied_embeddings = h->tie_word_embeddings;
  return absl::OkStatus();
}

absl::Status apply_from_hf_config(train::TrainConfig& config) {
  if (!config.model.from_hf_config) return absl::OkStatus();
  const std::string& source = config.checkpoint.initial_load_hf;
  if (source.empty()) {
    return absl::InvalidArgumentError(
        "model.from_hf_config = true needs checkpoint.initial_load_hf: a Hugging Face folder "
        "with config.json");
  }
  auto j = checkpoint::read_hf_config(source);
  if (!j.ok()) return j.status();
  if (!j->has_value()) {
    return absl::InvalidArgumentError(
        "model.from_hf_config = true: checkpoint.initial_load_hf = \"" + source +
        "\" is not a folder with config.json");
  }
  return model_from_hf_config(**j, config.model,
                              "checkpoint.initial_load_hf: " + source + "/config.json");
}

absl::Status check_initial_hf_config(const train::TrainConfig& config,
                                     const nn::LlamaConfig& model) {
  const std::string& source = config.checkpoint.initial_load_hf;
  if (source.empty()) return absl::OkStatus();
  auto j = checkpoint::read_hf_config(source);
  if (!j.ok()) return j.status();
  if (!j->has_value()) return absl::OkStatus();  // a bare safetensors file: shapes are checked
  return check_llama_hf_config(**j, model,
                               "checkpoint.initial_load_hf: " + source + "/config.json");
}

absl::Status check_export_hf_path(const train::TrainConfig& config) {
  const std::string& key = config.checkpoint.export_hf;
  if (key.empty()) return absl::OkStatus();
  const std::string where = "checkpoint.export_hf = \"" + key + "\"";
  if (absl::EndsWith(key, ".safetensors")) {
    return absl::InvalidArgumentError(
        where +
        " names a file, but the export is a folder (config.json, generation_config.json, "
        "model.safetensors or its shards) that transformers' from_pretrained loads: name the "
        "folder (e.g. \"hf\")");
  }
  const std::string path = under_dump_folder(config, key);
  absl::Status s = checkpoint::check_hf_export_dir(path);
  if (s.ok()) return s;
  return absl::Status(s.code(), where + " (" + path + "): " + std::string(s.message()));
}

}  // namespace graft::llama_train
