// graft::random: statistical sanity, jax.random edge-case semantics, laziness and errors.
// (Bit-exactness against JAX is tests/core/random/random_test.cc.) Statistical bounds are about
// 6 standard errors wide, so a correct sampler fails them with probability < 1e-8, and
// the keys are fixed, so the tests are deterministic.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>

#include "core/ops.h"
#include "core/random/random.h"
#include "gtest/gtest.h"

namespace graft {
namespace {

using random::key;

constexpr int kN = 100000;

double mean_of(const std::vector<double>& v) {
  return std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
}
double var_of(const std::vector<double>& v) {
  double m = mean_of(v), s = 0;
  for (double x : v) s += (x - m) * (x - m);
  return s / static_cast<double>(v.size());
}

// Expects `f` to throw graft::Error whose message starts with "[op]".
template <typename F>
void expect_error(const std::string& op, F f) {
  try {
    f();
    ADD_FAILURE() << "expected graft::Error from " << op;
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("[" + op + "]", 0), 0u) << e.what();
  }
}

TEST(RandomStats, Uniform) {
  for (DType d : {DType::kF32, DType::kF64, DType::kF16, DType::kBF16}) {
    SCOPED_TRACE(dtype_name(d));
    auto v = random::uniform(key(1), {kN}, d, -2, 3).to_vector<double>();
    EXPECT_GE(*std::min_element(v.begin(), v.end()), -2.0);
    EXPECT_LT(*std::max_element(v.begin(), v.end()), 3.0);
    // Uniform on [-2, 3): mean 0.5, variance 25 / 12. bf16 has only 7 random bits, so
    // its mean sits 2.5 / 128 low (values k * 5 / 128 for k < 128).
    double want_mean = d == DType::kBF16 ? 0.5 - 2.5 / 128 : 0.5;
    EXPECT_NEAR(mean_of(v), want_mean, 6 * std::sqrt(25.0 / 12 / kN) + 0.01);
    EXPECT_NEAR(var_of(v), 25.0 / 12, 0.06);
  }
}

TEST(RandomStats, NormalMeanAndVariance) {
  for (DType d : {DType::kF32, DType::kF64, DType::kF16, DType::kBF16}) {
    SCOPED_TRACE(dtype_name(d));
    auto v = random::normal(key(2), {kN}, d).to_vector<double>();
    EXPECT_NEAR(mean_of(v), 0, 0.02);  // standard error 0.0032
    EXPECT_NEAR(var_of(v), 1, 0.03);   // standard error 0.0045
    for (double x : v) ASSERT_TRUE(std::isfinite(x));
  }
}

TEST(RandomStats, TruncatedNormalStaysInsideOpenInterval) {
  auto v = random::truncated_normal(key(3), -2, 1.5, {kN}).to_vector<double>();
  EXPECT_GT(*std::min_element(v.begin(), v.end()), -2.0);
  EXPECT_LT(*std::max_element(v.begin(), v.end()), 1.5);
  // Mean of N(0, 1) truncated to (-2, 1.5): (phi(-2) - phi(1.5)) / (Phi(1.5) - Phi(-2)).
  auto phi = [](double x) { return std::exp(-x * x / 2) / std::sqrt(2 * M_PI); };
  auto Phi = [](double x) { return 0.5 * std::erfc(-x / std::sqrt(2.0)); };
  EXPECT_NEAR(mean_of(v), (phi(-2) - phi(1.5)) / (Phi(1.5) - Phi(-2)), 0.02);
  // A narrow interval far in the tail still lands inside it.
  auto t = random::truncated_normal(key(4), 3, 3.1, {1000}).to_vector<double>();
  for (double x : t) ASSERT_TRUE(x > 3 && x < 3.1) << x;
}

TEST(RandomStats, BernoulliRate) {
  auto v = random::bernoulli(key(5), 0.3, {kN}).to_vector<double>();
  EXPECT_NEAR(mean_of(v), 0.3, 0.01);  // standard error 0.00145
  EXPECT_EQ(random::bernoulli(key(5), 0.0, {1000}).to_vector<double>(),
            std::vector<double>(1000, 0.0));
  EXPECT_EQ(random::bernoulli(key(5), 1.0, {1000}).to_vector<double>(),
            std::vector<double>(1000, 1.0));
}

// Array parameters: each element's own probability and bounds (the bits are checked against
// JAX in random_test); what JAX refuses is an error.
TEST(RandomStats, ArrayParameters) {
  const Array p = array<float>({0.0f, 1.0f, 0.25f});
  auto v = random::bernoulli(key(7), p, Shape{kN, 3}).to_vector<uint8_t>();
  double ones = 0;
  for (int64_t i = 0; i < kN; ++i) {
    ASSERT_FALSE(v[3 * i]);
    ASSERT_TRUE(v[3 * i + 1]);
    ones += v[3 * i + 2];
  }
  EXPECT_NEAR(ones / kN, 0.25, 0.01);
  auto u = random::uniform(key(8), {kN, 2}, DType::kF32, array<float>({-3, 10}),
                           array<float>({-2, 10.5f})).to_vector<float>();
  for (int64_t i = 0; i < kN; ++i) {
    ASSERT_TRUE(u[2 * i] >= -3 && u[2 * i] < -2) << u[2 * i];
    ASSERT_TRUE(u[2 * i + 1] >= 10 && u[2 * i + 1] < 10.5f) << u[2 * i + 1];
  }
  expect_error("bernoulli", [] { random::bernoulli(key(0), array<int32_t>({1})); });
  expect_error("bernoulli",
               [] { random::bernoulli(key(0), array<float>({0.5f, 0.5f}), Shape{3}); });
  expect_error("uniform", [] {
    random::uniform(key(0), {2}, DType::kF32, array<float>({0, 0, 0}), 1.0);
  });
}

TEST(RandomStats, RandintRangeAndBuckets) {
  auto v = random::randint(key(6), {kN}, -3, 7).to_vector<int32_t>();
  std::vector<int> count(10);
  for (int32_t x : v) {
    ASSERT_TRUE(x >= -3 && x < 7) << x;
    ++count[x + 3];
  }
  for (int c : count) EXPECT_NEAR(c, kN / 10, 6 * std::sqrt(kN * 0.09));
  // u8 with maxval 256 covers the whole type; u32 spans beyond i32.
  auto b = random::randint(key(7), {5000}, 0, 256, DType::kU8).to_vector<int>();
  EXPECT_EQ(*std::max_element(b.begin(), b.end()), 255);
  EXPECT_EQ(*std::min_element(b.begin(), b.end()), 0);
  auto u = random::randint(key(8), {1000}, 4000000000LL, 4000000010LL, DType::kU32)
               .to_vector<uint32_t>();
  for (uint32_t x : u) ASSERT_TRUE(x >= 4000000000u && x < 4000000010u) << x;
}

TEST(RandomStats, GumbelAndCategorical) {
  auto g = random::gumbel(key(9), {kN}).to_vector<double>();
  EXPECT_NEAR(mean_of(g), 0.5772156649, 0.025);  // Euler's gamma; sd pi / sqrt(6)
  // Categorical frequencies follow softmax(logits).
  std::vector<float> logits = {0.0f, 1.0f, -1.0f, 2.0f};
  auto c = random::categorical(key(10), array<float>(logits), -1, Shape{kN}).to_vector<int>();
  double z = 0;
  for (float l : logits) z += std::exp(l);
  std::vector<int> count(4);
  for (int x : c) ++count.at(x);
  for (int k = 0; k < 4; ++k) {
    double p = std::exp(logits[k]) / z;
    EXPECT_NEAR(count[k], kN * p, 6 * std::sqrt(kN * p * (1 - p))) << k;
  }
}

TEST(RandomStats, PermutationIsAPermutation) {
  // 1 sort round up to n = 1625, 2 rounds from 1626.
  for (int64_t n : {2, 10, 1625, 1626, 5000}) {
    SCOPED_TRACE(n);
    auto p = random::permutation(key(11), n).to_vector<int>();
    std::vector<int> s = p;
    std::sort(s.begin(), s.end());
    std::vector<int> want(n);
    std::iota(want.begin(), want.end(), 0);
    EXPECT_EQ(s, want);
    if (n >= 10) {
      EXPECT_NE(p, want);
    }
  }
}

TEST(RandomSemantics, PermutationOfArrays) {
  // Rows move together; with independent, each row is shuffled on its own.
  Array x = reshape(arange(12), {3, 4});
  auto rows = random::permutation(key(12), x).to_vector<int>();
  auto idx = random::permutation(key(12), 3).to_vector<int>();
  for (int r = 0; r < 3; ++r) {
    for (int j = 0; j < 4; ++j) EXPECT_EQ(rows[r * 4 + j], idx[r] * 4 + j);
  }
  auto cols = random::permutation(key(12), x, 1).to_vector<int>();
  for (int r = 0; r < 3; ++r) {
    std::vector<int> row(cols.begin() + r * 4, cols.begin() + r * 4 + 4);
    for (int j = 0; j < 4; ++j) EXPECT_EQ(row[j] / 4, r);
  }
  auto ind =
      random::permutation(key(13), reshape(arange(400), {4, 100}), -1, true).to_vector<int>();
  std::vector<int> first(ind.begin(), ind.begin() + 100),
      second(ind.begin() + 100, ind.begin() + 200);
  for (int& v : second) v -= 100;
  EXPECT_NE(first, second);  // the rows got different shuffles
  std::sort(first.begin(), first.end());
  EXPECT_EQ(first.front(), 0);
  EXPECT_EQ(first.back(), 99);
  // n <= 1: no rounds, the input comes back unchanged.
  EXPECT_EQ(random::permutation(key(14), 1).to_vector<int>(), std::vector<int>{0});
  EXPECT_EQ(random::permutation(key(14), 0).size(), 0);
}

TEST(RandomSemantics, RandintEdgeCases) {
  // maxval <= minval gives minval (jax semantics, not an error).
  EXPECT_EQ(random::randint(key(15), {4}, 5, 5).to_vector<int>(), std::vector<int>(4, 5));
  EXPECT_EQ(random::randint(key(15), {4}, 5, -3).to_vector<int>(), std::vector<int>(4, 5));
  // Bounds clip to the dtype.
  auto v = random::randint(key(16), {1000}, -100, 3, DType::kU8).to_vector<int>();
  for (int x : v) ASSERT_TRUE(x >= 0 && x < 3) << x;
  EXPECT_EQ(random::randint(key(16), {3}, 300, 400, DType::kU8).to_vector<int>(),
            std::vector<int>(3, 255));
}

TEST(RandomSemantics, ShapesDtypesAndEmpty) {
  EXPECT_EQ(random::split(key(0), 0).shape(), (Shape{0, 2}));
  EXPECT_EQ(random::split(key(0), Shape{2, 3}).shape(), (Shape{2, 3, 2}));
  EXPECT_EQ(random::uniform(key(0), {3, 0}).size(), 0);
  EXPECT_EQ(random::normal(key(0), {0}, DType::kBF16).dtype(), DType::kBF16);
  EXPECT_EQ(random::uniform(key(0)).shape(), Shape{});
  EXPECT_EQ(random::bits(key(0), {2}, DType::kU8).dtype(), DType::kU8);
  EXPECT_EQ(random::bernoulli(key(0)).dtype(), DType::kBool);
  EXPECT_EQ(random::categorical(key(0), zeros({2, 3, 4}), 1).shape(), (Shape{2, 4}));
  EXPECT_EQ(random::categorical(key(0), zeros({2, 3}), 0, Shape{5, 3}).shape(), (Shape{5, 3}));
  // Every class index is in range for a non-default axis.
  auto c = random::categorical(key(1), zeros({6, 2}), 0, Shape{50, 2}).to_vector<int>();
  for (int x : c) ASSERT_TRUE(x >= 0 && x < 6);
  // Keys are values: the same key gives the same draw, split keys differ.
  EXPECT_EQ(random::normal(key(3), {5}).to_vector<float>(),
            random::normal(key(3), {5}).to_vector<float>());
}

// Draws are lazy graphs: nothing is computed when they are built, and they trace through a
// placeholder key (what jit / vmap rely on).
TEST(RandomSemantics, DrawsAreLazyAndTraceable) {
  Array n = random::normal(key(1), {1000});
  EXPECT_FALSE(n.is_evaluated());
  Array k = Array::placeholder(Aval{{2}, DType::kU32});
  for (Array a : {random::normal(k, {4, 3}), random::uniform(k, {5}, DType::kF16, -1, 2),
                  random::randint(k, {7}, 0, 9), random::permutation(k, 20),
                  random::categorical(k, zeros({3, 4})), random::split(k, 3),
                  random::truncated_normal(k, -1, 1, {2})}) {
    EXPECT_TRUE(a.is_tracer());
  }
  EXPECT_EQ(random::normal(k, {4, 3}).shape(), (Shape{4, 3}));
}

TEST(RandomErrors, BadKeys) {
  expect_error("split", [] { random::split(zeros({3}, DType::kU32)); });
  expect_error("split", [] { random::split(zeros({2}, DType::kF32)); });
  expect_error("split", [] { random::split(Array()); });
  expect_error("uniform", [] { random::uniform(zeros({2, 2}, DType::kU32)); });
  expect_error("normal", [] { random::normal(zeros({2}, DType::kI32)); });
  expect_error("fold_in", [] { random::fold_in(zeros({1, 2}, DType::kU32), 3u); });
  expect_error("randint", [] { random::randint(zeros({}, DType::kU32), {2}, 0, 3); });
  expect_error("permutation", [] { random::permutation(zeros({4}, DType::kU32), 3); });
  expect_error("categorical", [] { random::categorical(zeros({2}, DType::kU8), zeros({3})); });
}

TEST(RandomErrors, BadArguments) {
  Array k = key(0);
  expect_error("split", [&] { random::split(k, -1); });
  expect_error("uniform", [&] { random::uniform(k, {-1}); });
  expect_error("uniform", [&] { random::uniform(k, {2}, DType::kI32); });
  expect_error("normal", [&] { random::normal(k, {2}, DType::kBool); });
  expect_error("gumbel", [&] { random::gumbel(k, {2}, DType::kU8); });
  expect_error("truncated_normal", [&] { random::truncated_normal(k, NAN, 1); });
  expect_error("bits", [&] { random::bits(k, {2}, DType::kF32); });
  expect_error("bits", [&] { random::detail::random_bits(k, 12, {2}); });
  expect_error("randint", [&] { random::randint(k, {2}, 0, 5, DType::kF32); });
  expect_error("randint", [&] { random::randint(k, {2}, 0, 5, DType::kI64); });
  expect_error("randint", [&] { random::randint(k, {-2}, 0, 5); });
  expect_error("fold_in", [&] { random::fold_in(k, zeros({2}, DType::kI32)); });
  expect_error("fold_in", [&] { random::fold_in(k, scalar(1.5, DType::kF32)); });
  expect_error("categorical", [&] { random::categorical(k, zeros({3}, DType::kI32)); });
  expect_error("categorical", [&] { random::categorical(k, zeros({2, 3}), 2); });
  expect_error("categorical", [&] { random::categorical(k, zeros({2, 3}), -1, Shape{4}); });
  expect_error("categorical", [&] { random::categorical(k, zeros({2, 3}), -1, Shape{}); });
  expect_error("categorical", [&] { random::categorical(k, zeros({})); });
  expect_error("permutation", [&] { random::permutation(k, scalar(5, DType::kI32)); });
  expect_error("permutation", [&] { random::permutation(k, zeros({3}), 1); });
}

TEST(RandomErrors, Threefry) {
  Array u = zeros({}, DType::kU32), v = zeros({3}, DType::kU32);
  expect_error("threefry2x32", [&] { random::threefry2x32(u, u, v, zeros({3}, DType::kI32)); });
  expect_error("threefry2x32", [&] { random::threefry2x32(u, u, v, zeros({4}, DType::kU32)); });
  // Key words must be scalars or have the counters' shape (checked by the shape rule).
  expect_error("threefry2x32", [&] { random::threefry2x32(zeros({2}, DType::kU32), u, v, v); });
}

}  // namespace
}  // namespace graft
