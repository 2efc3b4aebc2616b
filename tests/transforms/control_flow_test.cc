// scan / cond / switch_case / while_loop / fori_loop: semantics, errors, and transforms
// (gradients against the unrolled loop, vmap with a batched predicate).
#include "transforms/control_flow.h"

#include <cmath>
#include <string>

#include "core/ops.h"
#include "gtest/gtest.h"
#include "tests/transforms/expect_util.h"
#include "transforms/autodiff.h"
#include "transforms/jit.h"
#include "transforms/vmap.h"

namespace graft {
namespace {

std::vector<double> vals(const Array& a) { return a.to_vector<double>(); }

void expect_near(const Array& a, const std::vector<double>& want, double tol = 1e-12) {
  std::vector<double> got = vals(a);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], tol) << "at " << i;
}

using testing_util::expect_error;

const Array kXs = array<double>({0.5, -1.0, 2.0, 0.25, 1.5}, Shape{5});

// c <- sin(c * w) + x, y = c * c
std::pair<Array, Array> step(const Array& c, const Array& x, const Array& w) {
  Array n = sin(c * w) + x;
  return {n, n * n};
}

Array loss_scan(const Array& w, const Array& xs) {
  auto [c, ys] = scan([&](const Array& c, const Array& x) { return step(c, x, w); },
                      Array(0.3) * ones({}, DType::kF64), xs);
  return c + sum(ys);
}

Array loss_unrolled(const Array& w, const Array& xs) {
  Array c = Array(0.3) * ones({}, DType::kF64), total = zeros({}, DType::kF64);
  for (int64_t i = 0; i < xs.shape()[0]; ++i) {
    auto [n, y] = step(c, reshape(slice(xs, {i}, {i + 1}), {}), w);
    c = n;
    total = total + y;
  }
  return c + total;
}

TEST(ScanTest, ValuesMatchLoopAndReverse) {
  auto f = [](const Array& c, const Array& x) { return std::pair{c * 2.0 + x, c}; };
  auto [c, ys] = scan(f, zeros({}, DType::kF64), kXs);
  double h = 0;
  std::vector<double> want;
  for (double x : vals(kXs)) want.push_back(h), h = h * 2 + x;
  EXPECT_DOUBLE_EQ(c.item<double>(), h);
  expect_near(ys, want);
  auto [cr, ysr] = scan(f, zeros({}, DType::kF64), kXs, {.reverse = true});
  std::vector<double> xv = vals(kXs), wr(5);
  h = 0;
  for (int i = 4; i >= 0; --i) wr[i] = h, h = h * 2 + xv[i];
  EXPECT_DOUBLE_EQ(cr.item<double>(), h);
  expect_near(ysr, wr);
}

// The body sees each x slice as a view of the stacked xs (no copy): elementwise steps that
// would compute in place into a slice they own must not write into the caller's array.
TEST(ScanTest, BodyNeverWritesIntoTheStackedXs) {
  Array xs = reshape(astype(iota(DType::kI32, {4 * 64}), DType::kF32), {4, 64});
  eval({xs});
  std::vector<float> before = xs.to_vector<float>();
  auto [c, ys] = scan(
      [](const Array& c, const Array& x) {
        Array y = exp(x * 0.01f) + 1.0f;  // in-place candidates on the slice
        return std::pair{c + y, y};
      },
      zeros({64}), xs);
  eval({c, ys});
  EXPECT_EQ(xs.to_vector<float>(), before);
  std::vector<float> y = ys.to_vector<float>(), cv = c.to_vector<float>();
  for (int j = 0; j < 64; ++j) {
    double total = 0;
    for (int t = 0; t < 4; ++t) {
      const double want = std::exp(before[t * 64 + j] * 0.01) + 1.0;
      EXPECT_NEAR(y[t * 64 + j], want, 1e-5 * want);
      total += want;
    }
    EXPECT_NEAR(cv[j], total, 1e-5 * total);
  }
}

