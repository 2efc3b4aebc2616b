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
#include "core/ir/primitive.h"
#include "core/primitives/elementwise.h"
#include "gtest/gtest.h"
#include "tests/core/primitives/rule_checks.h"
#include "transforms/autodiff.h"
#include "core/interpreters/ad.h"

namespace graft {
namespace {

using P = PrimitiveId;
using namespace testing_rules;  // NOLINT(build/namespaces)

Prim unary_prim(P id) { return std::make_shared<const Unary>(id); }
Prim binary_prim(P id) { return std::make_shared<const Binary>(id); }

// Elementwise results may be NaN outside an op's domain: a NaN wanted is a NaN expected.
void expect_near(const std::vector<double>& got, const std::vector<double>& want,
                 const std::string& what, double rtol = 1e-7) {
  testing_rules::expect_near(got, want, what, rtol, /*nan_equal=*/true);
}

FlatFn apply_fn(const Prim& p) {
  return [p](const std::vector<Array>& x) { return graft::bind(p, x); };
}

// jvp and vjp of p at `in` against FD. Floating inputs are differentiated, the others must
// get no cotangent. Elementwise Jacobians are diagonal: the FD along the unit vector of all
// of input i's elements at once gives its diagonal. Then one input at a time:
// <ct, jvp(t_i)> == <vjp(ct)_i, t_i>.
void check_ad(const Prim& p, const std::vector<Array>& in, uint32_t seed = 1) {
  testing_rules::check_ad(p, in,
                          {.seed = seed,
                           .tangent_offset = 0,
                           .cotangent_offset = 100,
                           .diagonal = true,
                           .fd_zero_nan = false,
                           .nan_equal = true,
                           .check_zero_cotangents = false,
                           .check_each_input = true});
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
  std::vector<size_t> pos = float_positions(in);
  std::vector<Array> dirs;
  for (size_t i : pos) dirs.push_back(s[i]);
  for (const FlatFn& f : {jvp_fn, vjp_fn}) {
    std::vector<double> want_all = fd(f, in, pos, dirs, /*zero_nan=*/false);
    auto [outs, touts] = detail::jvp_flat(f, in, s);
    ASSERT_EQ(flat(touts).size(), want_all.size());
    std::vector<Array> w;
    double want_inner = 0;
    for (size_t o = 0, off = 0; o < touts.size(); off += touts[o].size(), ++o) {
      std::vector<double> want(want_all.begin() + off, want_all.begin() + off + touts[o].size());
      expect_near(vals(touts[o]), want, "forward over rule, output " + std::to_string(o), 1e-6);
      w.push_back(f64(outs[o].shape(), seed + 30 + static_cast<uint32_t>(o)));
      want_inner += inner(vals(w.back()), want);
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

// vmap of p with the given in_axes against a loop over the batch: batched args stack
// variants of in[i] in [lo, hi) whatever their dtype; the batched output comes from p itself.
void check_vmap(const Prim& p, const std::vector<Array>& in, const std::vector<int>& in_axes,
                double lo = -1, double hi = 1) {
  testing_rules::check_vmap(p, in, in_axes,
                            {.int_lo = lo,
                             .int_hi = hi,
                             .float_lo = lo,
                             .float_hi = hi,
                             .float_tol = 1e-14,
                             .expect_same_primitive = true});
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
  EXPECT_EQ(d(P::kAbs, x), (std::vector<double>{-1, -1, 1, 1, 1}));
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

// jax.grad(jnp.abs) at [0., -0., nan, 2., -2.] is [1, 1, -1, 1, -1] (JAX 0.10.2 on CPU, by
// tools/make_jax_edge_vectors.py): JAX's rule is select(x >= 0, g, -g), so both zeros get 1.
TEST(ElementwiseRules, AbsDerivativeAtZeroIsOneAsInJax) {
  for (DType dt : {DType::kF32, DType::kF64, DType::kBF16}) {
    Array x = astype(array<double>({0.0, -0.0, NAN, 2.0, -2.0}), dt);
    Prim p = unary_prim(P::kAbs);
    Array t = astype(array<double>({3, 3, 3, 3, 3}), dt);
    EXPECT_EQ(vals(p->jvp({x}, {t}, {bind1(p, {x})})[0]), (std::vector<double>{3, 3, -3, 3, -3}))
        << dt;
    EXPECT_EQ(vals(p->vjp({x}, {bind1(p, {x})}, {t})[0]), (std::vector<double>{3, 3, -3, 3, -3}))
        << dt;
  }
  // Through the public op and grad: d/dx sum(abs(x)).
  Array x = array<float>({0.0f, -0.0f, 1.5f, -1.5f});
  EXPECT_EQ(grad([](const Array& v) { return sum(abs(v)); })(x).to_vector<float>(),
            (std::vector<float>{1, 1, 1, -1}));
}

TEST(ElementwiseRules, UnaryWithoutDerivative) {
  Array x = f64({2, 3}, 3, -3, 3);
  for (P id : {P::kSign, P::kFloor, P::kCeil, P::kRound, P::kIsFinite}) {
    Prim p = unary_prim(id);
    check_no_derivative(p, {x});
    // FD agrees: piecewise constant away from the jumps.
    std::vector<double> diag = fd(apply_fn(p), {x}, {0}, {ones(x.shape(), DType::kF64)}, false);
    for (double v : diag) EXPECT_EQ(v, 0.0) << p->name();
    for (int a : {0, 1, -1}) check_vmap(p, {x}, {a}, -3, 3);
  }
  for (DType dt : {DType::kBool, DType::kI32, DType::kU8}) {
    Prim p = unary_prim(P::kNot);
    Array b = random_array({2, 3}, dt, 4, 0, 9);
    EXPECT_FALSE(p->jvp({b}, {Array()}, {bind1(p, {b})})[0].valid());
    for (int a : {0, 2, -1}) check_vmap(p, {b}, {a}, 0, 9);
  }
  // Integer inputs of numeric unary ops batch as well.
  for (P id : {P::kNeg, P::kAbs, P::kSign, P::kSquare}) {
    check_vmap(unary_prim(id), {random_array({4}, DType::kI32, 9, -5, 5)}, {0}, -5, 5);
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
      Array a = random_array({3, 2}, dt, 5, 0, 9), b = random_array({3, 2}, dt, 6, 0, 9);
      Prim p = binary_prim(id);
      EXPECT_FALSE(p->jvp({a, b}, {Array(), Array()}, {bind1(p, {a, b})})[0].valid());
      check_vmap(p, {a, b}, {0, 2}, 0, 9);
      check_vmap(p, {a, b}, {kUnbatched, 1}, 0, 9);
    }
  }
  for (P id : {P::kShiftLeft, P::kShiftRightLogical}) {
    Array a = random_array({4}, DType::kU32, 5, 0, 1000),
          b = random_array({4}, DType::kU32, 6, 0, 8);
    Prim p = binary_prim(id);
    EXPECT_FALSE(p->jvp({a, b}, {Array(), Array()}, {bind1(p, {a, b})})[0].valid());
    check_vmap(p, {a, b}, {0, kUnbatched}, 0, 8);
    check_vmap(p, {a, b}, {kUnbatched, -1}, 0, 8);
  }
  // Integer arithmetic batches too.
  Array a = random_array({4}, DType::kI32, 5, -9, 9), b = random_array({4}, DType::kI32, 6, 1, 5);
  for (P id : {P::kAdd, P::kMul, P::kRem, P::kMax}) {
    check_vmap(binary_prim(id), {a, b}, {0, kUnbatched}, 1, 5);
  }
}

// ---- select_n ----

TEST(ElementwiseRules, SelectN) {
  Array pred = random_array({2, 3}, DType::kBool, 3, 0, 1);
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
  Array x32 = random_array({4}, DType::kF32, 2);
  Prim up = prim_of(astype(x32, DType::kF64), P::kConvertElementType);
  Array t32 = random_array({4}, DType::kF32, 3);
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
  Array i = random_array({2, 3}, DType::kI32, 6, -5, 5);
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
  Array xi = random_array({3}, DType::kI32, 2, -100, 100);
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
      Array x = random_array({6}, dt, 3, c.lo, c.hi), t = random_array({6}, dt, 4);
      Array x64 = astype(x, DType::kF64), t64 = astype(t, DType::kF64);
      Array j = p->jvp({x}, {t}, {bind1(p, {x})})[0];
      Array want = p->jvp({x64}, {t64}, {bind1(p, {x64})})[0];
      EXPECT_EQ(j.dtype(), dt);
      expect_near(vals(j), vals(want), "jvp", dt == DType::kF32 ? 1e-5 : 3e-2);
    }
    for (const BinaryCase& c : kSmoothBinary) {
      Prim p = binary_prim(c.id);
      SCOPED_TRACE(std::string(p->name()) + " " + dtype_name(dt));
      Array x = random_array({6}, dt, 3, c.xlo, c.xhi), y = random_array({6}, dt, 4, c.ylo, c.yhi);
      Array ct = random_array({6}, dt, 5);
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
