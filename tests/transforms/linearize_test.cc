// linearize evaluates f's forward pass once: f_jvp runs only the tangent program. Checked by
// counting f's traces (a host counter in f) and its evaluations (a debug_print in f, which
// prints each time its primal value is computed), and against jvp.
#include "transforms/linearize.h"

#include <cmath>
#include <string>
#include <vector>

#include "core/ops.h"
#include "gtest/gtest.h"
#include "tests/transforms/expect_util.h"
#include "transforms/autodiff.h"
#include "transforms/jit.h"
#include "transforms/make_graph.h"
#include "transforms/vmap.h"

namespace graft {
namespace {

using testing_util::vals;

void expect_same(const Array& a, const Array& b) { testing_util::expect_same(a, b, 1e-12); }

const Array kX = array<double>({0.5, -1.25, 2.0});
const Array kW = array<double>({1.0, 2.0, -1.0, 0.5, 0.25, 3.0}, Shape{2, 3});

TEST(LinearizeTest, PrimalRunsOnceAndTangentsMatchJvp) {
  testing_util::DebugPrintCapture printed;
  int traces = 0;
  auto f = [&](const Array& x, const Array& w) {
    ++traces;
    Array h = debug_print("h = {}", exp(matmul(w, sin(x))))[0];
    return std::pair{tanh(h), sum(h * h)};
  };
  auto [out, f_jvp] = linearize(f, kX, kW);
  EXPECT_EQ(traces, 1);
  EXPECT_EQ(printed.lines.size(), 1u);  // the primal was computed once, here
  const std::vector<std::pair<Array, Array>> tangents = {
      {ones_like(kX), zeros_like(kW)},
      {array<double>({0.1, -0.2, 0.3}), array<double>({1, 0, 0, 0, -1, 2}, Shape{2, 3})},
      {zeros_like(kX), ones_like(kW)}};
  for (const auto& [tx, tw] : tangents) {
    auto t = f_jvp(tx, tw);
    auto [y, want] = jvp([](const Array& x, const Array& w) {
      Array h = exp(matmul(w, sin(x)));
      return std::pair{tanh(h), sum(h * h)};
    }, std::tuple{kX, kW}, std::tuple{tx, tw});
    expect_same(t.first, want.first);
    expect_same(t.second, want.second);
    expect_same(out.first, y.first);
  }
  // Neither f nor its primal ran again for the three f_jvp calls.
  EXPECT_EQ(traces, 1);
  EXPECT_EQ(printed.lines.size(), 1u);
}

TEST(LinearizeTest, TangentProgramHasNoPrimalEquations) {
  // The tangent of sin at x is cos(x) * t: cos(x) is a residual constant, so f_jvp's
  // program multiplies and never applies sin or cos.
  auto [y, f_jvp] = linearize([](const Array& x) { return sin(x); }, kX);
  std::string g = make_graph([&](const Array& t) { return f_jvp(t); })(kX).str();
  EXPECT_EQ(g.find("sin"), std::string::npos) << g;
  EXPECT_EQ(g.find("cos"), std::string::npos) << g;
  EXPECT_NE(g.find("mul"), std::string::npos) << g;
  std::vector<double> x = vals(kX), t = {1.0, 2.0, 3.0}, got = vals(f_jvp(array<double>(t)));
  for (int i = 0; i < 3; ++i) EXPECT_NEAR(got[i], std::cos(x[i]) * t[i], 1e-12);
  // vmap of f_jvp over a batch of tangents: each row as f_jvp of that row.
  Array ts = array<double>({1, 2, 3, -1, 0.5, 0}, Shape{2, 3});
  Array batched = vmap([&](const Array& r) { return f_jvp(r); })(ts);
  std::vector<double> b = vals(batched), tv = vals(ts);
  ASSERT_EQ(b.size(), 6u);
  for (int k = 0; k < 6; ++k) EXPECT_NEAR(b[k], std::cos(x[k % 3]) * tv[k], 1e-12);
}

TEST(LinearizeTest, ComposesWithJitAndGradAndChecksTangents) {
  // Inside jit the primals are tracers: linearize still works (its residuals become inputs
  // of the tangent program).
  auto g = [](const Array& x) {
    auto [y, f_jvp] = linearize([](const Array& a) { return a * a * a; }, x);
    return f_jvp(ones_like(x)) + y;
  };
  std::vector<double> x = vals(kX), got = vals(jit(g)(kX)), d = vals(grad([&](const Array& a) {
    return sum(g(a));
  })(kX));
  for (int i = 0; i < 3; ++i) {
    EXPECT_NEAR(got[i], 3 * x[i] * x[i] + x[i] * x[i] * x[i], 1e-12);
    EXPECT_NEAR(d[i], 6 * x[i] + 3 * x[i] * x[i], 1e-12);
  }
  auto [y, f_jvp] = linearize([](const Array& a) { return a * 2.0; }, kX);
  try {
    f_jvp(ones({2}, DType::kF64));
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("[linearize]", 0), 0u) << e.what();
  }
}

}  // namespace
}  // namespace graft
