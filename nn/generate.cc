#include "nn/generate.h"

#include <cmath>

#include "core/error.h"
#include "core/ops.h"
#include "core/random/random.h"
#include "transforms/jit.h"

namespace graft::nn {

Array sample_logits(const Array& logits, double temperature, int64_t top_k, const Array& key) {
  if (logits.ndim() != 2)
    fail("sample_logits", "logits must be [B, V], got ", shape_str(logits.shape()));
  if (!(temperature >= 0)) fail("sample_logits", "temperature must be >= 0, got ", temperature);
  if (top_k < 0) fail("sample_logits", "top_k must be >= 0, got ", top_k);
  const int64_t V = logits.shape()[1];
  Array l = astype(logits, DType::kF32);
  if (temperature == 0) return argmax(l, -1);
  l = l / temperature;
  if (top_k > 0 && top_k < V) {
    Array kth = slice_axis(sort(l, -1), -1, V - top_k, V - top_k + 1);  // [B, 1]
    l = where(l < kth, full({}, -INFINITY), l);
  }
  return astype(random::categorical(key, l, -1), DType::kI32);
}

Array generate_buffer(const Array& prompt_tokens, int64_t max_new_tokens, double temperature,
                      int64_t top_k, int64_t vocab_size) {
  if (prompt_tokens.ndim() != 2 || prompt_tokens.shape()[1] < 1 ||
      !is_integral(prompt_tokens.dtype())) {
    fail("generate", "prompt_tokens must be integer [batch, P >= 1], got ",
         shape_str(prompt_tokens.shape()));
  }
  if (max_new_tokens < 0) fail("generate", "max_new_tokens must be >= 0");
  if (!(temperature >= 0)) fail("generate", "temperature must be >= 0, got ", temperature);
  if (top_k < 0 || top_k > vocab_size) {
    fail("generate", "top_k must be in [0, vocab_size], got ", top_k);
  }
  Array buf = astype(prompt_tokens, DType::kI32);
  if (max_new_tokens == 0) return buf;
  return pad(buf, {{0, 0}, {0, max_new_tokens}});
}

Array generate(const LlamaParams& params, const LlamaConfig& c, const Array& prompt_tokens,
               int64_t max_new_tokens, double temperature, int64_t top_k, const Array& key) {
  c.validate();
  return generate_with(
      params, [c](const LlamaParams& p, const Array& t) { return llama_hidden(p, t, c); },
      [c](const LlamaParams& p) { return llama_output_weight(p, c); }, c.vocab_size, prompt_tokens,
      max_new_tokens, temperature, top_k, key);
}

}  // namespace graft::nn