// The body computes each y straight into its row of the stacked output where it can (an
// instruction's result, rows of whole 64 bytes, an output that shares no input's buffer);
// ys that are an x slice, an alias of one, the new carry, or read again later in the body,
// rows of 24 bytes, a reversed scan, and a jitted scan over donated xs of the ys' aval all
// still give a plain loop's values.
TEST(ScanTest, YsComputedInTheirStackedRowsMatchALoop) {
  constexpr int kT = 5, kW = 64;
  std::vector<float> xv(kT * kW);
  for (int i = 0; i < kT * kW; ++i) xv[i] = static_cast<float>((i * 37) % 101) * 0.01f - 0.5f;
  auto body = [](const Array& c, const Array& x) {
    Array y = x * c + 1.0f;     // an instruction's result
    Array next = c + y * 0.5f;  // y is read again after it was computed
    return std::pair{next, std::vector<Array>{y, x, reshape(x, {2, kW / 2}), next, -y}};
  };
  auto loop = [&](bool reverse) {
    std::vector<std::vector<float>> ys(5, std::vector<float>(kT * kW));
    std::vector<float> c(kW, 0.25f);
    for (int s = 0; s < kT; ++s) {
      const int t = reverse ? kT - 1 - s : s;
      for (int j = 0; j < kW; ++j) {
        const float x = xv[t * kW + j], y = x * c[j] + 1.0f;
        c[j] = c[j] + y * 0.5f;
        const float row[5] = {y, x, x, c[j], -y};
        for (int k = 0; k < 5; ++k) ys[k][t * kW + j] = row[k];
      }
    }
    return ys;
  };
  for (bool reverse : {false, true}) {
    Array xs = array<float>(xv, Shape{kT, kW});
    auto [c, ys] = scan(body, full({kW}, 0.25f), xs, {.reverse = reverse});
    std::vector<std::vector<float>> want = loop(reverse);
    for (int k = 0; k < 5; ++k) {  // near: the loop's x * c + 1 may be one FMA here
      std::vector<float> got = ys[k].to_vector<float>();
      ASSERT_EQ(got.size(), want[k].size());
      for (size_t i = 0; i < got.size(); ++i) {
        EXPECT_NEAR(got[i], want[k][i], 1e-5) << "y " << k << " at " << i << " rev " << reverse;
      }
    }
    EXPECT_EQ(xs.to_vector<float>(), xv);
  }
  {  // rows of three doubles: 24 bytes, copied
    Array xs = reshape(astype(iota(DType::kI32, {15}), DType::kF64), {5, 3});
    auto [c, ys] = scan(
        [](const Array& c, const Array& x) {
          return std::pair{c + x, c * x};
        },
        ones({3}, DType::kF64), xs);
    std::vector<double> cv(3, 1.0), want;
    for (int t = 0; t < 5; ++t) {
      for (int j = 0; j < 3; ++j) {
        want.push_back(cv[j] * (t * 3 + j));
        cv[j] += t * 3 + j;
      }
    }
    EXPECT_EQ(ys.to_vector<double>(), want);
  }
  // Jitted with xs donated: ys of xs' aval, computed in their rows while the body reads xs'.
  auto f = [](const Array& xs) {
    return scan(
               [](const Array& c, const Array& x) {
                 return std::pair{c + x, x * 2.0f + c};
               },
               zeros({kW}), xs)
        .second;
  };
  auto j = jit(f, {.donate_argnums = {0}});
  std::vector<float> want(kT * kW), c(kW, 0.0f);
  for (int t = 0; t < kT; ++t) {
    for (int i = 0; i < kW; ++i) {
      want[t * kW + i] = xv[t * kW + i] * 2.0f + c[i];
      c[i] += xv[t * kW + i];
    }
  }
  for (int call = 0; call < 2; ++call) {
    EXPECT_EQ(j(array<float>(xv, Shape{kT, kW})).to_vector<float>(), want) << "call " << call;
  }
}

TEST(ScanTest, PytreeCarryNoXsAndWeakInit) {
  using C = std::pair<Array, std::vector<Array>>;
  C init{zeros({2}, DType::kF32), {ones({}, DType::kI32)}};
  auto [c, ys] = scan(
      [](const C& c, const std::tuple<>&) {
        return std::pair{C{c.first + 1.0f, {c.second[0] * 2}}, std::tuple{c.second[0]}};
      },
      init, std::tuple<>{}, {.length = 4});
  expect_near(c.first, {4, 4});
  EXPECT_EQ(c.second[0].item<int>(), 16);
  expect_near(std::get<0>(ys), {1, 2, 4, 8});
  // A weakly typed init takes the body's dtype.
  auto [s, unused] = scan(
      [](const Array& c, const Array& x) {
        return std::pair{c + x, c};
      },
      Array(0.0), ones({3}, DType::kF32));
  EXPECT_EQ(s.dtype(), DType::kF32);
  EXPECT_EQ(s.item<float>(), 3.0f);
}

