#include "tests/transforms/pass_test_util.h"

#include <cmath>
#include <optional>
#include <random>

#include "core/ops.h"
#include "gtest/gtest.h"

namespace graft::pass_test {

Program program_of(const FlatFn& fn, const std::vector<Aval>& avals) {
  std::optional<Program> p = lower(trace_avals(fn, avals));
  EXPECT_TRUE(p.has_value());
  return p ? *p : Program{};
}

Aval f32(Shape s) { return Aval{std::move(s), DType::kF32, false}; }

Array randn(Shape s, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> d;
  std::vector<float> v(numel(s));
  for (float& e : v) e = d(rng);
  return array<float>(v, s);
}

void expect_close(const Array& a, const Array& b) {
  ASSERT_EQ(a.shape(), b.shape());
  auto u = a.to_vector<double>(), v = b.to_vector<double>();
  for (size_t i = 0; i < u.size(); ++i) EXPECT_NEAR(u[i], v[i], 1e-5 * (1 + std::abs(v[i])));
}

int count(const std::string& text, const std::string& what) {
  int n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

}  // namespace graft::pass_test
