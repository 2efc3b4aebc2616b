// optax.losses, formula by formula (tests/optim/optax_parity_test.cc checks them against Optax).
#include "optim/losses.h"

#include "core/error.h"
#include "core/ops.h"

namespace graft::optim {
namespace {

void check_float(const char* op, const Array& x) {
  if (!is_floating(x.dtype())) fail(op, "expects floating-point input, got ", x.dtype());
}

Array errors(const char* op, const Array& predictions, const std::optional<Array>& targets) {
  check_float(op, predictions);
  if (!targets.has_value()) return predictions;
  if (targets->shape() != predictions.shape()) {
    fail(op, "predictions and targets have different shapes: ", shape_str(predictions.shape()),
         " vs ", shape_str(targets->shape()));
  }
  return predictions - *targets;
}

// jax.nn.log_sigmoid(x) = -softplus(-x), softplus(y) = logaddexp(y, 0) = y + log1p(exp(-y))
// for y > 0, log1p(exp(y)) otherwise. Each branch sees a clamped input so neither overflows,
// and the gradient at 0 is sigmoid(0) = 1/2 as in JAX (no max / abs kink).
Array log_sigmoid(const Array& x) {
  Array y = -x;
  Array pos = y > Array(0.0);
  Array zero = zeros_like(y);
  Array y_pos = where(pos, y, zero), y_neg = where(pos, zero, y);
  return -where(pos, y_pos + log1p(exp(-y_pos)), log1p(exp(y_neg)));
}

int64_t canonical_axis(const char* op, int64_t axis, int64_t ndim) {
  if (axis < -ndim || axis >= ndim) fail(op, "axis ", axis, " out of range for rank ", ndim);
  return axis < 0 ? axis + ndim : axis;
}

}  // namespace

Array squared_error(const Array& predictions, const std::optional<Array>& targets) {
  Array e = errors("squared_error", predictions, targets);
  return e * e;
}

Array l2_loss(const Array& predictions, const std::optional<Array>& targets) {
  Array e = errors("l2_loss", predictions, targets);
  return 0.5 * (e * e);
}

Array huber_loss(const Array& predictions, const std::optional<Array>& targets, double delta) {
  Array abs_errors = abs(errors("huber_loss", predictions, targets));
  Array quadratic = minimum(abs_errors, Array(delta));
  Array linear = abs_errors - quadratic;
  return 0.5 * (quadratic * quadratic) + delta * linear;
}

Array sigmoid_binary_cross_entropy(const Array& logits, const Array& labels) {
  check_float("sigmoid_binary_cross_entropy", logits);
  Array l = astype(labels, logits.dtype());
  return -l * log_sigmoid(logits) - (1.0 - l) * log_sigmoid(-logits);
}

Array softmax_cross_entropy(const Array& logits, const Array& labels, int64_t axis) {
  check_float("softmax_cross_entropy", logits);
  int64_t a = canonical_axis("softmax_cross_entropy", axis, logits.ndim());
  return -sum(labels * log_softmax(logits, a), {a});
}

Array softmax_cross_entropy_with_integer_labels(const Array& logits, const Array& labels,
                                                int64_t axis) {
  const char* op = "softmax_cross_entropy_with_integer_labels";
  check_float(op, logits);
  if (is_floating(labels.dtype()) || labels.dtype() == DType::kBool) {
    fail(op, "expects integer labels, got ", labels.dtype());
  }
  int64_t a = canonical_axis(op, axis, logits.ndim());
  Array label_logits = squeeze(take_along_axis(logits, expand_dims(labels, {a}), a), {a});
  return logsumexp(logits, {a}) - label_logits;
}

Array kl_divergence(const Array& log_predictions, const Array& targets, int64_t axis) {
  check_float("kl_divergence", log_predictions);
  check_float("kl_divergence", targets);
  int64_t a = canonical_axis("kl_divergence", axis, log_predictions.ndim());
  Array log_t = where(targets == Array(0.0), zeros_like(targets), log(targets));
  return sum(targets * (log_t - log_predictions), {a});
}

}  // namespace graft::optim
