#include "nn/cross_entropy.h"

#include <tuple>

#include "core/error.h"
#include "core/ops.h"
#include "transforms/autodiff.h"
#include "transforms/control_flow.h"
#include "transforms/remat.h"

namespace graft::nn {

namespace {

// logsumexp over the last axis, computed as graft::logsumexp computes it (the max shift, with
// its gradient stopped, where finite), with the shift and the sum of exponentials marked by
// checkpoint_name: chunked_cross_entropy's checkpoint saves them (two floats per token), so
// its backward pass recomputes a chunk's logits but not their max and sum (two passes over
// [chunk, vocab] floats).
Array marked_logsumexp(const Array& lf) {
  Array m = stop_gradient(max(lf, {-1}, /*keepdims=*/true));
  m = checkpoint_name(where(isfinite(m), m, zeros_like(m)), "cross_entropy_max");
  Array s = checkpoint_name(sum(exp(lf - m), {-1}, /*keepdims=*/true), "cross_entropy_sum");
  return squeeze(log(s) + m, {-1});
}

}  // namespace

Array softmax_cross_entropy(const Array& logits, const Array& labels) {
  if (logits.ndim() < 1 || labels.ndim() != logits.ndim() - 1) {
    fail("softmax_cross_entropy", "labels ", shape_str(labels.shape()),
         " must be logits' shape without the class axis, logits ", shape_str(logits.shape()));
  }
  if (!is_integral(labels.dtype())) {
    fail("softmax_cross_entropy", "labels must be integers, got ", dtype_name(labels.dtype()));
  }
  Array lf = logits.dtype() == DType::kF32 ? logits : astype(logits, DType::kF32);
  Array picked = squeeze(take_along_axis(lf, expand_dims(labels, {-1}), -1), {-1});
  return marked_logsumexp(lf) - picked;
}

Array chunked_cross_entropy(const Array& hidden, const Array& w_out, const Array& labels,
                            const std::optional<Array>& mask, const CrossEntropyOptions& options) {
  const char* op = "chunked_cross_entropy";
  if (hidden.ndim() < 1 || w_out.ndim() != 2 || hidden.shape().back() != w_out.shape()[0]) {
    fail(op, "hidden ", shape_str(hidden.shape()), " and w_out ", shape_str(w_out.shape()),
         " do not match (want [..., D] and [D, V])");
  }
  Shape lead(hidden.shape().begin(), hidden.shape().end() - 1);
  if (labels.shape() != lead) {
    fail(op, "labels ", shape_str(labels.shape()), " must have shape ", shape_str(lead));
  }
  if (!is_integral(labels.dtype())) fail(op, "labels must be integers");
  if (mask && mask->shape() != lead) {
    fail(op, "mask ", shape_str(mask->shape()), " must have shape ", shape_str(lead));
  }
  if (options.chunk_tokens <= 0) fail(op, "chunk_tokens must be positive");
  const int64_t D = hidden.shape().back();
  const int64_t n = numel(lead);
  const int64_t chunk = std::min(options.chunk_tokens, std::max<int64_t>(n, 1));
  const int64_t n_chunks = (n + chunk - 1) / chunk, padded = n_chunks * chunk;

  Array h = reshape(hidden, {n, D});
  Array lab = reshape(astype(labels, DType::kI32), {n});
  Array weight = astype(not_equal(lab, Array(int(options.ignore_index))), DType::kF32);
  if (mask) weight = weight * astype(reshape(*mask, {n}), DType::kF32);
  // Ignored labels must still index a valid row (their weight is 0).
  lab = where(not_equal(lab, Array(int(options.ignore_index))), lab, Array(0));
  if (padded != n) {
    h = pad(h, {{0, padded - n}, {0, 0}});
    lab = pad(lab, {{0, padded - n}});
    weight = pad(weight, {{0, padded - n}});
  }
  Array w = w_out.dtype() == h.dtype() ? w_out : astype(w_out, h.dtype());
  auto xs = std::tuple{reshape(h, {n_chunks, chunk, D}), reshape(lab, {n_chunks, chunk}),
                       reshape(weight, {n_chunks, chunk})};

  // One chunk's weighted loss sum. Checkpointed: the backward pass recomputes its logits (and
  // reads their max and sum of exponentials, saved).
  auto chunk_loss = checkpoint(
      [](const Array& hc, const Array& wc, const Array& lc, const Array& mc) {
        Array logits = dot_general(hc, wc, {{1}, {0}, {}, {}}, DType::kF32);
        return sum(softmax_cross_entropy(logits, lc) * mc);
      },
      save_only_these_names({"cross_entropy_max", "cross_entropy_sum"}), "cross_entropy_chunk");
  auto [total, unused] = scan(
      [&](const Array& acc, const std::tuple<Array, Array, Array>& x) {
        auto& [hc, lc, mc] = x;
        return std::pair{acc + chunk_loss(hc, w, lc, mc), std::tuple<>{}};
      },
      zeros({}, DType::kF32), xs);
  Array count = sum(weight);
  return total / where(count > 0.0, count, Array(1.0f));
}

}  // namespace graft::nn
