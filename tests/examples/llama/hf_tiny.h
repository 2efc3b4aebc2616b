// The two tiny Llamas whose Hugging Face folders are committed under testdata/ (written by
// write_hf_tiny, logits recorded by tools/make_hf_llama_vectors.py with transformers):
//   hf_tiny       vocab 96, dim 64, 2 layers, 4 heads / 2 kv heads, ffn 128, rope_theta 500,
//                 norm_eps 1e-3, separate output projection;
//   hf_tiny_tied  vocab 96, dim 32, 2 layers, 4 heads / 1 kv head, ffn 64, rope_theta 2000,
//                 norm_eps 1e-4, output tied to the embedding; written in 32 KiB shards with
//                 model.safetensors.index.json, so that transformers reads the sharded form.
// rope_theta and eps are far from transformers' defaults (10000, 1e-6) and the weights are
// large (std 0.2, norm weights 1 +- 0.2) so that a config read wrong changes the logits far
// beyond the tolerance.
#pragma once

#include <string>

#include "core/ops.h"
#include "core/random/random.h"
#include "examples/llama/hf_config.h"
#include "nn/llama.h"

namespace graft::llama_train {

inline nn::LlamaConfig hf_tiny_config(bool tied) {
  nn::LlamaConfig c;
  c.vocab_size = 96;
  c.n_layers = 2;
  c.n_heads = 4;
  c.dim = tied ? 32 : 64;
  c.n_kv_heads = tied ? 1 : 2;
  c.ffn_dim = tied ? 64 : 128;
  c.rope_theta = tied ? 2000.0 : 500.0;
  c.norm_eps = tied ? 1e-4 : 1e-3;
  c.tied_output = tied;
  c.init_std = 0.2;
  return c;
}

inline std::string hf_tiny_name(bool tied) { return tied ? "hf_tiny_tied" : "hf_tiny"; }

inline LlamaHfExtras hf_tiny_extras() {
  return {.bos_token_id = 95, .eos_token_id = 95, .max_position_embeddings = 64};
}

inline checkpoint::HfFolderOptions hf_tiny_options(bool tied) {
  checkpoint::HfFolderOptions o;
  if (tied) o.max_shard_bytes = 32 << 10;
  return o;
}

// Deterministic params: llama_init's, with norm weights drawn around 1 so that they matter.
inline nn::LlamaParams hf_tiny_params(const nn::LlamaConfig& c) {
  const Array key = random::key(c.tied_output ? 2 : 1);
  nn::LlamaParams p = nn::llama_init(c, key);
  auto around_one = [&](const Array& like, uint32_t salt) {
    return ones_like(like) +
           random::normal(random::fold_in(key, salt), like.shape()) * full({}, 0.2);
  };
  p.layers.attn_norm = around_one(p.layers.attn_norm, 1);
  p.layers.ffn_norm = around_one(p.layers.ffn_norm, 2);
  p.final_norm = around_one(p.final_norm, 3);
  return p;
}

}  // namespace graft::llama_train
