#include "examples/llama/model.h"

#include <sstream>

#include "core/error.h"
#include "examples/llama/hf_names.h"
#include "nn/generate.h"

namespace graft::llama_train {

absl::StatusOr<nn::LlamaConfig> llama_config(const train::ModelConfig& m,
                                             int64_t tokenizer_vocab) {
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
                           double temperature, int64_t top_k, const Array& key) const {
  return nn::generate(params, config, prompt, max_new_tokens, temperature, top_k, key);
}

std::optional<checkpoint::HfNameFn> DenseLlama::hf_names() const { return llama_hf_names(); }

std::string DenseLlama::describe() const {
  std::ostringstream os;
  os << "Llama " << config << ", " << num_params() << " parameters ("
     << nn::count_matmul_params(config) << " in matmuls)";
  return os.str();
}

}  // namespace graft::llama_train
