// fori_loop with Array bounds: concrete ones run as the static loop (a scan: grad works);
// traced ones lower to a while_loop, as in JAX: values, jvp and vmap work, grad fails with
// JAX's message.
#include <cmath>
#include <string>

#include "core/ops.h"
#include "gtest/gtest.h"
#include "tests/transforms/expect_util.h"
#include "transforms/autodiff.h"
#include "transforms/control_flow.h"
#include "transforms/jit.h"
#include "transforms/make_graph.h"
#include "transforms/vmap.h"

namespace graft {
namespace {

using namespace testing_util;

// carry * 1.5 + i, n times from i = lo: a plain loop as the reference.
double reference(double c, int lo, int hi) {
  for (int i = lo; i < hi; ++i) c = c * 1.5 + i;
  return c;
}

auto step = [](const Array& i, const Array& c) { return c * 1.5 + astype(i, c.dtype()); };

TEST(ForiLoopBoundsTest, TracedBoundsLowerToAWhileLoop) {
  auto f = [](const Array& n, const Array& x) { return fori_loop(Array(1), n, step, x); };
  Array x = array<double>({2.0}, Shape{});
  for (int n : {0, 1, 4, 7}) {
    Array y = jit(f)(array<int>({n}, Shape{}), x);
    EXPECT_NEAR(y.item<double>(), reference(2.0, 1, n), 1e-12) << n;
  }
  std::string g = make_graph(f)(array<int>({4}, Shape{}), x).str();
  EXPECT_NE(g.find("while"), std::string::npos) << g;
  EXPECT_EQ(g.find("scan"), std::string::npos) << g;
}

TEST(ForiLoopBoundsTest, ConcreteArrayBoundsRunAsAScanSoGradWorks) {
  Array x = array<double>({2.0}, Shape{});
  auto f = [](const Array& c) { return fori_loop(Array(0), array<int>({3}, Shape{}), step, c); };
  EXPECT_NEAR(f(x).item<double>(), reference(2.0, 0, 3), 1e-12);
  EXPECT_NEAR(grad(f)(x).item<double>(), std::pow(1.5, 3), 1e-12);
  // i has the bounds' dtype, traced or not.
  for (bool traced : {false, true}) {
    DType seen = DType::kF32;
    auto g = [&](const Array& lo, const Array& hi) {
      return fori_loop(lo, hi, [&](const Array& i, const Array& c) {
        seen = i.dtype();
        return c + 1.0;
      }, x);
    };
    Array lo = astype(Array(0), DType::kI64), hi = astype(Array(2), DType::kI64);
    Array y = traced ? jit(g)(lo, hi) : g(lo, hi);
    EXPECT_NEAR(y.item<double>(), 4.0, 1e-12);
    EXPECT_EQ(seen, DType::kI64) << traced;
  }
}

TEST(ForiLoopBoundsTest, JvpAndVmapWorkGradFailsAsJax) {
  Array x = array<double>({2.0}, Shape{});
  Array n = array<int>({5}, Shape{});
  // Inside jit the bound is a tracer, so the loop is a while_loop; jvp and grad run on it there.
  auto loop = [](const Array& k) {
    return [k](const Array& v) { return fori_loop(Array(0), k, step, v); };
  };
  auto [y, t] = jit([&](const Array& k, const Array& v) {
    return jvp(loop(k), std::tuple{v}, std::tuple{ones_like(v)});
  })(n, x);
  EXPECT_NEAR(y.item<double>(), reference(2.0, 0, 5), 1e-12);
  EXPECT_NEAR(t.item<double>(), std::pow(1.5, 5), 1e-12);
  std::string g = make_graph([&](const Array& k, const Array& v) {
    return jvp(loop(k), std::tuple{v}, std::tuple{ones_like(v)});
  })(n, x).str();
  EXPECT_NE(g.find("while"), std::string::npos) << g;
  // vmap over the bounds: each element runs its own trip count.
  Array ns = array<int>({0, 2, 5});
  Array ys = vmap([&](const Array& k) { return fori_loop(Array(0), k, step, x); })(ns);
  std::vector<double> got = ys.to_vector<double>();
  ASSERT_EQ(got.size(), 3u);
  for (int k = 0; k < 3; ++k) EXPECT_NEAR(got[k], reference(2.0, 0, std::vector<int>{0, 2, 5}[k]), 1e-12);
  expect_error([&] { jit([&](const Array& k, const Array& v) { return grad(loop(k))(v); })(n, x); },
               "[while_loop]",
               "Reverse-mode differentiation does not work for lax.while_loop or lax.fori_loop "
               "with dynamic start/stop values");
}

TEST(ForiLoopBoundsTest, BoundsMustBeIntegerScalarsOfOneType) {
  Array x = array<double>({2.0}, Shape{});
  expect_error([&] { fori_loop(array<int>({0}, Shape{}), astype(Array(3), DType::kI64), step, x); },
               "[fori_loop]", "must have equal types, got i32 and i64");
  expect_error([&] { fori_loop(Array(0), Array(2.5), step, x); }, "[fori_loop]",
               "integer scalars");
}

}  // namespace
}  // namespace graft
