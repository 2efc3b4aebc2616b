// Direct tests of the elementwise family's transform rules (jvp, vjp, vmap), called on
// concrete arrays. jvp and vjp are checked against central finite differences in f64 (the
// Jacobians are diagonal, so one FD pass per input gives all of it); second order by
// differentiating the rules' outputs with the drivers against FD of those outputs; vmap
// against a loop of the primitive over the batch slices.
#include <cmath>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "core/ops.h"
#include "core/primitive.h"
#include "core/primitives/elementwise.h"
#include "gtest/gtest.h"
#include "transforms/autodiff_core.h"

namespace graft {
namespace {

using P = PrimitiveId;
using Prim = std::shared_ptr<const Primitive>;

constexpr int kUnbatched = 1000;  // an in_axes entry meaning "not batched"
constexpr double kH = 1e-6;

Prim prim_of(const Array& y, PrimitiveId id) {
  EXPECT_NE(y.primitive(), nullptr);
  if (y.primitive() == nullptr) return nullptr;
  EXPECT_EQ(y.primitive()->id(), id) << y.primitive()->name();
  return y.node()->primitive;
}
Prim unary_prim(P id) { return std::make_shared<const Unary>(id); }
Prim binary_prim(P id) { return std::make_shared<const Binary>(id); }

// Values in [lo, hi) of the given dtype (rounded down for integers, > midpoint for bool).
Array rnd(const Shape& s, DType dtype, uint32_t seed, double lo = -1, double hi = 1) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> u(lo, hi);
  std::vector<double> v(numel(s));
  for (double& x : v) {
    x = u(gen);
    if (is_integral(dtype)) x = std::floor(x);
    if (dtype == DType::kBool) x = x > 0.5 * (lo + hi);
  }
  return astype(array<double>(v, s), dtype);
}
Array f64(const Shape& s, uint32_t seed, double lo = -1, double hi = 1) {
  return rnd(s, DType::kF64, seed, lo, hi);
}

std::vector<double> vals(const Array& a) { return a.to_vector<double>(); }

double inner(const std::vector<double>& a, const std::vector<double>& b) {
  double s = 0;
  for (size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
  return s;
}

void expect_near(const std::vector<double>& got, const std::vector<double>& want,
                 const std::string& what, double rtol = 1e-7) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t k = 0; k < got.size(); ++k) {
    if (std::isnan(want[k])) {
      EXPECT_TRUE(std::isnan(got[k])) << what << " at " << k;
      continue;
    }
    EXPECT_NEAR(got[k], want[k], rtol * (1 + std::abs(want[k]))) << what << " at " << k;
  }
}

// Central differences of fn along direction `dir` (one entry per input; empty = fixed).
std::vector<std::vector<double>> fd(const FlatFn& fn, const std::vector<Array>& in,
                                    const std::vector<Array>& dir) {
  auto at = [&](double d) {
    std::vector<Array> x = in;
    for (size_t i = 0; i < in.size(); ++i) {
      if (dir[i].valid()) x[i] = in[i] + d * dir[i];
    }
    std::vector<std::vector<double>> r;
    for (const Array& o : fn(x)) r.push_back(vals(o));
    return r;
  };
  auto plus = at(kH), minus = at(-kH);
  for (size_t o = 0; o < plus.size(); ++o) {
    for (size_t k = 0; k < plus[o].size(); ++k) plus[o][k] = (plus[o][k] - minus[o][k]) / (2 * kH);
  }
  return plus;
}

FlatFn apply_fn(const Prim& p) {
  return [p](const std::vector<Array>& x) { return bind(p, x); };
}

