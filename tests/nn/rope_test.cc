// Rotary embeddings against a per-element loop (HF rotate_half pairing: i with i + D/2),
// Llama 3 frequency scaling against hand-evaluated branches of Meta's apply_scaling, and the
// relative-position property.
#include "nn/rope.h"

#include <cmath>
#include <vector>

#include "core/ops.h"
#include "core/random/random.h"
#include "gtest/gtest.h"
#include "tests/util/test_vectors.h"

namespace graft::nn {
namespace {

using testing::expect_allclose;

TEST(RopeTest, InverseFrequencies) {
  std::vector<double> f = rope_inv_freq(8, 10000.0);
  ASSERT_EQ(f.size(), 4u);
  for (int i = 0; i < 4; ++i) EXPECT_NEAR(f[i], std::pow(10000.0, -i / 4.0), 1e-15);
  // Scaling with original_max 64, low 1, high 4: wavelengths 2 pi / f = 6.28 (< 16: kept),
  // 62.8 (between 16 and 64: blended), 628 and 6283 (> 64: divided by the factor 8).
  std::vector<double> s = rope_inv_freq(8, 10000.0, RopeScaling{8.0, 1.0, 4.0, 64});
  EXPECT_DOUBLE_EQ(s[0], 1.0);
  double smooth = (64.0 / (2 * M_PI / 0.1) - 1.0) / (4.0 - 1.0);
  EXPECT_NEAR(s[1], (1 - smooth) * 0.1 / 8 + smooth * 0.1, 1e-15);
  EXPECT_NEAR(s[2], 0.01 / 8, 1e-17);
  EXPECT_NEAR(s[3], 0.001 / 8, 1e-18);
  EXPECT_THROW(rope_inv_freq(7, 10000.0), Error);
  EXPECT_THROW(rope_inv_freq(8, 10000.0, RopeScaling{8.0, 2.0, 1.0, 64}), Error);
}

void check_against_loop(const std::optional<RopeScaling>& scaling, int64_t offset) {
  const int64_t B = 2, T = 5, H = 3, D = 8, P = 16;
  Array x = random::normal(random::key(1), {B, T, H, D});
  RopeTables tables = rope_tables(P, D, 500.0, scaling);
  Array got = apply_rope(x, tables, offset);
  std::vector<double> f = rope_inv_freq(D, 500.0, scaling);
  auto xv = x.to_vector<double>();
  std::vector<double> want(xv.size());
  for (int64_t b = 0; b < B; ++b)
    for (int64_t t = 0; t < T; ++t)
      for (int64_t h = 0; h < H; ++h) {
        const double* xr = &xv[((b * T + t) * H + h) * D];
        double* o = &want[((b * T + t) * H + h) * D];
        for (int64_t i = 0; i < D / 2; ++i) {
          double a = double(offset + t) * f[i];
          o[i] = xr[i] * std::cos(a) - xr[i + D / 2] * std::sin(a);
          o[i + D / 2] = xr[i + D / 2] * std::cos(a) + xr[i] * std::sin(a);
        }
      }
  expect_allclose(got, array(want, Shape{B, T, H, D}), 1e-5, 1e-6, "rope");
}

TEST(RopeTest, MatchesPerElementLoop) {
  check_against_loop(std::nullopt, 0);
  check_against_loop(std::nullopt, 7);
  check_against_loop(RopeScaling{4.0, 1.0, 4.0, 32}, 3);
}

TEST(RopeTest, ScoresDependOnRelativePositionOnly) {
  const int64_t D = 16;
  RopeTables tables = rope_tables(64, D, 10000.0);
  Array q = random::normal(random::key(2), {1, 1, 1, D});
  Array k = random::normal(random::key(3), {1, 1, 1, D});
  auto score = [&](int64_t m, int64_t n) {
    return sum(apply_rope(q, tables, m) * apply_rope(k, tables, n)).item<double>();
  };
  EXPECT_NEAR(score(10, 3), score(40, 33), 1e-5);
  EXPECT_NEAR(score(5, 5), sum(q * k).item<double>(), 1e-5);
  EXPECT_GT(std::abs(score(10, 3) - score(10, 4)), 1e-4);
}

TEST(RopeTest, DtypeAndErrors) {
  RopeTables tables = rope_tables(8, 4, 10000.0);
  Array xb = astype(random::normal(random::key(4), {1, 8, 2, 4}), DType::kBF16);
  EXPECT_EQ(apply_rope(xb, tables).dtype(), DType::kBF16);
  EXPECT_THROW(apply_rope(xb, tables, 1), Error);  // positions 1..8 exceed the 8 positions
  EXPECT_THROW(apply_rope(zeros({8, 2, 4}), tables), Error);
  EXPECT_THROW(apply_rope(zeros({1, 8, 2, 6}), tables), Error);
}

}  // namespace
}  // namespace graft::nn
