// grad / value_and_grad / vjp / jvp / linearize / jacfwd / jacrev / hessian / stop_gradient,
// each against an independent reference (closed forms, loops of the simpler transform).
#include "transforms/autodiff.h"

#include <cmath>

#include "core/ops.h"
#include "gtest/gtest.h"
#include "transforms/vmap.h"

struct Params {
  graft::Array w, b;
};
GRAFT_TREE(Params, w, b);

namespace graft {
namespace {

std::vector<double> vals(const Array& a) { return a.to_vector<double>(); }

void expect_near(const Array& a, const std::vector<double>& want, double tol = 1e-9) {
  std::vector<double> got = vals(a);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], tol) << "at " << i;
}

void expect_arrays_near(const Array& a, const Array& b, double tol = 1e-9) {
  ASSERT_EQ(shape_str(a.shape()), shape_str(b.shape()));
  expect_near(a, vals(b), tol);
}

const Array kX = array<double>({0.5, -1.25, 2.0});

TEST(GradTest, ClosedFormsOfScalarFunctions) {
  auto f = [](const Array& x) { return sum(sin(x) * x); };  // d/dx = cos(x) x + sin(x)
  Array g = grad(f)(kX);
  std::vector<double> want;
  for (double x : vals(kX)) want.push_back(std::cos(x) * x + std::sin(x));
  expect_near(g, want);
  auto [v, g2] = value_and_grad(f)(kX);
  double fx = 0;
  for (double x : vals(kX)) fx += std::sin(x) * x;
  EXPECT_NEAR(v.item<double>(), fx, 1e-12);
  expect_arrays_near(g2, g);
}

TEST(GradTest, PytreeParamsGiveAParamsGradient) {
  Params p{array<double>({1.0, 2.0, -1.0, 0.5}, Shape{2, 2}), array<double>({0.1, -0.2})};
  Array x = array<double>({1.0, 3.0}, Shape{1, 2});
  auto loss = [&](const Params& q) { return sum(square(matmul(x, q.w) + q.b)); };
  Params g = grad(loss)(p);
  // y = x w + b; dL/dw = x^T 2y, dL/db = 2y.
  std::vector<double> w = vals(p.w), b = vals(p.b), xv = vals(x);
  double y0 = xv[0] * w[0] + xv[1] * w[2] + b[0], y1 = xv[0] * w[1] + xv[1] * w[3] + b[1];
  expect_near(g.w, {2 * y0 * xv[0], 2 * y1 * xv[0], 2 * y0 * xv[1], 2 * y1 * xv[1]});
  expect_near(g.b, {2 * y0, 2 * y1});
}

TEST(GradTest, ArgnumsAndHasAux) {
  auto f = [](const Array& a, const Array& b, const Array& c) { return sum(a * b * b + c); };
  auto [ga, gc] = grad(f, argnums<0, 2>)(kX, kX, kX);
  std::vector<double> sq;
  for (double x : vals(kX)) sq.push_back(x * x);
  expect_near(ga, sq);
  expect_near(gc, {1, 1, 1});
  auto with_aux = [](const Array& a) { return std::pair{sum(a * a), a * 2.0}; };
  auto [value_aux, g] = value_and_grad(with_aux, has_aux)(kX);
  expect_near(value_aux.second, {1.0, -2.5, 4.0});
  expect_near(g, {1.0, -2.5, 4.0});
}

TEST(GradTest, SecondOrderClosedForms) {
  auto cube = [](const Array& x) { return sum(x * x * x); };
  auto g = [&](const Array& x) { return sum(grad(cube)(x)); };  // sum 3x^2
  std::vector<double> want;
  for (double x : vals(kX)) want.push_back(6 * x);
  expect_near(grad(g)(kX), want);
  // d^2/dx^2 sin(x) = -sin(x), through grad(grad(.)) on a scalar.
  Array x0 = scalar(0.7, DType::kF64);
  auto s = [](const Array& x) { return sin(x); };
  auto ds = [&](const Array& x) { return grad(s)(x); };
  EXPECT_NEAR(grad(ds)(x0).item<double>(), -std::sin(0.7), 1e-12);
}