// jvp and vjp of p at `in` against FD. Floating inputs are differentiated, the others must
// get no cotangent. Elementwise Jacobians are diagonal: the FD along the unit vector of all
// of input i's elements at once gives its diagonal.
void check_ad(const Prim& p, const std::vector<Array>& in, uint32_t seed = 1) {
  SCOPED_TRACE(std::string(p->name()) + " " + p->params());
  Array out = bind1(p, in);
  Array ct = f64(out.shape(), seed + 100);
  std::vector<Array> got_vjp = p->vjp(in, {out}, {ct});
  ASSERT_EQ(got_vjp.size(), in.size());
  std::vector<Array> t(in.size());
  std::vector<double> want_jvp(out.size(), 0.0);
  for (size_t i = 0; i < in.size(); ++i) {
    if (!is_floating(in[i].dtype())) {
      EXPECT_FALSE(got_vjp[i].valid()) << "input " << i << " is not floating: no cotangent";
      continue;
    }
    t[i] = f64(in[i].shape(), seed + static_cast<uint32_t>(i));
    std::vector<Array> unit(in.size());
    unit[i] = ones(in[i].shape(), DType::kF64);
    std::vector<double> diag = fd(apply_fn(p), in, unit)[0], ti = vals(t[i]), cv = vals(ct);
    std::vector<double> want_vjp(diag.size());
    for (size_t k = 0; k < diag.size(); ++k) {
      want_jvp[k] += diag[k] * ti[k];
      want_vjp[k] = diag[k] * cv[k];
    }
    ASSERT_TRUE(got_vjp[i].valid()) << "input " << i;
    EXPECT_EQ(got_vjp[i].shape(), in[i].shape());
    EXPECT_EQ(got_vjp[i].dtype(), in[i].dtype());
    expect_near(vals(got_vjp[i]), want_vjp, "vjp of input " + std::to_string(i));
  }
  std::vector<Array> got = p->jvp(in, t, {out});
  ASSERT_EQ(got.size(), 1u);
  ASSERT_TRUE(got[0].valid());
  EXPECT_EQ(got[0].shape(), out.shape());
  EXPECT_EQ(got[0].dtype(), out.dtype());
  expect_near(vals(got[0]), want_jvp, "jvp");
  EXPECT_FALSE(p->jvp(in, std::vector<Array>(in.size()), {out})[0].valid());
  // One input at a time: <ct, jvp(t_i)> == <vjp(ct)_i, t_i>.
  for (size_t i = 0; i < in.size(); ++i) {
    if (!t[i].valid()) continue;
    std::vector<Array> ti(in.size());
    ti[i] = t[i];
    Array g = p->jvp(in, ti, {out})[0];
    ASSERT_TRUE(g.valid());
    EXPECT_NEAR(inner(vals(g), vals(ct)), inner(vals(got_vjp[i]), vals(t[i])), 1e-9)
        << "input " << i;
  }
}

// Second order: the jvp rule's output J(x)t and the vjp rule's outputs J(x)^T c, as functions
// of x, differentiated forward and backward by the drivers (so through the rules' own
// rules), against FD of those functions. Floating inputs must be f64; others stay fixed.
void check_second(const Prim& p, const std::vector<Array>& in, uint32_t seed = 5) {
  SCOPED_TRACE(std::string(p->name()) + " second order");
  size_t n = in.size();
  std::vector<Array> t(n), s(n);
  for (size_t i = 0; i < n; ++i) {
    if (!is_floating(in[i].dtype())) continue;
    t[i] = f64(in[i].shape(), seed + static_cast<uint32_t>(i));
    s[i] = f64(in[i].shape(), seed + 10 + static_cast<uint32_t>(i));
  }
  Array ct = f64(bind1(p, in).shape(), seed + 20);
  FlatFn jvp_fn = [&](const std::vector<Array>& x) {
    return std::vector<Array>{p->jvp(x, t, {bind1(p, x)})[0]};
  };
  FlatFn vjp_fn = [&](const std::vector<Array>& x) {
    std::vector<Array> r;
    for (const Array& c : p->vjp(x, {bind1(p, x)}, {ct})) {
      if (c.valid()) r.push_back(c);
    }
    return r;
  };
  for (const FlatFn& f : {jvp_fn, vjp_fn}) {
    std::vector<std::vector<double>> want = fd(f, in, s);
    auto [outs, touts] = detail::jvp_flat(f, in, s);
    ASSERT_EQ(touts.size(), want.size());
    std::vector<Array> w;
    double want_inner = 0;
    for (size_t o = 0; o < want.size(); ++o) {
      expect_near(vals(touts[o]), want[o], "forward over rule, output " + std::to_string(o), 1e-6);
      w.push_back(f64(outs[o].shape(), seed + 30 + static_cast<uint32_t>(o)));
      want_inner += inner(vals(w.back()), want[o]);
    }
    detail::VjpResult v = detail::vjp_flat(f, in);
    std::vector<Array> g = v.pullback(w);
    double got_inner = 0;
    for (size_t i = 0; i < n; ++i) {
      if (s[i].valid()) got_inner += inner(vals(g[i]), vals(s[i]));
    }
    EXPECT_NEAR(got_inner, want_inner, 1e-6 * (1 + std::abs(want_inner))) << "reverse over rule";
  }
}

