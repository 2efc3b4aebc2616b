// jacfwd / jacrev / hessian with argnums, has_aux, pytree inputs and pytree outputs: nesting
// as JAX's (output structure outside, argument structure inside), values against closed
// forms, central finite differences and JAX-recorded Jacobians
// (tools/make_jacobian_vectors.py), jacfwd against jacrev.
#include "transforms/jacobian.h"

#include <cmath>
#include <map>
#include <string>

#include "core/ops.h"
#include "gtest/gtest.h"
#include "tests/transforms/expect_util.h"

struct Pair2 {
  graft::Array u, v;
};
GRAFT_TREE(Pair2, u, v);

namespace graft {
namespace {

using namespace testing_util;

// Central differences of g: R^n (f64, any shape) -> Array, as shape out.shape + x.shape.
template <typename G>
std::vector<double> finite_jacobian(const G& g, const Array& x, double h = 1e-6) {
  std::vector<double> xv = vals(x), out;
  size_t m = vals(g(x)).size();
  std::vector<std::vector<double>> cols;
  for (size_t j = 0; j < xv.size(); ++j) {
    std::vector<double> up = xv, dn = xv;
    up[j] += h;
    dn[j] -= h;
    std::vector<double> a = vals(g(array<double>(up, x.shape())));
    std::vector<double> b = vals(g(array<double>(dn, x.shape())));
    std::vector<double> c(m);
    for (size_t i = 0; i < m; ++i) c[i] = (a[i] - b[i]) / (2 * h);
    cols.push_back(c);
  }
  for (size_t i = 0; i < m; ++i)
    for (size_t j = 0; j < xv.size(); ++j) out.push_back(cols[j][i]);
  return out;
}

const Array kX = array<double>({0.5, -1.25, 2.0});
const Array kY = array<double>({0.75, -0.5});

TEST(JacobianTest, PytreeOutputGivesAJacobianPerOutputLeaf) {
  auto f = [](const Array& x) { return std::pair{sin(x) * 2.0, sum(x * x)}; };
  auto jf = jacfwd(f)(kX);
  auto jr = jacrev(f)(kX);
  static_assert(std::is_same_v<decltype(jf), std::pair<Array, Array>>);
  ASSERT_EQ(shape_str(jf.first.shape()), "(3, 3)");
  ASSERT_EQ(shape_str(jf.second.shape()), "(3,)");
  std::vector<double> x = vals(kX), d, g;
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 3; ++j) d.push_back(i == j ? 2 * std::cos(x[i]) : 0.0);
    g.push_back(2 * x[i]);
  }
  expect_near(jf.first, d);
  expect_near(jf.second, g);
  expect_same(jr.first, jf.first);
  expect_same(jr.second, jf.second);
}

TEST(JacobianTest, ArgnumsGiveATupleOfJacobians) {
  auto f = [](const Array& x, const Array& unused, const Array& y) {
    return tanh(x * sum(y)) + sum(unused) * 0.0;
  };
  Array w = array<double>({1.0});
  auto [jx, jy] = jacfwd(f, argnums<0, 2>)(kX, w, kY);
  auto [rx, ry] = jacrev(f, argnums<0, 2>)(kX, w, kY);
  ASSERT_EQ(shape_str(jx.shape()), "(3, 3)");
  ASSERT_EQ(shape_str(jy.shape()), "(3, 2)");
  expect_near(jx, finite_jacobian([&](const Array& x) { return f(x, w, kY); }, kX), 1e-7);
  expect_near(jy, finite_jacobian([&](const Array& y) { return f(kX, w, y); }, kY), 1e-7);
  expect_same(rx, jx);
  expect_same(ry, jy);
  // A single argnum other than 0: the Jacobian itself, not a 1-tuple.
  Array only_y = jacrev(f, argnums<2>)(kX, w, kY);
  expect_same(only_y, jy);
}

