// The transforms as interpreters of Programs (core/interpreters/ad.h, core/interpreters/batching.h): vjp, jvp and
// vmap of a traced program against plain loops over its data; the leading "fixed" inputs of a
// closed program (values of an outer trace) get no derivative; functions that close over an
// outer transform's tracer are lifted and differentiate / batch correctly.
#include <cmath>
#include <vector>

#include "core/error.h"
#include "core/interpreters/ad.h"
#include "core/interpreters/batching.h"
#include "core/ir/program.h"
#include "core/ops.h"
#include "gtest/gtest.h"
#include "transforms/autodiff.h"
#include "transforms/vmap.h"

namespace graft {
namespace {

using detail::jvp_program;
using detail::vjp_program;
using detail::vmap_program;

std::vector<double> vals(const Array& a) { return a.to_vector<double>(); }

void expect_near(const Array& a, const std::vector<double>& want, double tol = 1e-12) {
  std::vector<double> got = vals(a);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], tol) << "at " << i;
}

// out = sin(x) * y, and a second output that reads only y.
std::shared_ptr<const Program> sin_times(int64_t n) {
  Aval a{{n}, DType::kF64};
  ClosedProgram c = trace_closed(
      [](const std::vector<Array>& in) {
        return std::vector<Array>{sin(in[0]) * in[1], in[1] * 2.0};
      },
      {a, a});
  EXPECT_TRUE(c.consts.empty());
  return c.program;
}

TEST(ProgramTransformsTest, VjpOfAProgramMatchesAPlainLoop) {
  const std::vector<double> x{0.3, -1.2, 2.5}, y{1.5, 0.25, -2.0}, ct{1.0, -0.5, 3.0};
  std::shared_ptr<const Program> p = sin_times(3);
  detail::VjpResult v = vjp_program(p, {array<double>(x), array<double>(y)});
  std::vector<double> out, dx, dy;
  for (size_t i = 0; i < x.size(); ++i) {
    out.push_back(std::sin(x[i]) * y[i]);
    dx.push_back(std::cos(x[i]) * y[i] * ct[i]);
    dy.push_back(std::sin(x[i]) * ct[i]);
  }
  expect_near(v.outputs[0], out);
  // An empty cotangent is a zero: only the first output's reaches the inputs.
  std::vector<Array> cts = v.pullback({array<double>(ct), Array()});
  ASSERT_EQ(cts.size(), 2u);
  expect_near(cts[0], dx);
  expect_near(cts[1], dy);
  // With x fixed (a closed program's const), only y gets a cotangent: sin(x) ct + 2 ct2.
  detail::VjpResult w = vjp_program(p, {array<double>(x), array<double>(y)}, 1);
  std::vector<Array> cy = w.pullback({array<double>(ct), array<double>({1, 1, 1})});
  ASSERT_EQ(cy.size(), 1u);
  for (double& d : dy) d += 2.0;
  expect_near(cy[0], dy);
}

TEST(ProgramTransformsTest, JvpOfAProgramMatchesAPlainLoopAndKeepsSymbolicZeros) {
  const std::vector<double> x{0.3, -1.2}, y{1.5, 0.25}, tx{2.0, -1.0};
  std::shared_ptr<const Program> p = sin_times(2);
  auto [outs, touts] =
      jvp_program(*p, {array<double>(x), array<double>(y)}, {array<double>(tx), Array()}, false);
  std::vector<double> want;
  for (size_t i = 0; i < x.size(); ++i) want.push_back(std::cos(x[i]) * y[i] * tx[i]);
  expect_near(touts[0], want);
  EXPECT_FALSE(touts[1].valid());  // 2 y does not depend on x's tangent
  auto [o2, t2] =
      jvp_program(*p, {array<double>(x), array<double>(y)}, {array<double>(tx), Array()});
  expect_near(t2[1], {0.0, 0.0});
}

TEST(ProgramTransformsTest, VmapOfAProgramMatchesALoopOverTheBatch) {
  // f(x, w) = tanh(x @ w) with x batched along axis 1 and w shared.
  ClosedProgram c = trace_closed(
      [](const std::vector<Array>& in) { return std::vector<Array>{tanh(matmul(in[0], in[1]))}; },
      {Aval{{2}, DType::kF64}, Aval{{2, 3}, DType::kF64}});
  const std::vector<double> xs{0.5, -1.0, 2.0, 0.25, 1.5, -0.75};  // (2, B=3): column b is x_b
  const std::vector<double> w{0.1, 0.2, 0.3, -0.4, 0.5, -0.6};
  detail::VmapResult r = vmap_program(
      *c.program, {array<double>(xs, Shape{2, 3}), array<double>(w, Shape{2, 3})}, {1, -1}, 3);
  Array got = detail::move_batch_axis(r.outputs[0], r.dims[0], 0, 3);
  std::vector<double> want;
  for (int b = 0; b < 3; ++b) {
    for (int j = 0; j < 3; ++j) {
      want.push_back(std::tanh(xs[0 * 3 + b] * w[0 * 3 + j] + xs[1 * 3 + b] * w[1 * 3 + j]));
    }
  }
  expect_near(got, want);
}

TEST(ProgramTransformsTest, ArityMismatchIsAClearError) {
  std::shared_ptr<const Program> p = sin_times(2);
  try {
    vjp_program(p, {array<double>({1, 2})});
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("[vjp]", 0), 0u) << e.what();
  }
  EXPECT_THROW(vmap_program(*p, {array<double>({1, 2})}, {0}, 2), Error);
}

TEST(ProgramTransformsTest, GradClosingOverAnOuterTracerIsLifted) {
  // d/dx [x * d/dy (x y^2) at y=3] = d/dx 6 x^2 = 12 x: the inner function closes over the
  // outer trace's x, which its closed program takes as a fixed leading input.
  auto outer = [](const Array& x) {
    Array inner = grad([&x](const Array& y) { return x * y * y; })(scalar(3.0, DType::kF64));
    return x * inner;
  };
  expect_near(grad(outer)(scalar(2.0, DType::kF64)), {24.0});
  // The same closure under vmap: the lifted value is batched, the inner argument is not.
  Array xs = array<double>({1.0, -2.0, 0.5});
  Array g = vmap([](const Array& x) {
    return grad([&x](const Array& y) { return x * y * y; })(scalar(3.0, DType::kF64));
  })(xs);
  expect_near(g, {6.0, -12.0, 3.0});
  // And jvp through it: d/dx of 6 x^2 along t = 12 x t.
  auto [o, t] =
      jvp(outer, std::tuple{scalar(2.0, DType::kF64)}, std::tuple{scalar(0.5, DType::kF64)});
  expect_near(o, {24.0});
  expect_near(t, {12.0});
}

}  // namespace
}  // namespace graft
