// The Llama model (Llama 2/3 architecture): token embedding, n_layers pre-norm blocks of
// grouped-query causal attention with rotary embeddings and a SwiGLU feed-forward block,
// final RMSNorm, output projection (separate or tied to the embedding).
//
// Parameters are a pytree (LlamaParams). The per-layer weights are stacked along a leading
// [n_layers] axis so the layers run as one `scan` (one traced layer body, whatever the
// depth); the remat policy wraps that body in `checkpoint`. Weight layout is [in, out]
// (x @ w); Hugging Face Llama weights import transposed, with no permutation of wq / wk
// (rope uses HF's rotate_half layout, see nn/rope.h).
//
// Mixed precision (compute_dtype bf16): parameters stay f32 and are cast to bf16 for the
// matmuls; the residual stream, norms, softmax and the loss are f32.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>

#include "core/array.h"
#include "core/tree/tree.h"
#include "nn/rope.h"
#include "nn/swiglu.h"

namespace graft::nn {

enum class Remat {
  kNone,             // keep every activation (fastest, most memory)
  kDotsSaveable,     // keep matmul outputs, recompute elementwise ops
  kNothingSaveable,  // keep only each layer's input (full activation checkpointing)
};

struct LlamaConfig {
  int64_t vocab_size = 256;
  int64_t dim = 64;
  int64_t n_layers = 2;
  int64_t n_heads = 4;
  int64_t n_kv_heads = 2;
  int64_t ffn_dim = 192;  // SwiGLU hidden size
  double rope_theta = 10000.0;
  std::optional<RopeScaling> rope_scaling;  // Llama 3.1-style frequency scaling
  double norm_eps = 1e-5;
  bool tied_output = false;  // logits = h @ embed^T, no separate output weight
  Remat remat = Remat::kNone;
  DType compute_dtype = DType::kF32;  // kF32, or kBF16 for mixed precision
  double init_std = 0.02;
  bool scan_layers = true;           // false: a C++ loop over the layers (same math)
  int64_t loss_chunk_tokens = 1024;  // tokens per chunk of the output projection + loss

  int64_t head_dim() const { return dim / n_heads; }
  // Throws graft::Error("[LlamaConfig] ...") naming the first inconsistent field.
  void validate() const;

  static LlamaConfig tiny();   // the test model of bench/configs.md
  static LlamaConfig small();  // llama-small: vocab 8192, dim 512, 8 layers, 8 / 4 heads
};
std::ostream& operator<<(std::ostream& os, const LlamaConfig& c);  // also jit's static key

// One layer's weights; in LlamaParams every field has an extra leading [n_layers] axis.
struct LlamaLayer {
  Array attn_norm;  // [dim]
  Array wq;         // [dim, n_heads * head_dim]
  Array wk;         // [dim, n_kv_heads * head_dim]
  Array wv;         // [dim, n_kv_heads * head_dim]
  Array wo;         // [n_heads * head_dim, dim]
  Array ffn_norm;   // [dim]
  SwiGLU ffn;
};

struct LlamaParams {
  Array embed;                  // [vocab, dim]
  LlamaLayer layers;            // stacked: [n_layers, ...]
  Array final_norm;             // [dim]
  std::optional<Array> output;  // [dim, vocab]; absent when tied_output
};

// normal(0, init_std) weights, wo and w2 scaled by 1 / sqrt(2 n_layers), norms ones. The
// layers draw from split keys, so the result depends only on (config, key).
LlamaParams llama_init(const LlamaConfig& config, const Array& key);

// The pieces of one block, exposed so other blocks (an MoE feed-forward every n-th layer)
// can be composed with the same attention: x is the residual stream [B, T, dim] (f32).
// Attention sub-block: x + wo(attn(rope(q), rope(k), v)) of attn_norm(x).
Array llama_attention_block(const LlamaLayer& layer, const Array& x, const RopeTables& rope,
                            const LlamaConfig& config);
// Feed-forward sub-block: x + ffn(ffn_norm(x)).
Array llama_ffn_block(const LlamaLayer& layer, const Array& x, const LlamaConfig& config);
// Both (one unstacked layer).
Array llama_layer(const LlamaLayer& layer, const Array& x, const RopeTables& rope,
                  const LlamaConfig& config);

// tokens [B, T] (i32) -> final-normed hidden states [B, T, dim] in the compute dtype.
Array llama_hidden(const LlamaParams& params, const Array& tokens, const LlamaConfig& config);
// tokens [B, T] -> logits [B, T, vocab] (f32). Materializes all logits: for inference.
Array llama_logits(const LlamaParams& params, const Array& tokens, const LlamaConfig& config);
// The output projection as [dim, vocab] (the embedding transposed when tied).
Array llama_output_weight(const LlamaParams& params, const LlamaConfig& config);
// Mean next-token cross-entropy of targets [B, T] given inputs [B, T], over tokens where
// mask != 0 and targets != -100, via chunked_cross_entropy (f32 scalar).
Array llama_loss(const LlamaParams& params, const Array& inputs, const Array& targets,
                 const LlamaConfig& config, const std::optional<Array>& mask = std::nullopt);

// All parameters (embedding, norms, output included).
int64_t count_params(const LlamaConfig& config);
// Matmul parameters N (attention, MLP, output projection; not the embedding table or norms;
// with tied_output the shared table counts once, as the output projection).
int64_t count_matmul_params(const LlamaConfig& config);
// torchtitan's 6 N + 12 L H d_head T.
double flops_per_token(const LlamaConfig& config, int64_t seq_len);

}  // namespace graft::nn

GRAFT_TREE(graft::nn::LlamaLayer, attn_norm, wq, wk, wv, wo, ffn_norm, ffn);
GRAFT_TREE(graft::nn::LlamaParams, embed, layers, final_norm, output);