TEST(JacobianTest, MapOutputOfTupleArgumentsNestsOutputOutside) {
  // out = {"a": x * y0, "b": sum(x) * y1}; the Jacobian w.r.t. (x, y) is
  // {"a": (da/dx, da/dy), "b": (db/dx, db/dy)}, as JAX nests it.
  auto f = [](const std::tuple<Array, Array>& xy) {
    const auto& [x, y] = xy;
    return std::map<std::string, Array>{{"a", x * take(y, array<int>({0}))},
                                        {"b", sum(x) * take(y, array<int>({1}))}};
  };
  std::tuple<Array, Array> xy{kX, kY};
  auto j = jacrev(f)(xy);
  auto k = jacfwd(f)(xy);
  static_assert(
      std::is_same_v<decltype(j), std::map<std::string, std::tuple<Array, Array>>>);
  ASSERT_EQ(shape_str(std::get<0>(j.at("a")).shape()), "(3, 3)");
  ASSERT_EQ(shape_str(std::get<1>(j.at("a")).shape()), "(3, 2)");
  ASSERT_EQ(shape_str(std::get<0>(j.at("b")).shape()), "(1, 3)");
  ASSERT_EQ(shape_str(std::get<1>(j.at("b")).shape()), "(1, 2)");
  std::vector<double> x = vals(kX), y = vals(kY);
  expect_near(std::get<0>(j.at("a")), {y[0], 0, 0, 0, y[0], 0, 0, 0, y[0]});
  expect_near(std::get<1>(j.at("a")), {x[0], 0, x[1], 0, x[2], 0});
  expect_near(std::get<0>(j.at("b")), {y[1], y[1], y[1]});
  expect_near(std::get<1>(j.at("b")), {0, x[0] + x[1] + x[2]});
  for (const char* key : {"a", "b"}) {
    expect_same(std::get<0>(k.at(key)), std::get<0>(j.at(key)));
    expect_same(std::get<1>(k.at(key)), std::get<1>(j.at(key)));
  }
}

TEST(JacobianTest, StructOutputOfAnArray) {
  auto f = [](const Array& x) { return Pair2{exp(x), sum(x) * x}; };
  Pair2 jf = jacfwd(f)(kX), jr = jacrev(f)(kX);
  std::vector<double> x = vals(kX), du, dv;
  double s = x[0] + x[1] + x[2];
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 3; ++j) {
      du.push_back(i == j ? std::exp(x[i]) : 0.0);
      dv.push_back(x[i] + (i == j ? s : 0.0));
    }
  }
  expect_near(jf.u, du);
  expect_near(jf.v, dv);
  expect_same(jr.u, jf.u);
  expect_same(jr.v, jf.v);
}

TEST(JacobianTest, HasAuxReturnsTheAuxUndifferentiated) {
  auto f = [](const Array& x) {
    return std::pair{sin(x), std::map<std::string, Array>{{"n", sum(x * x)}}};
  };
  auto [jf, auxf] = jacfwd(f, has_aux)(kX);
  auto [jr, auxr] = jacrev(f, has_aux)(kX);
  std::vector<double> x = vals(kX), d;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) d.push_back(i == j ? std::cos(x[i]) : 0.0);
  expect_near(jf, d);
  expect_same(jr, jf);
  double n = x[0] * x[0] + x[1] * x[1] + x[2] * x[2];
  EXPECT_NEAR(auxf.at("n").item<double>(), n, 1e-12);
  EXPECT_NEAR(auxr.at("n").item<double>(), n, 1e-12);
  // With argnums too.
  auto g = [](const Array& a, const Array& b) { return std::pair{a * sum(b), b * 3.0}; };
  auto [jb, aux_b] = jacrev(g, argnums<1>, has_aux)(kX, kY);
  ASSERT_EQ(shape_str(jb.shape()), "(3, 2)");
  expect_near(jb, {x[0], x[0], x[1], x[1], x[2], x[2]});
  expect_near(aux_b, {2.25, -1.5});
}

