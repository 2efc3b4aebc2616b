// Cross-entropy: the plain version against a log-sum-exp loop in double; the chunked version
// (scan over token chunks with a checkpointed body) against the plain one in value and
// gradient, with masks, ignored labels and padded last chunks.
#include "nn/cross_entropy.h"

#include <cmath>
#include <optional>
#include <vector>

#include "core/ops.h"
#include "core/random/random.h"
#include "gtest/gtest.h"
#include "tests/util/test_vectors.h"
#include "transforms/autodiff.h"
#include "transforms/remat.h"

namespace graft::nn {
namespace {

using testing::expect_allclose;

TEST(CrossEntropyTest, PlainMatchesLoop) {
  const int64_t N = 5, V = 7;
  Array logits = random::normal(random::key(0), {N, V}) * 3.0;
  std::vector<int32_t> lab = {0, 6, 3, 3, 1};
  Array got = softmax_cross_entropy(logits, array(lab));
  auto lv = logits.to_vector<double>();
  std::vector<double> want(N);
  for (int64_t i = 0; i < N; ++i) {
    double m = -1e300, s = 0;
    for (int64_t j = 0; j < V; ++j) m = std::max(m, lv[i * V + j]);
    for (int64_t j = 0; j < V; ++j) s += std::exp(lv[i * V + j] - m);
    want[i] = m + std::log(s) - lv[i * V + lab[i]];
  }
  expect_allclose(got, array(want), 1e-5, 1e-6, "softmax_cross_entropy");
  EXPECT_THROW(softmax_cross_entropy(logits, zeros({N}, DType::kF32)), Error);
  EXPECT_THROW(softmax_cross_entropy(logits, zeros({N, 1}, DType::kI32)), Error);
}

// The reference: full logits, per-token loss, weighted mean.
Array plain_loss(const Array& h, const Array& w, const Array& labels, const Array& weight) {
  Array logits = matmul(h, w);
  Array safe = where(labels == -100, Array(0), labels);
  return sum(softmax_cross_entropy(logits, safe) * weight) / sum(weight);
}

TEST(CrossEntropyTest, ChunkedEqualsPlainInValueAndGradient) {
  const int64_t B = 3, T = 7, D = 6, V = 11;
  Array h = random::normal(random::key(1), {B, T, D});
  Array w = random::normal(random::key(2), {D, V}) * 0.5;
  Array labels = random::randint(random::key(3), {B, T}, 0, V);
  // Ignore two labels with -100 and mask out row 2's last three tokens.
  labels = dynamic_update_slice(labels, full({1, 2}, -100, DType::kI32), {Array(1), Array(4)});
  Array mask =
      astype(less(iota(DType::kI32, {B, T}, 1) + 10 * iota(DType::kI32, {B, T}, 0), Array(24)),
             DType::kF32);
  Array weight = mask * astype(labels != -100, DType::kF32);
  ASSERT_EQ(sum(weight).item<double>(), 21 - 2 - 3);

  auto ref = value_and_grad(
      [&](const Array& hh, const Array& ww) { return plain_loss(hh, ww, labels, weight); },
      argnums<0, 1>)(h, w);
  for (int64_t chunk : {1, 4, 8, 21, 100}) {
    SCOPED_TRACE("chunk " + std::to_string(chunk));
    auto got = value_and_grad(
        [&](const Array& hh, const Array& ww) {
          return chunked_cross_entropy(hh, ww, labels, mask, {.chunk_tokens = chunk});
        },
        argnums<0, 1>)(h, w);
    expect_allclose(got.first, ref.first, 1e-5, 0, "value");
    expect_allclose(std::get<0>(got.second), std::get<0>(ref.second), 1e-5, 1e-7, "d hidden");
    expect_allclose(std::get<1>(got.second), std::get<1>(ref.second), 1e-5, 1e-7, "d w");
  }
  // A bool mask works like the float one.
  expect_allclose(chunked_cross_entropy(h, w, labels, mask > 0.0, {.chunk_tokens = 4}), ref.first,
                  1e-5, 0, "bool mask");
}

TEST(CrossEntropyTest, ChunkedKeepsOnlyOneChunkOfLogits) {
  // What the backward pass keeps: no [tokens, vocab] array among the saved residuals.
  const int64_t N = 64, D = 8, V = 512;
  Array h = random::normal(random::key(4), {N, D});
  Array w = random::normal(random::key(5), {D, V});
  Array labels = random::randint(random::key(6), {N}, 0, V);
  auto loss = [&](const Array& hh, const Array& ww) {
    return chunked_cross_entropy(hh, ww, labels, std::nullopt, {.chunk_tokens = 16});
  };
  int64_t biggest = 0;
  int per_token = 0;  // the max logit and sum of exponentials of each token, for each chunk
  for (const SavedResidual& r : saved_residuals(loss, h, w)) {
    biggest = std::max(biggest, r.bytes);
    per_token += r.aval.shape == Shape{N / 16, 16, 1} && r.aval.dtype == DType::kF32;
  }
  EXPECT_LT(biggest, N * V * 4 / 2) << print_saved_residuals(loss, h, w);
  EXPECT_EQ(per_token, 2) << print_saved_residuals(loss, h, w);
}

TEST(CrossEntropyTest, AllMaskedGivesZeroAndErrors) {
  Array h = ones({2, 3}), w = ones({3, 4});
  Array labels = full({2}, -100, DType::kI32);
  auto [v, g] =
      value_and_grad([&](const Array& hh) { return chunked_cross_entropy(hh, w, labels); })(h);
  EXPECT_EQ(v.item<double>(), 0.0);
  EXPECT_EQ(max(abs(g)).item<double>(), 0.0);
  EXPECT_THROW(chunked_cross_entropy(h, ones({4, 4}), labels), Error);
  EXPECT_THROW(chunked_cross_entropy(h, w, full({3}, 0, DType::kI32)), Error);
  EXPECT_THROW(chunked_cross_entropy(h, w, labels, ones({3})), Error);
  EXPECT_THROW(chunked_cross_entropy(h, w, labels, std::nullopt, {.chunk_tokens = 0}), Error);
}

}  // namespace
}  // namespace graft::nn
