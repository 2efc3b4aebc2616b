// graft's LlamaParams <-> Hugging Face Llama safetensors names (LlamaForCausalLM):
//   embed -> model.embed_tokens.weight          output -> lm_head.weight (transposed)
//   final_norm -> model.norm.weight
//   layers.{attn_norm, ffn_norm} -> model.layers.{i}.{input, post_attention}_layernorm.weight
//   layers.{wq, wk, wv, wo} -> model.layers.{i}.self_attn.{q, k, v, o}_proj.weight (transposed)
//   layers.ffn.{w1, w3, w2} -> model.layers.{i}.mlp.{gate, up, down}_proj.weight (transposed)
// graft stores Linear weights [in, out] and stacks layers on axis 0; HF stores [out, in] per
// layer. graft's rope uses HF's rotate_half layout, so q / k need no permutation.
#pragma once

#include "checkpoint/hf.h"

namespace graft::llama_train {

checkpoint::HfNameFn llama_hf_names();

}  // namespace graft::llama_train