TEST(HessianTest, TwoArgumentsGiveNestedBlocks) {
  // f = sum(x^2 * y0) + sum(x) * y1^2 + (y0 + y1)^2, x: (3,), y: (2,).
  auto f = [](const Array& x, const Array& y) {
    Array y0 = take(y, array<int>({0})), y1 = take(y, array<int>({1}));
    return sum(x * x * y0) + sum(sum(x) * y1 * y1) + sum(square(y0 + y1));
  };
  auto h = hessian(f, argnums<0, 1>)(kX, kY);
  const auto& [hxx, hxy] = std::get<0>(h);
  const auto& [hyx, hyy] = std::get<1>(h);
  ASSERT_EQ(shape_str(hxx.shape()), "(3, 3)");
  ASSERT_EQ(shape_str(hxy.shape()), "(3, 2)");
  ASSERT_EQ(shape_str(hyx.shape()), "(2, 3)");
  ASSERT_EQ(shape_str(hyy.shape()), "(2, 2)");
  std::vector<double> x = vals(kX), y = vals(kY), want_xx, want_xy, want_yx;
  double s = x[0] + x[1] + x[2];
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 3; ++j) want_xx.push_back(i == j ? 2 * y[0] : 0.0);
    want_xy.push_back(2 * x[i]);
    want_xy.push_back(2 * y[1]);
  }
  for (int j = 0; j < 3; ++j) want_yx.push_back(2 * x[j]);
  for (int j = 0; j < 3; ++j) want_yx.push_back(2 * y[1]);
  expect_near(hxx, want_xx);
  expect_near(hxy, want_xy);
  expect_near(hyx, want_yx);
  expect_near(hyy, {2, 2, 2, 2 * s + 2});
}

TEST(HessianTest, PytreeInputAgainstFiniteDifferencesOfTheGradient) {
  using Tree = std::map<std::string, Array>;
  auto f = [](const Tree& t) { return sum(t.at("a") * t.at("a") * t.at("a")) * t.at("b"); };
  Tree t{{"a", array<double>({0.5, -1.5})}, {"b", array<double>({2.0}, Shape{})}};
  auto h = hessian(f)(t);
  static_assert(std::is_same_v<decltype(h), std::map<std::string, Tree>>);
  double a0 = 0.5, a1 = -1.5, b = 2.0;
  expect_near(h.at("a").at("a"), {6 * a0 * b, 0, 0, 6 * a1 * b});
  expect_near(h.at("a").at("b"), {3 * a0 * a0, 3 * a1 * a1});
  expect_near(h.at("b").at("a"), {3 * a0 * a0, 3 * a1 * a1});
  ASSERT_EQ(shape_str(h.at("b").at("b").shape()), "()");
  EXPECT_NEAR(h.at("b").at("b").item<double>(), 0.0, 1e-12);
  // d/da of the gradient's "a" leaf by finite differences: the same block.
  auto grad_a = [&](const Array& a) {
    return jacrev(f)(Tree{{"a", a}, {"b", t.at("b")}}).at("a");
  };
  expect_near(h.at("a").at("a"), finite_jacobian(grad_a, t.at("a")), 1e-6);
}

TEST(HessianTest, StructParamsGiveAMapByFieldName) {
  // A GRAFT_TREE struct holds only Arrays, so hessian(loss)(params) is a map from field
  // name to a Pair2 of blocks (JAX's nesting of a dict): h.at("u").v = d2 loss / du dv.
  Array x = array<double>({1.0, -2.0});
  auto loss = [&](const Pair2& p) { return sum(square(tanh(matmul(p.u, x) + p.v))); };
  Pair2 p{array<double>({0.3, -0.1, 0.2, 0.4}, Shape{2, 2}), array<double>({0.1, -0.3})};
  auto h = hessian(loss)(p);
  static_assert(std::is_same_v<decltype(h), std::map<std::string, Pair2>>);
  ASSERT_EQ(shape_str(h.at("u").u.shape()), "(2, 2, 2, 2)");
  ASSERT_EQ(shape_str(h.at("u").v.shape()), "(2, 2, 2)");
  ASSERT_EQ(shape_str(h.at("v").u.shape()), "(2, 2, 2)");
  ASSERT_EQ(shape_str(h.at("v").v.shape()), "(2, 2)");
  // Each block against central differences of the gradient's field.
  auto grad_field = [&](bool of_u, bool by_u) {
    return [&, of_u, by_u](const Array& a) {
      Pair2 q = p;
      (by_u ? q.u : q.v) = a;
      Pair2 g = jacrev(loss)(q);
      return of_u ? g.u : g.v;
    };
  };
  expect_near(h.at("u").u, finite_jacobian(grad_field(true, true), p.u), 1e-6);
  expect_near(h.at("u").v, finite_jacobian(grad_field(true, false), p.v), 1e-6);
  expect_near(h.at("v").u, finite_jacobian(grad_field(false, true), p.u), 1e-6);
  expect_near(h.at("v").v, finite_jacobian(grad_field(false, false), p.v), 1e-6);
}