// Rules of a primitive with no derivative: empty tangents and cotangents.
void check_no_derivative(const Prim& p, const std::vector<Array>& in) {
  SCOPED_TRACE(std::string(p->name()) + " " + p->params());
  Array out = bind1(p, in);
  std::vector<Array> t;
  for (const Array& x : in) t.push_back(ones_like(x));
  std::vector<Array> j = p->jvp(in, t, {out});
  ASSERT_EQ(j.size(), 1u);
  EXPECT_FALSE(j[0].valid());
  std::vector<Array> v = p->vjp(in, {out}, {ones(out.shape(), DType::kF64)});
  ASSERT_EQ(v.size(), in.size());
  for (const Array& c : v) EXPECT_FALSE(c.valid());
}

Array at(const Array& x, int a, int64_t k) { return squeeze(slice_axis(x, a, k, k + 1), {a}); }

// vmap of p with the given in_axes (kUnbatched, or an axis; negative counts from the end)
// against a loop over the batch. Batched args stack B variants of in[i] in [lo, hi).
void check_vmap(const Prim& p, const std::vector<Array>& in, const std::vector<int>& in_axes,
                double lo = -1, double hi = 1, uint32_t seed = 7, int64_t b = 3) {
  SCOPED_TRACE(std::string(p->name()) + " vmap");
  std::vector<Array> args(in.size());
  std::vector<int> dims(in.size(), -1);
  std::vector<std::vector<Array>> variants(in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    if (in_axes[i] == kUnbatched) {
      args[i] = in[i];
      continue;
    }
    int r = in[i].ndim() + 1;
    dims[i] = in_axes[i] < 0 ? in_axes[i] + r : in_axes[i];
    for (int64_t k = 0; k < b; ++k) {
      uint32_t s = seed + static_cast<uint32_t>(10 * i + k);
      variants[i].push_back(rnd(in[i].shape(), in[i].dtype(), s, lo, hi));
    }
    args[i] = stack(variants[i], dims[i]);
  }
  Batched out = p->vmap(args, dims);
  ASSERT_EQ(out.outputs.size(), 1u);
  ASSERT_EQ(out.dims.size(), 1u);
  int od = out.dims[0];
  ASSERT_GE(od, 0);
  EXPECT_EQ(out.outputs[0].primitive()->id(), p->id()) << "the same primitive, batched";
  for (int64_t k = 0; k < b; ++k) {
    std::vector<Array> slice_in = in;
    for (size_t i = 0; i < in.size(); ++i) {
      if (dims[i] >= 0) slice_in[i] = variants[i][k];
    }
    Array want = bind1(p, slice_in);
    Array got = at(out.outputs[0], od, k);
    EXPECT_EQ(got.shape(), want.shape()) << "batch " << k;
    EXPECT_EQ(got.dtype(), want.dtype());
    expect_near(vals(got), vals(want), "batch " + std::to_string(k), 1e-14);
  }
}

// ---- unary ----

struct UnaryCase {
  P id;
  double lo, hi;  // a domain where the op is smooth
};

const std::vector<UnaryCase> kSmoothUnary = {
    {P::kNeg, -2, 2},      {P::kAbs, -2, 2},     {P::kExp, -2, 2},       {P::kExpm1, -2, 2},
    {P::kLog, 0.3, 3},     {P::kLog1p, -0.6, 3}, {P::kSqrt, 0.3, 3},     {P::kRsqrt, 0.3, 3},
    {P::kSquare, -2, 2},   {P::kSin, -3, 3},     {P::kCos, -3, 3},       {P::kTanh, -2, 2},
    {P::kLogistic, -3, 3}, {P::kErf, -1.5, 1.5}, {P::kErfInv, -0.8, 0.8}};