TEST(GradTest, NoPerturbationConfusion) {
  // d/dx [ x * d/dy (x + y) ] = d/dx [x] = 1 (a driver that confused the two traces gives 2).
  auto outer = [](const Array& x) {
    auto inner = [&](const Array& y) { return x + y; };
    return x * grad(inner)(scalar(1.0, DType::kF64));
  };
  EXPECT_NEAR(grad(outer)(scalar(3.0, DType::kF64)).item<double>(), 1.0, 1e-12);
}

TEST(VjpJvpTest, VjpOfAPytreeOutputAndJvpClosedForm) {
  auto f = [](const Array& a, const Array& b) { return std::pair{a * b, exp(a)}; };
  auto [out, pullback] = vjp(f, kX, kX * 2.0);
  auto [ga, gb] = pullback(std::pair{ones_like(kX), ones_like(kX)});
  std::vector<double> want_a, want_b;
  for (double x : vals(kX)) {
    want_a.push_back(2 * x + std::exp(x));
    want_b.push_back(x);
  }
  expect_near(ga, want_a);
  expect_near(gb, want_b);
  auto [y, t] =
      jvp([](const Array& a) { return tanh(a); }, std::tuple{kX}, std::tuple{ones_like(kX)});
  std::vector<double> want;
  for (double x : vals(kX)) want.push_back(1 - std::tanh(x) * std::tanh(x));
  expect_near(t, want);
  auto [y2, f_jvp] = linearize([](const Array& a) { return sum(a * a); }, kX);
  EXPECT_NEAR(f_jvp(ones_like(kX)).item<double>(), 2 * (0.5 - 1.25 + 2.0), 1e-12);
}

TEST(JacobianTest, JacfwdEqualsJacrevAndClosedForm) {
  auto f = [](const Array& x) { return sin(x) * sum(x); };
  Array jf = jacfwd(f)(kX), jr = jacrev(f)(kX);
  ASSERT_EQ(shape_str(jf.shape()), "(3, 3)");
  expect_arrays_near(jf, jr, 1e-12);
  // J_ij = cos(x_i) s delta_ij + sin(x_i).
  std::vector<double> x = vals(kX), want;
  double s = x[0] + x[1] + x[2];
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) want.push_back((i == j ? std::cos(x[i]) * s : 0) + std::sin(x[i]));
  expect_near(jf, want, 1e-12);
}

TEST(JacobianTest, HessianVectorProductEqualsHessianTimesV) {
  Array a = array<double>({2, 1, 0, 1, 3, 1, 0, 1, 4}, Shape{3, 3});
  auto f = [&](const Array& x) { return sum(x * matmul(a, x)) + sum(exp(x)); };
  Array h = hessian(f)(kX);  // A + A^T + diag(exp(x))
  std::vector<double> av = vals(a), x = vals(kX), want;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j)
      want.push_back(av[i * 3 + j] + av[j * 3 + i] + (i == j ? std::exp(x[i]) : 0));
  expect_near(h, want, 1e-10);
  Array v = array<double>({1.0, -2.0, 0.5});
  auto g = [&](const Array& x) { return grad(f)(x); };
  Array hvp = jvp(g, std::tuple{kX}, std::tuple{v}).second;
  expect_arrays_near(hvp, matmul(h, v), 1e-10);
}

