// Sampling from a Llama model.
//
// generate() keeps a token buffer of the final length [B, prompt + max_new] and, at each
// step, runs the forward pass over the whole buffer: causal attention means the positions
// after the current one (still padding) cannot change the logits read at it. The fixed shape
// lets one jit-compiled step serve every position (the position is an array argument), at
// the price of recomputing the context each step (no KV cache; fine for short samples).
#pragma once

#include <cstdint>

#include "core/array.h"
#include "nn/llama.h"

namespace graft::nn {

// logits [B, V] -> token ids [B] (i32). temperature == 0: argmax (greedy; top_k ignored).
// Otherwise a categorical draw from softmax(logits / temperature) restricted to the top_k
// largest logits (top_k == 0: no restriction; ties with the k-th value are kept).
Array sample_logits(const Array& logits, double temperature, int64_t top_k, const Array& key);

// prompt_tokens [B, P] (integers, P >= 1) -> [B, P + max_new_tokens] i32: the prompt
// followed by the sampled tokens. Step t draws with random::fold_in(key, P + t), so a fixed
// key gives a fixed result. Errors: graft::Error for bad shapes or arguments.
Array generate(const LlamaParams& params, const LlamaConfig& config, const Array& prompt_tokens,
               int64_t max_new_tokens, double temperature, int64_t top_k, const Array& key);

}  // namespace graft::nn