TEST(ElementwiseRules, UnaryFirstAndSecondOrder) {
  for (const UnaryCase& c : kSmoothUnary) {
    Prim p = unary_prim(c.id);
    uint32_t seed = static_cast<uint32_t>(c.id) * 7;
    check_ad(p, {f64({2, 3}, seed, c.lo, c.hi)});
    check_ad(p, {f64({}, seed + 1, c.lo, c.hi)});
    check_ad(p, {f64({0, 3}, seed + 2, c.lo, c.hi)});
    check_second(p, {f64({5}, seed + 3, c.lo, c.hi)});
    for (int a : {0, 1, -1}) check_vmap(p, {f64({2, 3}, seed)}, {a}, c.lo, c.hi);
  }
}

TEST(ElementwiseRules, ClosedForms) {
  Array x = array<double>({-1.5, -0.25, 0.0, 0.75, 2.0});
  auto d = [&](P id, const Array& in) {
    Prim p = unary_prim(id);
    return vals(p->jvp({in}, {ones_like(in)}, {bind1(p, {in})})[0]);
  };
  // abs'(0) = 0 (via sign), like JAX.
  EXPECT_EQ(d(P::kAbs, x), (std::vector<double>{-1, -1, 0, 1, 1}));
  std::vector<double> xv = vals(x), th = d(P::kTanh, x), lg = d(P::kLogistic, x);
  for (size_t k = 0; k < xv.size(); ++k) {
    double s = 1 / (1 + std::exp(-xv[k]));
    EXPECT_NEAR(th[k], 1 - std::tanh(xv[k]) * std::tanh(xv[k]), 1e-15);
    EXPECT_NEAR(lg[k], s * (1 - s), 1e-15);
  }
  Array y = array<double>({-0.9, 0.0, 0.5});
  std::vector<double> ei = d(P::kErfInv, y);
  EXPECT_NEAR(ei[1], std::sqrt(M_PI) / 2, 1e-15);
}

TEST(ElementwiseRules, UnaryWithoutDerivative) {
  Array x = f64({2, 3}, 3, -3, 3);
  for (P id : {P::kSign, P::kFloor, P::kCeil, P::kRound, P::kIsFinite}) {
    Prim p = unary_prim(id);
    check_no_derivative(p, {x});
    // FD agrees: piecewise constant away from the jumps.
    std::vector<double> diag = fd(apply_fn(p), {x}, {ones(x.shape(), DType::kF64)})[0];
    for (double v : diag) EXPECT_EQ(v, 0.0) << p->name();
    for (int a : {0, 1, -1}) check_vmap(p, {x}, {a}, -3, 3);
  }
  for (DType dt : {DType::kBool, DType::kI32, DType::kU8}) {
    Prim p = unary_prim(P::kNot);
    Array b = rnd({2, 3}, dt, 4, 0, 9);
    EXPECT_FALSE(p->jvp({b}, {Array()}, {bind1(p, {b})})[0].valid());
    for (int a : {0, 2, -1}) check_vmap(p, {b}, {a}, 0, 9);
  }
  // Integer inputs of numeric unary ops batch as well.
  for (P id : {P::kNeg, P::kAbs, P::kSign, P::kSquare}) {
    check_vmap(unary_prim(id), {rnd({4}, DType::kI32, 9, -5, 5)}, {0}, -5, 5);
  }
}

// ---- binary ----

struct BinaryCase {
  P id;
  double xlo, xhi, ylo, yhi;
};

const std::vector<BinaryCase> kSmoothBinary = {
    {P::kAdd, -2, 2, -2, 2},      {P::kSub, -2, 2, -2, 2},    {P::kMul, -2, 2, -2, 2},
    {P::kDiv, -2, 2, 0.5, 2},     {P::kDiv, -2, 2, -2, -0.5}, {P::kRem, -3, 3, 0.7, 1.3},
    {P::kRem, -3, 3, -1.9, -0.6}, {P::kPow, 0.3, 2, -2, 2},   {P::kMax, -2, 2, -2, 2},
    {P::kMin, -2, 2, -2, 2}};