TEST(ScanTest, GradEqualsGradOfUnrolledLoop) {
  Array w = array<double>({0.7}, Shape{});
  Array g = std::get<0>(grad(loss_scan, argnums<0, 1>)(w, kXs));
  auto [gw, gx] = grad(loss_scan, argnums<0, 1>)(w, kXs);
  auto [uw, ux] = grad(loss_unrolled, argnums<0, 1>)(w, kXs);
  EXPECT_NEAR(gw.item<double>(), uw.item<double>(), 1e-12);
  EXPECT_NEAR(g.item<double>(), uw.item<double>(), 1e-12);
  expect_near(gx, vals(ux));
  // Forward mode and second order too.
  auto [v, t] = jvp([&](const Array& w) { return loss_scan(w, kXs); }, std::tuple{w},
                    std::tuple{ones_like(w)});
  EXPECT_NEAR(t.item<double>(), uw.item<double>(), 1e-12);
  Array h = grad(grad([&](const Array& w) { return loss_scan(w, kXs); }))(w);
  Array hu = grad(grad([&](const Array& w) { return loss_unrolled(w, kXs); }))(w);
  EXPECT_NEAR(h.item<double>(), hu.item<double>(), 1e-10);
}

TEST(ScanTest, VmapOverXsAndClosedOverWeights) {
  Array xs = array<double>({0.1, 0.2, 0.3, 0.4, 0.5, 0.6}, Shape{2, 3});  // batch 2, length 3
  Array ws = array<double>({0.5, 1.5}, Shape{2});
  Array out = vmap([](const Array& w, const Array& x) { return loss_scan(w, x); })(ws, xs);
  for (int b = 0; b < 2; ++b) {
    Array wb = reshape(slice(ws, {b}, {b + 1}), {}),
          xb = reshape(slice(xs, {b, 0}, {b + 1, 3}), {3});
    EXPECT_NEAR(vals(out)[b], loss_unrolled(wb, xb).item<double>(), 1e-12);
  }
  // The carry starts unbatched and becomes batched after one step (fixpoint).
  Array g = vmap(grad([](const Array& w) { return loss_scan(w, kXs); }))(ws);
  for (int b = 0; b < 2; ++b) {
    Array wb = reshape(slice(ws, {b}, {b + 1}), {});
    Array u = grad([](const Array& w) { return loss_unrolled(w, kXs); })(wb);
    EXPECT_NEAR(vals(g)[b], u.item<double>(), 1e-12);
  }
}

TEST(ScanTest, Errors) {
  expect_error(
      [] {
        scan(
            [](const Array& c, const Array& x) {
              return std::pair{astype(c + x, DType::kF64), x};
            },
            zeros({2}, DType::kF32), zeros({3, 2}, DType::kF32));
      },
      "[scan]", "carry output 0 is f64[2] but the carry input is f32[2]");
  expect_error(
      [] {
        scan(
            [](const Array& c, const std::tuple<>&) {
              return std::pair{c, c};
            },
            zeros({}), std::tuple<>{});
      },
      "[scan]", "length");
}

TEST(CondTest, SemanticsGradAndErrors) {
  auto f = [](const Array& p, const Array& x) {
    return cond(
        p, [](const Array& a) { return a * a; }, [](const Array& a) { return -a; }, x);
  };
  Array x = array<double>({1.5, -2.0}, Shape{2});
  expect_near(f(Array(true), x), {2.25, 4.0});
  expect_near(f(Array(false), x), {-1.5, 2.0});
  expect_near(grad([&](const Array& x) { return sum(f(Array(true), x)); })(x), {3.0, -4.0});
  expect_near(grad([&](const Array& x) { return sum(f(Array(false), x)); })(x), {-1, -1});
  auto [y, t] = jvp([&](const Array& x) { return f(Array(true), x); }, std::tuple{x},
                    std::tuple{ones_like(x)});
  expect_near(t, {3.0, -4.0});
  expect_error(
      [&] {
        cond(
            Array(true), [](const Array& a) { return a; }, [](const Array& a) { return sum(a); },
            x);
      },
      "[cond]", "true_fn returns (f64[2])");
  expect_error(
      [&] {
        cond(
            Array(true), [](const Array& a) { return a; },
            [](const Array& a) { return astype(a, DType::kF32); }, x);
      },
      "[cond]", "f32[2]");
}

