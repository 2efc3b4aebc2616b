// Initializer statistics against their closed forms (sample of 40000 values: the standard
// error of a std estimate is ~0.35%), fans, and errors.
#include "nn/init.h"

#include <cmath>

#include "core/ops.h"
#include "core/random/random.h"
#include "gtest/gtest.h"

namespace graft::nn {
namespace {

double stdev(const Array& a) { return std::sqrt(var(a).item<double>()); }
double absmax(const Array& a) { return max(abs(a)).item<double>(); }

TEST(InitTest, Fans) {
  EXPECT_EQ(compute_fans({100, 400}), (std::pair<double, double>{100, 400}));
  EXPECT_EQ(compute_fans({3, 3, 16, 32}), (std::pair<double, double>{144, 288}));
  EXPECT_EQ(compute_fans({7}), (std::pair<double, double>{7, 7}));
  EXPECT_THROW(compute_fans({}), Error);
}

TEST(InitTest, NormalAndTruncated) {
  Array k = random::key(0);
  Array n = normal_init(k, {200, 200}, 0.02);
  EXPECT_NEAR(stdev(n), 0.02, 0.0003);
  EXPECT_NEAR(mean(n).item<double>(), 0.0, 0.0003);
  Array t = truncated_normal_init(k, {200, 200}, 0.02);
  EXPECT_LT(absmax(t), 0.04);                    // truncated at 2 std
  EXPECT_NEAR(stdev(t), 0.02 * 0.8796, 0.0003);  // std of N(0,1) on (-2, 2)
  EXPECT_EQ(normal_init(k, {4}, 1.0, DType::kBF16).dtype(), DType::kBF16);
}

TEST(InitTest, XavierAndKaiming) {
  Array k = random::key(1);
  const Shape s = {100, 400};
  // Glorot: var = 2 / (fan_in + fan_out) = 0.004.
  Array xu = xavier_uniform(k, s);
  EXPECT_LE(absmax(xu), std::sqrt(6.0 / 500));
  EXPECT_GT(absmax(xu), 0.99 * std::sqrt(6.0 / 500));
  EXPECT_NEAR(stdev(xu), std::sqrt(0.004), 0.0007);
  Array xn = xavier_normal(k, s);
  EXPECT_NEAR(stdev(xn), std::sqrt(0.004), 0.0007);
  EXPECT_LT(absmax(xn), 2 * std::sqrt(0.004) / 0.8796 + 1e-6);
  // He: var = 2 / fan_in (0.02), or 2 / fan_out (0.005).
  EXPECT_NEAR(stdev(kaiming_normal(k, s)), std::sqrt(0.02), 0.0015);
  EXPECT_NEAR(stdev(kaiming_normal(k, s, FanMode::kFanOut)), std::sqrt(0.005), 0.0007);
  Array ku = kaiming_uniform(k, s);
  EXPECT_LE(absmax(ku), std::sqrt(6.0 / 100));
  EXPECT_NEAR(stdev(ku), std::sqrt(0.02), 0.0015);
  EXPECT_NEAR(stdev(variance_scaling(k, s, 1.0, FanMode::kFanIn, Distribution::kNormal)),
              std::sqrt(0.01), 0.0005);
  EXPECT_THROW(variance_scaling(k, s, -1.0, FanMode::kFanIn, Distribution::kNormal), Error);
  EXPECT_THROW(kaiming_normal(k, {0, 4}), Error);  // fan_in 0
}

}  // namespace
}  // namespace graft::nn