TEST(ElementwiseRules, BinaryFirstAndSecondOrder) {
  uint32_t seed = 11;
  for (const BinaryCase& c : kSmoothBinary) {
    Prim p = binary_prim(c.id);
    seed += 20;
    for (Shape s : {Shape{2, 3}, Shape{}, Shape{3, 0}}) {
      check_ad(p, {f64(s, seed, c.xlo, c.xhi), f64(s, seed + 1, c.ylo, c.yhi)}, seed);
    }
    std::vector<Array> in{f64({5}, seed + 2, c.xlo, c.xhi), f64({5}, seed + 3, c.ylo, c.yhi)};
    if (c.id != P::kMax && c.id != P::kMin) check_second(p, in, seed);
    Array x = f64({2, 3}, seed + 4, c.xlo, c.xhi), y = f64({2, 3}, seed + 5, c.ylo, c.yhi);
    double lo = std::max(c.xlo, c.ylo), hi = std::min(c.xhi, c.yhi);  // both operands' domain
    for (std::vector<int> axes : std::vector<std::vector<int>>{{0, 0},
                                                               {1, 1},
                                                               {-1, -1},
                                                               {0, -1},
                                                               {2, 1},
                                                               {0, kUnbatched},
                                                               {kUnbatched, 1},
                                                               {-1, kUnbatched}}) {
      if (lo < hi) check_vmap(p, {x, y}, axes, lo, hi);
    }
  }
}

TEST(ElementwiseRules, MaxMinSplitTiesEvenly) {
  Array x = array<double>({1, 2, 3, 4}), y = array<double>({1, 5, 3, 0});
  Array ct = array<double>({2, 2, 2, 2});
  Prim mx = binary_prim(P::kMax), mn = binary_prim(P::kMin);
  std::vector<Array> gmax = mx->vjp({x, y}, {bind1(mx, {x, y})}, {ct});
  EXPECT_EQ(vals(gmax[0]), (std::vector<double>{1, 0, 1, 2}));
  EXPECT_EQ(vals(gmax[1]), (std::vector<double>{1, 2, 1, 0}));
  std::vector<Array> gmin = mn->vjp({x, y}, {bind1(mn, {x, y})}, {ct});
  EXPECT_EQ(vals(gmin[0]), (std::vector<double>{1, 2, 1, 0}));
  EXPECT_EQ(vals(gmin[1]), (std::vector<double>{1, 0, 1, 2}));
  Array t = ones(x.shape(), DType::kF64);
  EXPECT_EQ(vals(mx->jvp({x, y}, {t, Array()}, {bind1(mx, {x, y})})[0]),
            (std::vector<double>{0.5, 0, 0.5, 1}));
  // NaN: equals neither operand, no gradient.
  Array xn = array<double>({NAN}), yn = array<double>({1.0});
  std::vector<Array> g = mx->vjp({xn, yn}, {bind1(mx, {xn, yn})}, {array<double>({1.0})});
  EXPECT_EQ(vals(g[1]), (std::vector<double>{0}));
}

TEST(ElementwiseRules, PowAtZeroBase) {
  // d/dy x^y at x = 0 is 0 (JAX's _replace_zero), not log(0) * 0 = NaN.
  Array x = array<double>({0.0, 0.0, 2.0}), y = array<double>({2.0, 3.0, 3.0});
  Prim p = binary_prim(P::kPow);
  std::vector<Array> g = p->vjp({x, y}, {bind1(p, {x, y})}, {ones({3}, DType::kF64)});
  std::vector<double> gy = vals(g[1]);
  EXPECT_EQ(gy[0], 0.0);
  EXPECT_EQ(gy[1], 0.0);
  EXPECT_NEAR(gy[2], 8 * std::log(2.0), 1e-14);
  EXPECT_EQ(vals(g[0]), (std::vector<double>{0, 0, 12}));
}

TEST(ElementwiseRules, RemDivisorGradientIsMinusTruncatedQuotient) {
  Array x = array<double>({7.5, -7.5, 7.5, 0.5}), y = array<double>({2.0, 2.0, -2.0, 3.0});
  Prim p = binary_prim(P::kRem);
  std::vector<Array> g = p->vjp({x, y}, {bind1(p, {x, y})}, {ones({4}, DType::kF64)});
  EXPECT_EQ(vals(g[0]), (std::vector<double>{1, 1, 1, 1}));
  EXPECT_EQ(vals(g[1]), (std::vector<double>{-3, 3, 3, 0}));
}