TEST(ComposeTest, PerExampleGradientsEqualALoopOfGrad) {
  Array w = array<double>({0.3, -0.7, 1.1});
  Array xs = array<double>({1, 2, 3, -1, 0.5, 2, 0, 1, -3, 2, 2, 2}, Shape{4, 3});
  auto loss = [](const Array& w_, const Array& x) { return square(sum(w_ * x) - 1.0); };
  auto per_example = vmap([&](const Array& x) { return grad(loss)(w, x); });
  Array batched = per_example(xs);
  ASSERT_EQ(shape_str(batched.shape()), "(4, 3)");
  for (int i = 0; i < 4; ++i) {
    Array xi = reshape(slice(xs, {i, 0}, {i + 1, 3}), {3});
    expect_arrays_near(reshape(slice(batched, {i, 0}, {i + 1, 3}), {3}), grad(loss)(w, xi));
  }
  // grad of a vmapped loss summed equals the sum of the per-example gradients.
  auto total = [&](const Array& w_) {
    return sum(vmap([&](const Array& x) { return loss(w_, x); })(xs));
  };
  expect_arrays_near(grad(total)(w), sum(batched, {0}), 1e-10);
}

TEST(StopGradientTest, BlocksTheDerivativeButKeepsTheValue) {
  auto f = [](const Array& x) { return sum(x * stop_gradient(x)); };  // d/dx = stop(x)
  expect_near(grad(f)(kX), vals(kX));
  EXPECT_NEAR(f(kX).item<double>(), 0.25 + 1.5625 + 4.0, 1e-12);
}

TEST(AutodiffErrors, ClearMessages) {
  auto msg = [](auto&& fn) {
    try {
      fn();
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(msg([] {
              grad([](const Array& x) { return x * 2.0; })(kX);
            }).rfind("[grad] requires a scalar output, got f64[3]", 0),
            0u);
  EXPECT_EQ(msg([] {
              grad([](const Array& x) { return sum(x); })(array<int32_t>({1, 2}));
            }).rfind("[grad] can only differentiate floating or complex arrays", 0),
            0u);
  EXPECT_EQ(msg([] {
              jvp([](const Array& x) { return x; }, std::tuple{kX},
                  std::tuple{ones({2}, DType::kF64)});
            }).rfind("[jvp] tangent 0 has shape (2,) but its primal has shape (3,)", 0),
            0u);
  auto [out, pullback] = vjp([](const Array& x) { return x * 2.0; }, kX);
  EXPECT_EQ(msg([&] {
              pullback(ones({2}, DType::kF64));
            }).rfind("[vjp] cotangent 0 has shape (2,) but the output has shape (3,)", 0),
            0u);
  EXPECT_EQ(msg([] {
              grad([](const Array& x) { return sum(x).item<double>() > 0 ? sum(x) : sum(-x); })(kX);
            }).rfind("[read] cannot read the value of a traced array", 0),
            0u);
}

}  // namespace
}  // namespace graft

namespace graft {
namespace {

TEST(JacobianTest, PytreeInputsGiveAJacobianPerLeaf) {
  Params p{array<double>({1.0, 2.0, 3.0, 4.0}, Shape{2, 2}), array<double>({0.5, -0.5})};
  Array x = array<double>({1.0, -2.0});
  auto f = [&](const Params& q) { return tanh(matmul(q.w, x) + q.b); };  // shape (2,)
  Params jf = jacfwd(f)(p), jr = jacrev(f)(p);
  ASSERT_EQ(shape_str(jf.w.shape()), "(2, 2, 2)");
  ASSERT_EQ(shape_str(jf.b.shape()), "(2, 2)");
  expect_arrays_near(jf.w, jr.w, 1e-12);
  expect_arrays_near(jf.b, jr.b, 1e-12);
  // d out_i / d b_j = (1 - out_i^2) delta_ij; d out_i / d w_jk = (1 - out_i^2) delta_ij x_k.
  std::vector<double> out = vals(f(p)), xv = vals(x), want_b, want_w;
  for (int i = 0; i < 2; ++i) {
    for (int j = 0; j < 2; ++j) {
      want_b.push_back(i == j ? 1 - out[i] * out[i] : 0);
      for (int k = 0; k < 2; ++k) want_w.push_back(i == j ? (1 - out[i] * out[i]) * xv[k] : 0);
    }
  }
  expect_near(jf.b, want_b, 1e-12);
  expect_near(jf.w, want_w, 1e-12);
}

}  // namespace
}  // namespace graft
