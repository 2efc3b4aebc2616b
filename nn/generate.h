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
#include "core/ops.h"
#include "core/random/random.h"
#include "nn/llama.h"
#include "transforms/jit.h"

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

// Checks generate's arguments; returns the prompt padded with max_new_tokens zeros (i32).
Array generate_buffer(const Array& prompt_tokens, int64_t max_new_tokens, double temperature,
                      int64_t top_k, int64_t vocab_size);

// The same loop for any model: hidden(params, tokens [B, T]) -> [B, T, dim] and
// output_weight(params) -> [dim, vocab] (the MoE Llama uses it).
template <class Params, class HiddenFn, class OutputFn>
Array generate_with(const Params& params, HiddenFn hidden, OutputFn output_weight,
                    int64_t vocab_size, const Array& prompt_tokens, int64_t max_new_tokens,
                    double temperature, int64_t top_k, const Array& key) {
  Array buf = generate_buffer(prompt_tokens, max_new_tokens, temperature, top_k, vocab_size);
  const int64_t B = buf.shape()[0], P = prompt_tokens.shape()[1];
  auto step = jit([hidden, output_weight, temperature, top_k, B](
                      const Params& p, const Array& tokens, const Array& pos, const Array& k) {
    Array h = hidden(p, tokens);
    const int64_t D = h.shape()[2];
    Array last = reshape(dynamic_slice(h, {Array(0), pos - 1, Array(0)}, {B, 1, D}), {B, D});
    Array w = astype(output_weight(p), last.dtype());
    Array logits = dot_general(last, w, {{1}, {0}, {}, {}}, DType::kF32);
    Array next = sample_logits(logits, temperature, top_k, random::fold_in(k, pos));
    return dynamic_update_slice(tokens, reshape(next, {B, 1}), {Array(0), pos});
  });
  for (int64_t pos = P; pos < P + max_new_tokens; ++pos) {
    buf = step(params, buf, scalar(double(pos), DType::kI32), key);
  }
  return buf;
}

}  // namespace graft::nn
