#include "examples/llama/hf_names.h"

namespace graft::llama_train {

checkpoint::HfNameFn llama_hf_names() {
  auto layer = [](const char* hf, bool transpose) {
    return checkpoint::HfTensorMap{std::string("model.layers.{i}.") + hf, transpose, true};
  };
  return checkpoint::hf_rules({
      {R"(embed)", {"model.embed_tokens.weight"}},
      {R"(output)", {"lm_head.weight", /*transpose=*/true}},
      {R"(final_norm)", {"model.norm.weight"}},
      {R"(layers\.attn_norm)", layer("input_layernorm.weight", false)},
      {R"(layers\.ffn_norm)", layer("post_attention_layernorm.weight", false)},
      {R"(layers\.wq)", layer("self_attn.q_proj.weight", true)},
      {R"(layers\.wk)", layer("self_attn.k_proj.weight", true)},
      {R"(layers\.wv)", layer("self_attn.v_proj.weight", true)},
      {R"(layers\.wo)", layer("self_attn.o_proj.weight", true)},
      {R"(layers\.ffn\.w1)", layer("mlp.gate_proj.weight", true)},
      {R"(layers\.ffn\.w3)", layer("mlp.up_proj.weight", true)},
      {R"(layers\.ffn\.w2)", layer("mlp.down_proj.weight", true)},
  });
}

}  // namespace graft::llama_train
