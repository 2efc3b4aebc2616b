// Losses with optax.losses' names and semantics: each returns the loss per element (l2_loss,
// huber_loss, sigmoid_binary_cross_entropy) or per example (reduced over the class `axis`:
// softmax_cross_entropy, softmax_cross_entropy_with_integer_labels, kl_divergence), never a
// mean; average with mean() as in Optax. All are traceable and differentiable ops.
//
//   Array loss = mean(graft::optim::softmax_cross_entropy_with_integer_labels(logits, labels));
//
// nn::softmax_cross_entropy (nn/cross_entropy.h) is the same integer-label loss for the last
// axis, computed in f32; nn::chunked_cross_entropy is the memory-lean LM loss.
#pragma once

#include <optional>

#include "core/array.h"

namespace graft::optim {

// 0.5 * (predictions - targets)^2 (targets none: 0).
Array l2_loss(const Array& predictions, const std::optional<Array>& targets = std::nullopt);
// (predictions - targets)^2.
Array squared_error(const Array& predictions, const std::optional<Array>& targets = std::nullopt);
// Quadratic 0.5 * e^2 for |e| <= delta, linear delta * (|e| - 0.5 * delta) beyond.
Array huber_loss(const Array& predictions, const std::optional<Array>& targets = std::nullopt,
                 double delta = 1.0);
// -labels * log_sigmoid(logits) - (1 - labels) * log_sigmoid(-logits), elementwise; labels
// (probabilities in [0, 1]) are cast to the logits' dtype.
Array sigmoid_binary_cross_entropy(const Array& logits, const Array& labels);
// -sum(labels * log_softmax(logits, axis), axis): labels are probabilities over `axis`.
Array softmax_cross_entropy(const Array& logits, const Array& labels, int64_t axis = -1);
// logsumexp(logits, axis) - logits[label] with integer labels (logits' shape without `axis`).
Array softmax_cross_entropy_with_integer_labels(const Array& logits, const Array& labels,
                                                int64_t axis = -1);
// sum(targets * (log(targets) - log_predictions), axis), with 0 * log 0 = 0: KL(targets ||
// predictions) for log-probability predictions and probability targets.
Array kl_divergence(const Array& log_predictions, const Array& targets, int64_t axis = -1);

}  // namespace graft::optim
