// Small modules against plain loops over the same numbers: RMSNorm, LayerNorm, activations,
// Linear, SwiGLU, Embedding (forward, and its gradient as a scatter-add of cotangents).
#include <cmath>
#include <string>
#include <vector>

#include "core/ops.h"
#include "core/random/random.h"
#include "gtest/gtest.h"
#include "nn/activations.h"
#include "nn/embedding.h"
#include "nn/linear.h"
#include "nn/norm.h"
#include "nn/swiglu.h"
#include "tests/util/test_vectors.h"
#include "transforms/autodiff.h"

namespace graft::nn {
namespace {

using testing::expect_allclose;

Array randn(uint32_t seed, const Shape& s) { return random::normal(random::key(seed), s); }

TEST(NormTest, RmsNormMatchesLoop) {
  const int64_t R = 6, D = 8;
  Array x = randn(1, {2, 3, D}) * 3.0, w = randn(2, {D});
  auto xv = x.to_vector<double>(), wv = w.to_vector<double>();
  std::vector<double> want(R * D);
  for (int64_t r = 0; r < R; ++r) {
    double ms = 0;
    for (int64_t i = 0; i < D; ++i) ms += xv[r * D + i] * xv[r * D + i] / D;
    for (int64_t i = 0; i < D; ++i) want[r * D + i] = xv[r * D + i] / std::sqrt(ms + 1e-5) * wv[i];
  }
  expect_allclose(rms_norm(x, w, 1e-5), array(want, Shape{2, 3, D}), 1e-5, 1e-6, "rms_norm");
  expect_allclose(RMSNorm{w}(x), array(want, Shape{2, 3, D}), 1e-5, 1e-6, "RMSNorm");
  // bf16 in, bf16 out, statistics from the bf16 values computed in f32.
  Array xb = astype(x, DType::kBF16);
  Array yb = rms_norm(xb, w);
  EXPECT_EQ(yb.dtype(), DType::kBF16);
  expect_allclose(yb, rms_norm(astype(xb, DType::kF32), w), 8e-3, 1e-3, "bf16 rms_norm");
}

TEST(NormTest, LayerNormMatchesLoop) {
  const int64_t R = 4, D = 5;
  Array x = randn(3, {R, D}) + 2.0, w = randn(4, {D}), b = randn(5, {D});
  auto xv = x.to_vector<double>(), wv = w.to_vector<double>(), bv = b.to_vector<double>();
  std::vector<double> want(R * D), want_nb(R * D);
  for (int64_t r = 0; r < R; ++r) {
    double m = 0, v = 0;
    for (int64_t i = 0; i < D; ++i) m += xv[r * D + i] / D;
    for (int64_t i = 0; i < D; ++i) v += (xv[r * D + i] - m) * (xv[r * D + i] - m) / D;
    for (int64_t i = 0; i < D; ++i) {
      want_nb[r * D + i] = (xv[r * D + i] - m) / std::sqrt(v + 1e-5) * wv[i];
      want[r * D + i] = want_nb[r * D + i] + bv[i];
    }
  }
  expect_allclose(layer_norm(x, w, b), array(want, Shape{R, D}), 1e-5, 1e-5, "layer_norm");
  expect_allclose(LayerNorm{w, std::nullopt}(x), array(want_nb, Shape{R, D}), 1e-5, 1e-5,
                  "layer_norm no bias");
}

TEST(NormTest, Errors) {
  EXPECT_THROW(rms_norm(zeros({2, 4}), ones({3})), Error);
  try {
    layer_norm(zeros({2, 4}), ones({4}), ones({5}));
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("[layer_norm]", 0), 0u) << e.what();
  }
  EXPECT_THROW(rms_norm(zeros({2, 4}, DType::kI32), ones({4})), Error);
}

TEST(ActivationsTest, SiluAndGelu) {
  std::vector<double> xs = {-3.0, -1.0, -0.5, 0.0, 0.5, 1.0, 2.5};
  Array x = array(xs);
  std::vector<double> silu_want, exact, tanh_want;
  for (double v : xs) {
    silu_want.push_back(v / (1 + std::exp(-v)));
    exact.push_back(0.5 * v * std::erfc(-v / std::sqrt(2.0)));
    tanh_want.push_back(0.5 * v *
                        (1 + std::tanh(std::sqrt(2 / M_PI) * (v + 0.044715 * v * v * v))));
  }
  expect_allclose(silu(x), array(silu_want), 1e-12, 1e-14, "silu");
  expect_allclose(gelu(x, false), array(exact), 1e-12, 1e-14, "gelu exact");
  expect_allclose(gelu(x, true), array(tanh_want), 1e-12, 1e-14, "gelu tanh");
  // The two gelus differ (slightly) and gelu(1) = Phi(1) = 0.8413447460685429.
  EXPECT_NEAR(gelu(Array(1.0), false).item<double>(), 0.8413447460685429, 1e-12);
  EXPECT_GT(std::abs(gelu(Array(1.0), true).item<double>() - 0.8413447460685429), 1e-5);
}

TEST(LinearTest, MatchesLoopWithBiasAndCasts) {
  Array x = randn(6, {3, 4}), w = randn(7, {4, 5}), b = randn(8, {5});
  auto xv = x.to_vector<double>(), wv = w.to_vector<double>(), bv = b.to_vector<double>();
  std::vector<double> want(15);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 5; ++j) {
      double s = bv[j];
      for (int k = 0; k < 4; ++k) s += xv[i * 4 + k] * wv[k * 5 + j];
      want[i * 5 + j] = s;
    }
  expect_allclose(Linear{w, b}(x), array(want, Shape{3, 5}), 1e-5, 1e-6, "linear");
  Array yb = Linear{w, b}(astype(x, DType::kBF16));  // f32 params, bf16 compute
  EXPECT_EQ(yb.dtype(), DType::kBF16);
  expect_allclose(yb, array(want, Shape{3, 5}), 3e-2, 3e-2, "bf16 linear");
  Linear l = linear_init(random::key(0), 4, 5, true);
  EXPECT_EQ(l.w.shape(), (Shape{4, 5}));
  EXPECT_EQ(l.b->shape(), (Shape{5}));
  EXPECT_THROW((Linear{w, b}(zeros({3, 3}))), Error);
}

