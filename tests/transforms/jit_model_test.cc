// Model-based test of jit: random well-typed programs (elementwise, reductions, shape ops,
// matmul, constants, repeated sub-expressions and algebraic identities, 1-200 nodes) from
// fixed seeds. For each: jit(f) == f (on two sets of inputs, the second a cache hit),
// grad(jit(f)) == grad(f) and jit(grad(f)) == grad(f).
#include <cmath>
#include <random>
#include <vector>

#include "core/ops.h"
#include "gtest/gtest.h"
#include "transforms/autodiff.h"
#include "transforms/jit.h"

namespace graft {
namespace {

// Builds the same program every time it is called with arrays of the same shapes: every
// choice depends on the seed and the shapes only.
std::vector<Array> random_program(uint32_t seed, const Array& x, const Array& y) {
  std::mt19937 rng(seed);
  auto pick = [&](size_t n) { return static_cast<size_t>(rng() % n); };
  std::vector<Array> pool{x, y};
  auto same_shape = [&](const Array& a) {
    std::vector<size_t> c;
    for (size_t i = 0; i < pool.size(); ++i) {
      if (pool[i].shape() == a.shape()) c.push_back(i);
    }
    return pool[c[pick(c.size())]];
  };
  int nodes = 1 + static_cast<int>(pick(200));
  for (int i = 0; i < nodes; ++i) {
    Array a = pool[pool.size() - 1 - pick(std::min<size_t>(pool.size(), 6))];
    Array r;
    switch (pick(14)) {
      case 0:
        r = tanh(a);
        break;
      case 1:
        r = sin(a);
        break;
      case 2:
        r = sigmoid(a) - 0.5;
        break;
      case 3:
        r = a + same_shape(a);
        break;
      case 4:
        r = a * same_shape(a);
        break;
      case 5:
        r = maximum(a, same_shape(a) * 0.5);
        break;
      case 6:
        r = (a * 1.0 + 0.0) - 0.0;
        break;  // identities
      case 7:
        r = a * (ones(a.shape()) * 0.5 + 0.25);
        break;  // a constant sub-graph
      case 8:
        r = tanh(a) + tanh(a);
        break;  // a repeated sub-expression
      case 9:
        if (a.ndim() == 0) {
          r = -a;
          break;
        }
        r = mean(a, {static_cast<int64_t>(pick(a.ndim()))}, pick(2) == 0);
        break;
      case 10:
        r = a.ndim() == 2 ? transpose(a) + transpose(transpose(transpose(a))) : -a;
        break;
      case 11:
        r = a.ndim() == 0 ? a * 0.5 : reshape(a, {a.size()});
        break;
      case 12:
        if (a.ndim() == 2) {
          r = matmul(a, transpose(a)) * 0.1;
        } else if (a.ndim() == 1) {
          r = reshape(reshape(a, {1, a.size()}), {a.size(), 1});
        } else {
          r = a * y;
        }
        break;
      default:
        r = astype(cos(a), DType::kF32);
        break;
    }
    pool.push_back(r);
  }
  return {pool[pool.size() - 1], pool[pool.size() - 2], pool[pool.size() / 2]};
}

Array scalar_program(uint32_t seed, const Array& x, const Array& y) {
  Array s = Array(0.0f);
  for (const Array& v : random_program(seed, x, y)) s = s + mean(v);
  return s;
}

Array randn(Shape s, std::mt19937& rng) {
  std::normal_distribution<float> d;
  std::vector<float> v(numel(s));
  for (float& e : v) e = d(rng);
  return array<float>(v, s);
}

void expect_close(const Array& a, const Array& b, uint32_t seed) {
  ASSERT_EQ(a.shape(), b.shape()) << "seed " << seed;
  ASSERT_EQ(a.dtype(), b.dtype()) << "seed " << seed;
  auto u = a.to_vector<double>(), v = b.to_vector<double>();
  for (size_t i = 0; i < u.size(); ++i) {
    ASSERT_NEAR(u[i], v[i], 1e-5 * (1 + std::abs(v[i]))) << "seed " << seed << " element " << i;
  }
}

TEST(JitModelTest, RandomProgramsMatchEager) {
  std::mt19937 data(7);
  for (uint32_t seed = 0; seed < 300; ++seed) {
    auto f = [seed](const Array& x, const Array& y) { return random_program(seed, x, y); };
    auto fs = [seed](const Array& x, const Array& y) { return scalar_program(seed, x, y); };
    auto jf = jit(f);
    for (int call = 0; call < 2; ++call) {
      Array x = randn({3, 4}, data), y = randn({3, 4}, data);
      std::vector<Array> want = f(x, y), got = jf(x, y);
      ASSERT_EQ(got.size(), want.size());
      for (size_t i = 0; i < got.size(); ++i) expect_close(got[i], want[i], seed);
      if (call == 0) {
        auto [gx, gy] = grad(jit(fs), argnums<0, 1>)(x, y);
        auto [jx, jy] = jit(grad(fs, argnums<0, 1>))(x, y);
        auto [ex, ey] = grad(fs, argnums<0, 1>)(x, y);
        expect_close(gx, ex, seed);
        expect_close(gy, ey, seed);
        expect_close(jx, ex, seed);
        expect_close(jy, ey, seed);
      }
    }
    EXPECT_EQ(jf.stats().hits, 1) << "seed " << seed;
  }
}

}  // namespace
}  // namespace graft