TEST(HessianTest, HasAuxPassesTheAuxThrough) {
  auto f = [](const Array& x) { return std::pair{sum(exp(x)), x * 2.0}; };
  auto [h, aux] = hessian(f, has_aux)(kX);
  std::vector<double> x = vals(kX), d;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) d.push_back(i == j ? std::exp(x[i]) : 0.0);
  expect_near(h, d);
  expect_near(aux, {1.0, -2.5, 4.0});
}

struct RecordedLeaf {
  Shape shape;
  std::vector<double> values;
};
#include "tests/transforms/testdata/jacobian_jax.inc"

void expect_recorded(const std::vector<Array>& leaves, const std::vector<RecordedLeaf>& want) {
  ASSERT_EQ(leaves.size(), want.size());
  for (size_t k = 0; k < want.size(); ++k) {
    EXPECT_EQ(shape_str(leaves[k].shape()), shape_str(want[k].shape)) << "leaf " << k;
    expect_near(leaves[k], want[k].values, 1e-12);
  }
}

// The cases of tools/make_jacobian_vectors.py, leaves compared in JAX's tree_leaves order.
TEST(JacobianTest, MatchesJaxRecordedNestingAndValues) {
  using Dict = std::map<std::string, Array>;
  Dict p{{"a", array<double>({0.5, -1.5})},
         {"b", array<double>({0.3, -0.2, 0.1, 0.4}, Shape{2, 2})}};
  Array x = array<double>({0.25, -0.75, 1.5});
  auto f = [](const Dict& q, const Array& y) {
    Array a0 = reshape(slice(q.at("a"), {0}, {1}), Shape{});
    return Dict{{"u", tanh(matmul(q.at("b"), q.at("a"))) * sum(y)}, {"w", sin(y) * a0}};
  };
  auto g = [](const Dict& q, const Array& y) {
    return sum(square(tanh(matmul(q.at("b"), q.at("a")) + slice(y, {0}, {2})))) *
           reshape(slice(y, {2}, {3}), Shape{});
  };
  expect_recorded(tree_leaves(jacrev(f, argnums<0, 1>)(p, x)), kJacrevDictOutput);
  expect_recorded(tree_leaves(jacfwd(f, argnums<0, 1>)(p, x)), kJacfwdDictOutput);
  expect_recorded(tree_leaves(hessian(g, argnums<0, 1>)(p, x)), kHessianTwoArgs);
}

TEST(JacobianTest, IntegerInputsAndOutputsAreErrors) {
  Array xi = array<int>({1, 2});
  expect_error([&] { jacfwd([](const Array& x) { return x * 2; })(xi); }, "[jacfwd]",
               "can only differentiate floating arrays");
  expect_error([&] { jacrev([](const Array& x) { return x * 2; })(xi); }, "[jacrev]",
               "can only differentiate floating arrays");
  expect_error([&] { jacrev([](const Array& x) { return astype(x, DType::kI32); })(kX); },
               "[jacrev]", "requires real-valued outputs");
}

}  // namespace
}  // namespace graft