TEST(SwigluTest, MatchesLoop) {
  const int64_t D = 3, H = 4;
  SwiGLU p{randn(9, {D, H}), randn(10, {H, D}), randn(11, {D, H})};
  Array x = randn(12, {2, D});
  auto xv = x.to_vector<double>(), w1 = p.w1.to_vector<double>(), w2 = p.w2.to_vector<double>(),
       w3 = p.w3.to_vector<double>();
  std::vector<double> want(2 * D, 0.0);
  for (int r = 0; r < 2; ++r) {
    for (int j = 0; j < H; ++j) {
      double g = 0, u = 0;
      for (int k = 0; k < D; ++k) {
        g += xv[r * D + k] * w1[k * H + j];
        u += xv[r * D + k] * w3[k * H + j];
      }
      double a = g / (1 + std::exp(-g)) * u;
      for (int o = 0; o < D; ++o) want[r * D + o] += a * w2[j * D + o];
    }
  }
  expect_allclose(p(x), array(want, Shape{2, D}), 1e-5, 1e-6, "swiglu");
}

TEST(EmbeddingTest, ForwardReadsRowsAndGradientIsScatterAdd) {
  const int64_t V = 7, D = 3;
  Embedding e{randn(13, {V, D})};
  std::vector<int32_t> ids = {2, 5, 2, 0, 2, 6};  // 2 three times, 1 / 3 / 4 never
  Array tokens = array(ids, Shape{2, 3});
  Array out = e(tokens);
  ASSERT_EQ(out.shape(), (Shape{2, 3, D}));
  auto tv = e.table.to_vector<double>(), ov = out.to_vector<double>();
  for (size_t t = 0; t < ids.size(); ++t)
    for (int64_t d = 0; d < D; ++d) EXPECT_EQ(ov[t * D + d], tv[ids[t] * D + d]);

  // d/dtable sum(out * u): row r receives the sum of u over the positions holding r.
  Array u = randn(14, {2, 3, D});
  Embedding g = grad([&](const Embedding& p) { return sum(p(tokens) * u); })(e);
  auto uv = u.to_vector<double>();
  std::vector<double> want(V * D, 0.0);
  for (size_t t = 0; t < ids.size(); ++t)
    for (int64_t d = 0; d < D; ++d) want[ids[t] * D + d] += uv[t * D + d];
  expect_allclose(g.table, array(want, Shape{V, D}), 1e-6, 1e-7, "embedding grad");
  // With u = 1 the gradient counts occurrences.
  Embedding c = grad([&](const Embedding& p) { return sum(p(tokens)); })(e);
  auto cv = c.table.to_vector<double>();
  std::vector<double> counts = {1, 0, 3, 0, 0, 1, 1};
  for (int64_t r = 0; r < V; ++r) EXPECT_EQ(cv[r * D], counts[r]) << "row " << r;

  EXPECT_THROW(e(zeros({2}, DType::kF32)), Error);
  // Tied output: attend is x table^T.
  expect_allclose(e.attend(ones({1, D})), reshape(sum(e.table, {1}), {1, V}), 1e-6, 1e-6, "attend");
}

}  // namespace
}  // namespace graft::nn