TEST(CondTest, SwitchClampsIndex) {
  std::vector<std::function<Array(const Array&)>> bs = {[](const Array& a) { return a + 1.0; },
                                                        [](const Array& a) { return a * 10.0; },
                                                        [](const Array& a) { return -a; }};
  Array x = array<double>({2.0}, Shape{1});
  expect_near(switch_case(Array(-5), bs, x), {3});
  expect_near(switch_case(Array(1), bs, x), {20});
  expect_near(switch_case(Array(7), bs, x), {-2});
}

TEST(CondTest, VmapWithBatchedAndUnbatchedPredicate) {
  auto f = [](const Array& x) {
    return cond(
        sum(x) > 0, [](const Array& a) { return a * 2.0; }, [](const Array& a) { return a - 1.0; },
        x);
  };
  Array xs = array<double>({1, 2, -3, -4, 5, -1}, Shape{3, 2});
  expect_near(vmap(f)(xs), {2, 4, -4, -5, 10, -2});
  auto g = [](const Array& p, const Array& x) {
    return cond(
        p, [](const Array& a) { return a * 2.0; }, [](const Array& a) { return a; }, x);
  };
  expect_near(vmap(g, {none, 0})(Array(true), xs), {2, 4, -6, -8, 10, -2});
}

TEST(WhileTest, SemanticsJvpVmapAndVjpError) {
  auto collatz = [](const Array& n) {
    auto out = while_loop(
        [](const std::pair<Array, Array>& c) { return c.first != 1; },
        [](const std::pair<Array, Array>& c) {
          Array n = c.first;
          return std::pair{where(n % 2 == 0, floor_divide(n, 2), n * 3 + 1), c.second + 1};
        },
        std::pair{n, zeros({}, DType::kI32)});
    return out.second;
  };
  EXPECT_EQ(collatz(Array(6)).item<int>(), 8);
  // Batched predicate: each element stops after its own number of steps.
  Array ns = array<int32_t>({6, 1, 7, 2}, Shape{4});
  EXPECT_EQ(vmap(collatz)(ns).to_vector<int>(), (std::vector<int>{8, 0, 16, 1}));
  // x <- x * 1.5 while x < 10: jvp is the product of the factors.
  auto grow = [](const Array& x) {
    return while_loop([](const Array& v) { return v < 10.0; },
                      [](const Array& v) { return v * 1.5; }, x);
  };
  auto [y, t] =
      jvp(grow, std::tuple{Array(1.0) * ones({}, DType::kF64)}, std::tuple{ones({}, DType::kF64)});
  EXPECT_NEAR(y.item<double>(), std::pow(1.5, 6), 1e-12);
  EXPECT_NEAR(t.item<double>(), std::pow(1.5, 6), 1e-12);
  expect_error([&] { grad(grow)(ones({}, DType::kF64)); }, "[while_loop]",
               "Reverse-mode differentiation does not work for lax.while_loop");
}

TEST(ForiTest, ValuesAndGrad) {
  auto f = [](const Array& x) {
    return fori_loop(
        1, 4, [](const Array& i, const Array& c) { return c * astype(i, c.dtype()) + c; }, x);
  };
  Array x = array<double>({2.0}, Shape{1});
  expect_near(f(x), {2.0 * 2 * 3 * 4});
  expect_near(grad([&](const Array& x) { return sum(f(x)); })(x), {24});
  expect_near(f(x * 0.0 + 5.0), {120});
  EXPECT_EQ(fori_loop(
                3, 3, [](const Array&, const Array& c) { return c + 1.0; }, x)
                .same(x),
            true);
}

}  // namespace
}  // namespace graft
