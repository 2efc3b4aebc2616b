// Model-based test of jit: random well-typed programs (elementwise, reductions, shape ops,
// matmul, constants, repeated sub-expressions and algebraic identities, 1-200 nodes) from
// fixed seeds. For each: jit(f) == f (on two sets of inputs, the second a cache hit),
// grad(jit(f)) == grad(f) and jit(grad(f)) == grad(f). The same with scan / cond (and, not
// differentiated, while_loop) nodes whose bodies are random too: they close over outer
// values (loop invariants to hoist), carry values nobody reads (scan DCE), repeat
// sub-expressions and nest a cond.
#include <cmath>
#include <random>
#include <vector>

#include "core/ops.h"
#include "gtest/gtest.h"
#include "transforms/autodiff.h"
#include "transforms/control_flow.h"
#include "transforms/jit.h"

namespace graft {
namespace {

enum class Bodies { kNone, kDifferentiable, kAll };  // kAll adds while_loop

// A random elementwise computation over `pool` (arrays of one shape, some of them closed
// over from outside a body); with depth > 0, it may hold a cond of such computations.
std::vector<Array> random_body(uint32_t seed, std::vector<Array> pool, int depth) {
  std::mt19937 rng(seed);
  auto pick = [&](size_t n) { return static_cast<size_t>(rng() % n); };
  auto any = [&] { return pool[pick(pool.size())]; };
  int steps = 1 + static_cast<int>(pick(8));
  for (int i = 0; i < steps; ++i) {
    Array a = pool[pool.size() - 1 - pick(std::min<size_t>(pool.size(), 3))];
    Array r;
    switch (pick(depth > 0 ? 8 : 7)) {
      case 0:
        r = tanh(a) * any();
        break;
      case 1:
        r = sin(a) + sin(a);  // CSE
        break;
      case 2:
        r = a * 1.0 + (any() - 0.0);  // identities
        break;
      case 3:
        r = exp(pool[0] * 0.1) * a;  // invariant when pool[0] is
        break;
      case 4:
        r = a * (ones(a.shape()) * 0.25 + 0.5);  // a constant sub-graph
        break;
      case 5:
        r = sigmoid(a) - any() * 0.5;
        break;
      case 6:
        r = maximum(a, any());
        break;
      default: {
        uint32_t s1 = static_cast<uint32_t>(rng()), s2 = static_cast<uint32_t>(rng());
        Array b = any();
        r = cond(
            sum(a) > 0.0,
            [=](const Array& u, const Array& v) {
              return random_body(s1, {u, v}, depth - 1)[0];
            },
            [=](const Array& u, const Array& v) {
              return random_body(s2, {v, u}, depth - 1)[0];
            },
            a, b);
        break;
      }
    }
    pool.push_back(r);
  }
  return {pool[pool.size() - 1], pool[pool.size() - 2], pool[pool.size() / 2]};
}

// A scan, cond or while_loop node over `a` (and `w`, closed over by the bodies).
Array random_control(std::mt19937& rng, Bodies bodies, const Array& a, const Array& w) {
  uint32_t s = static_cast<uint32_t>(rng());
  size_t kind = rng() % (bodies == Bodies::kAll ? 3 : 2);
  bool use_carry = rng() % 2 == 0;
  if (kind == 0 && a.ndim() >= 1) {
    // Carries (c, d): c reads d; which finals and ys are used varies, so scan DCE drops some.
    Array w1 = mean(w, {0});  // the shape of one x
    Shape one(a.shape().begin() + 1, a.shape().end());
    auto [carry, ys] = scan(
        [=](const std::pair<Array, Array>& cd, const Array& x) {
          std::vector<Array> o = random_body(s, {w1, cd.first, x, cd.second}, 1);
          return std::pair{std::pair{o[0] * 0.5, tanh(cd.second + x)}, std::pair{o[1], o[2]}};
        },
        std::pair{zeros(one) + 0.1, mean(a, {0})}, a);
    Array r = ys.first * 0.5;
    return use_carry ? r + carry.first : r;
  }
  if (kind == 2) {
    auto [i, c] =
        while_loop([](const std::pair<Array, Array>& ic) { return ic.first < 3; },
                   [=](const std::pair<Array, Array>& ic) {
                     return std::pair{ic.first + 1, random_body(s, {w, ic.second}, 1)[0] * 0.5};
                   },
                   std::pair{Array(0), a});
    return use_carry ? c + a : c;
  }
  uint32_t s2 = static_cast<uint32_t>(rng());
  return cond(
      mean(a) > 0.0,
      [=](const Array& u) {
        return random_body(s, {w, u}, 1)[0];
      },
      [=](const Array& u) {
        return random_body(s2, {u, w * 2.0}, 0)[1];
      },
      a);
}

// Builds the same program every time it is called with arrays of the same shapes: every
// choice depends on the seed and the shapes only.
std::vector<Array> random_program(uint32_t seed, const Array& x, const Array& y,
                                  Bodies bodies = Bodies::kNone) {
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
    switch (pick(bodies == Bodies::kNone ? 14 : 17)) {
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
      case 13:
        r = astype(cos(a), DType::kF32);
        break;
      default:
        r = random_control(rng, bodies, a, same_shape(a));
        break;
    }
    pool.push_back(r);
  }
  return {pool[pool.size() - 1], pool[pool.size() - 2], pool[pool.size() / 2]};
}

Array scalar_program(uint32_t seed, const Array& x, const Array& y, Bodies bodies = Bodies::kNone) {
  Array s = Array(0.0f);
  for (const Array& v : random_program(seed, x, y, bodies)) s = s + mean(v);
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

void check_random_programs(uint32_t seeds, Bodies bodies) {
  std::mt19937 data(7);
  for (uint32_t seed = 0; seed < seeds; ++seed) {
    auto f = [=](const Array& x, const Array& y) { return random_program(seed, x, y, bodies); };
    auto fs = [=](const Array& x, const Array& y) { return scalar_program(seed, x, y, bodies); };
    auto jf = jit(f);
    for (int call = 0; call < 2; ++call) {
      Array x = randn({3, 4}, data), y = randn({3, 4}, data);
      std::vector<Array> want = f(x, y), got = jf(x, y);
      ASSERT_EQ(got.size(), want.size());
      for (size_t i = 0; i < got.size(); ++i) expect_close(got[i], want[i], seed);
      if (call == 0 && bodies != Bodies::kAll) {
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

TEST(JitModelTest, RandomProgramsMatchEager) { check_random_programs(300, Bodies::kNone); }

// Scan and cond bodies: values and both gradient orders.
TEST(JitModelTest, RandomProgramsWithBodiesMatchEager) {
  check_random_programs(120, Bodies::kDifferentiable);
}

// While bodies too (values only: while_loop has no reverse-mode rule).
TEST(JitModelTest, RandomProgramsWithWhileBodiesMatchEager) {
  check_random_programs(120, Bodies::kAll);
}

}  // namespace
}  // namespace graft
