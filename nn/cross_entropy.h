// Token cross-entropy losses.
//
// chunked_cross_entropy computes the language-model loss from the final hidden states and
// the output weight without ever holding the full [tokens, vocab] logits for the backward
// pass: tokens are cut into chunks, a `scan` runs over the chunks, and its body (logits of
// one chunk, log-sum-exp, the label's logit) is wrapped in `checkpoint`, so the backward pass
// recomputes one chunk's logits at a time (saved: each token's max logit and sum of
// exponentials, so those are not recomputed). Peak extra memory is O(chunk * vocab) instead of
// O(tokens * vocab). Logits and the softmax are computed in f32 even for bf16 hidden states.
#pragma once

#include <cstdint>
#include <optional>

#include "core/array.h"

namespace graft::nn {

inline constexpr int64_t kIgnoreIndex = -100;  // labels equal to this are not counted

// logits [..., V] (any float dtype), labels [...] integers -> per-token loss [...] in f32:
// logsumexp(logits) - logits[label] (optax.softmax_cross_entropy_with_integer_labels).
// Labels outside [0, V) give NaN.
Array softmax_cross_entropy(const Array& logits, const Array& labels);

struct CrossEntropyOptions {
  int64_t chunk_tokens = 1024;  // tokens per chunk (the last chunk is padded)
  int64_t ignore_index = kIgnoreIndex;
};

// hidden [..., D], w_out [D, V], labels [...] (hidden's leading shape), optional mask [...]
// (bool or float: a token counts when mask != 0; floats weight it). Returns the mean loss over
// counted tokens (labels != ignore_index and mask != 0) as an f32 scalar; 0 if none count.
// w_out is cast to hidden's dtype for the matmul (bf16 compute); accumulation is f32.
Array chunked_cross_entropy(const Array& hidden, const Array& w_out, const Array& labels,
                            const std::optional<Array>& mask = std::nullopt,
                            const CrossEntropyOptions& options = {});

}  // namespace graft::nn