TEST(ElementwiseRules, BinaryWithoutDerivative) {
  Array x = f64({2, 3}, 1), y = f64({2, 3}, 2);
  for (P id : {P::kEq, P::kNe, P::kLt, P::kLe, P::kGt, P::kGe}) {
    Prim p = binary_prim(id);
    check_no_derivative(p, {x, y});
    check_vmap(p, {x, y}, {1, kUnbatched});
    check_vmap(p, {x, y}, {-1, 0});
  }
  for (P id : {P::kAnd, P::kOr, P::kXor}) {
    for (DType dt : {DType::kBool, DType::kI32}) {
      Array a = rnd({3, 2}, dt, 5, 0, 9), b = rnd({3, 2}, dt, 6, 0, 9);
      Prim p = binary_prim(id);
      EXPECT_FALSE(p->jvp({a, b}, {Array(), Array()}, {bind1(p, {a, b})})[0].valid());
      check_vmap(p, {a, b}, {0, 2}, 0, 9);
      check_vmap(p, {a, b}, {kUnbatched, 1}, 0, 9);
    }
  }
  for (P id : {P::kShiftLeft, P::kShiftRightLogical}) {
    Array a = rnd({4}, DType::kU32, 5, 0, 1000), b = rnd({4}, DType::kU32, 6, 0, 8);
    Prim p = binary_prim(id);
    EXPECT_FALSE(p->jvp({a, b}, {Array(), Array()}, {bind1(p, {a, b})})[0].valid());
    check_vmap(p, {a, b}, {0, kUnbatched}, 0, 8);
    check_vmap(p, {a, b}, {kUnbatched, -1}, 0, 8);
  }
  // Integer arithmetic batches too.
  Array a = rnd({4}, DType::kI32, 5, -9, 9), b = rnd({4}, DType::kI32, 6, 1, 5);
  for (P id : {P::kAdd, P::kMul, P::kRem, P::kMax}) {
    check_vmap(binary_prim(id), {a, b}, {0, kUnbatched}, 1, 5);
  }
}

// ---- select_n ----

TEST(ElementwiseRules, SelectN) {
  Array pred = rnd({2, 3}, DType::kBool, 3, 0, 1);
  Array f = f64({2, 3}, 4), t = f64({2, 3}, 5);
  Prim p = prim_of(where(pred, t, f), P::kSelectN);
  check_ad(p, {pred, f, t});
  check_second(p, {pred, f, t}, 9);
  Array out = bind1(p, {pred, f, t});
  Array ct = f64({2, 3}, 8);
  std::vector<Array> g = p->vjp({pred, f, t}, {out}, {ct});
  std::vector<double> pv = vals(pred), cv = vals(ct), gf = vals(g[1]), gt = vals(g[2]);
  for (size_t k = 0; k < pv.size(); ++k) {
    EXPECT_EQ(gf[k], pv[k] ? 0.0 : cv[k]);
    EXPECT_EQ(gt[k], pv[k] ? cv[k] : 0.0);
  }
  // One case without a tangent: zeros in its place.
  Array tt = f64({2, 3}, 9);
  std::vector<double> j = vals(p->jvp({pred, f, t}, {Array(), Array(), tt}, {out})[0]);
  std::vector<double> tv = vals(tt);
  for (size_t k = 0; k < pv.size(); ++k) EXPECT_EQ(j[k], pv[k] ? tv[k] : 0.0);
  for (std::vector<int> axes : std::vector<std::vector<int>>{{0, 0, 0},
                                                             {1, kUnbatched, kUnbatched},
                                                             {kUnbatched, 2, kUnbatched},
                                                             {-1, 0, kUnbatched},
                                                             {kUnbatched, 1, -1},
                                                             {0, 1, 2}}) {
    check_vmap(p, {pred, f, t}, axes);
  }
}

// ---- convert_element_type, bitcast_convert_type ----

TEST(ElementwiseRules, ConvertElementType) {
  // f64 -> weak f64 (a node, the identity): checked against FD.
  Array x = f64({2, 3}, 1);
  Prim id = prim_of(apply<ConvertElementType>({x}, DType::kF64, true), P::kConvertElementType);
  check_ad(id, {x});
  // Between floating dtypes the tangent / cotangent is converted.
  Array x32 = rnd({4}, DType::kF32, 2);
  Prim up = prim_of(astype(x32, DType::kF64), P::kConvertElementType);
  Array t32 = rnd({4}, DType::kF32, 3);
  Array j = up->jvp({x32}, {t32}, {bind1(up, {x32})})[0];
  EXPECT_EQ(j.dtype(), DType::kF64);
  EXPECT_EQ(vals(j), vals(t32));
  Array ct = f64({4}, 4);
  Array v = up->vjp({x32}, {bind1(up, {x32})}, {ct})[0];
  EXPECT_EQ(v.dtype(), DType::kF32);
  EXPECT_EQ(vals(v), vals(astype(ct, DType::kF32)));
  Prim down = prim_of(astype(x, DType::kBF16), P::kConvertElementType);
  Array td = f64({2, 3}, 5);
  Array jd = down->jvp({x}, {td}, {bind1(down, {x})})[0];
  EXPECT_EQ(jd.dtype(), DType::kBF16);
  EXPECT_EQ(vals(jd), vals(astype(td, DType::kBF16)));
  // To or from integers and bool: no derivative.
  check_no_derivative(prim_of(astype(x, DType::kI32), P::kConvertElementType), {x});
  check_no_derivative(prim_of(astype(x, DType::kBool), P::kConvertElementType), {x});
  Array i = rnd({2, 3}, DType::kI32, 6, -5, 5);
  Prim fromint = prim_of(astype(i, DType::kF64), P::kConvertElementType);
  EXPECT_FALSE(fromint->jvp({i}, {Array()}, {bind1(fromint, {i})})[0].valid());
  EXPECT_FALSE(fromint->vjp({i}, {bind1(fromint, {i})}, {f64({2, 3}, 7)})[0].valid());
  for (int a : {0, 1, -1}) {
    check_vmap(up, {x32}, {a});
    check_vmap(fromint, {i}, {a}, -5, 5);
  }
}

TEST(ElementwiseRules, BitcastConvertType) {
  Array x = f64({2, 3}, 1);
  Prim p = prim_of(bitcast_convert_type(x, DType::kI64), P::kBitcastConvertType);
  check_no_derivative(p, {x});
  Array xi = rnd({3}, DType::kI32, 2, -100, 100);
  Prim q = prim_of(bitcast_convert_type(xi, DType::kF32), P::kBitcastConvertType);
  check_no_derivative(q, {xi});
  for (int a : {0, 1, -1}) check_vmap(p, {x}, {a});
  check_vmap(q, {xi}, {0}, -100, 100);
}

// ---- dtypes: rules give tangents of the output dtype, close to the f64 values ----

TEST(ElementwiseRules, LowPrecisionDtypes) {
  for (DType dt : {DType::kF32, DType::kBF16, DType::kF16}) {
    for (const UnaryCase& c : kSmoothUnary) {
      Prim p = unary_prim(c.id);
      SCOPED_TRACE(std::string(p->name()) + " " + dtype_name(dt));
      Array x = rnd({6}, dt, 3, c.lo, c.hi), t = rnd({6}, dt, 4);
      Array x64 = astype(x, DType::kF64), t64 = astype(t, DType::kF64);
      Array j = p->jvp({x}, {t}, {bind1(p, {x})})[0];
      Array want = p->jvp({x64}, {t64}, {bind1(p, {x64})})[0];
      EXPECT_EQ(j.dtype(), dt);
      expect_near(vals(j), vals(want), "jvp", dt == DType::kF32 ? 1e-5 : 3e-2);
    }
    for (const BinaryCase& c : kSmoothBinary) {
      Prim p = binary_prim(c.id);
      SCOPED_TRACE(std::string(p->name()) + " " + dtype_name(dt));
      Array x = rnd({6}, dt, 3, c.xlo, c.xhi), y = rnd({6}, dt, 4, c.ylo, c.yhi);
      Array ct = rnd({6}, dt, 5);
      std::vector<Array> g = p->vjp({x, y}, {bind1(p, {x, y})}, {ct});
      for (const Array& gi : g) EXPECT_EQ(gi.dtype(), dt);
    }
  }
  // Weakly typed f32 operands: tangents stay f32 (weak C++ constants would widen them).
  Array w = Array(0.5f);
  for (const UnaryCase& c : kSmoothUnary) {
    Prim p = unary_prim(c.id);
    EXPECT_EQ(p->jvp({w}, {w}, {bind1(p, {w})})[0].dtype(), DType::kF32) << p->name();
  }
}

}  // namespace
}  // namespace graft
