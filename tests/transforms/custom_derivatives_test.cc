// custom_jvp / custom_vjp under grad, jvp, vmap and their compositions.
#include "transforms/custom_derivatives.h"

#include <cmath>
#include <random>

#include "core/ops.h"
#include "core/primitives/debug.h"
#include "gtest/gtest.h"
#include "transforms/autodiff.h"
#include "transforms/jit.h"
#include "transforms/vmap.h"

namespace graft {
namespace {

std::vector<double> vals(const Array& a) { return a.to_vector<double>(); }

// A rule that deliberately differs from the true derivative, so tests can tell it was used.
auto scaled_sin = custom_jvp([](const Array& x) { return sin(x); },
                             [](const std::tuple<Array>& p, const std::tuple<Array>& t) {
                               const Array& x = std::get<0>(p);
                               return std::pair{sin(x), std::get<0>(t) * cos(x) * 10.0};
                             });

// Gradient clipping in the backward pass only.
auto clip_grad =
    custom_vjp([](const Array& x) { return x * 3.0; },
               [](const Array& x) {
                 return std::pair{x * 3.0, x};
               },
               [](const Array&, const Array& ct) { return std::tuple{clip(ct * 3.0, -1.0, 1.0)}; });

const Array kX = array<double>({0.3, -1.0, 2.0});

TEST(CustomJvpTest, RuleIsUsedByJvpGradAndVmap) {
  std::vector<double> want;
  for (double x : vals(kX)) want.push_back(10 * std::cos(x));
  auto [y, t] =
      jvp([](const Array& x) { return scaled_sin(x); }, std::tuple{kX}, std::tuple{ones_like(kX)});
  EXPECT_EQ(vals(y), vals(sin(kX)));
  for (size_t i = 0; i < 3; ++i) EXPECT_NEAR(vals(t)[i], want[i], 1e-12);
  Array g = grad([](const Array& x) { return sum(scaled_sin(x)); })(kX);
  for (size_t i = 0; i < 3; ++i) EXPECT_NEAR(vals(g)[i], want[i], 1e-12);
  // Per-example gradients through vmap(grad(.)).
  Array xs = reshape(kX, {3, 1});
  Array per = vmap([](const Array& x) {
    return grad([](const Array& z) { return sum(scaled_sin(z)); })(x);
  })(xs);
  for (size_t i = 0; i < 3; ++i) EXPECT_NEAR(vals(per)[i], want[i], 1e-12);
}

TEST(CustomVjpTest, BackwardRuleIsUsedByGradAndInsideVmap) {
  Array g = grad([](const Array& x) { return sum(clip_grad(x)); })(kX);
  EXPECT_EQ(vals(g), (std::vector<double>{1, 1, 1})) << "3 clipped to 1";
  Array g2 = grad([](const Array& x) { return sum(clip_grad(x) * 0.1); })(kX);
  for (double v : vals(g2)) EXPECT_NEAR(v, 0.3, 1e-12);
  // vmap of a function using it, and grad of a vmapped use.
  Array xs = array<double>({1, 2, 3, 4, 5, 6}, Shape{3, 2});
  Array ys = vmap([](const Array& x) { return clip_grad(x); })(xs);
  EXPECT_EQ(vals(ys), vals(xs * 3.0));
  Array gv = grad([&](const Array& x) {
    return sum(vmap([](const Array& r) { return clip_grad(r) * 0.1; })(x));
  })(xs);
  for (double v : vals(gv)) EXPECT_NEAR(v, 0.3, 1e-12);
  Array per = vmap(
      [](const Array& x) { return grad([](const Array& z) { return sum(clip_grad(z)); })(x); })(xs);
  EXPECT_EQ(vals(per), std::vector<double>(6, 1.0));
}

TEST(CustomVjpTest, ForwardModeIsAClearError) {
  try {
    jvp([](const Array& x) { return clip_grad(x); }, std::tuple{kX}, std::tuple{ones_like(kX)});
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("[custom_vjp] custom_vjp: forward-mode", 0), 0u)
        << e.what();
  }
}

// custom_vjp carries residuals (JAX's custom_vjp_call): under grad fwd runs once, f not at all,
// and bwd receives what fwd computed; without differentiation f runs and fwd does not. Runs are
// counted by debug_print lines (executed, not traced); traces by counters.
class CustomVjpResidualsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    prev_ = set_debug_print_sink([this](const std::string& s) { lines_.push_back(s); });
  }
  void TearDown() override { set_debug_print_sink(prev_); }
  int count(const std::string& line) const {
    return static_cast<int>(std::count(lines_.begin(), lines_.end(), line));
  }

  // f(x) = sin(x); fwd also returns sin(x) and, as residual, x * c with c drawn at trace time
  // (a value bwd cannot recompute); bwd returns ct * residual, so grad(sum f)(x) = x * c.
  auto make() {
    return custom_vjp(
        [this](const Array& x) {
          ++f_traces_;
          return sin(debug_print("f ran", x)[0]);
        },
        [this](const Array& x) {
          ++fwd_traces_;
          double c = std::uniform_real_distribution<double>(1.0, 2.0)(rng_);
          drawn_.push_back(c);
          Array y = debug_print("fwd ran", x)[0];
          return std::pair{sin(y), y * c};
        },
        [](const Array& res, const Array& ct) { return std::tuple{ct * res}; }, "traced_residual");
  }

  std::vector<std::string> lines_;
  DebugSink prev_;
  int f_traces_ = 0, fwd_traces_ = 0;
  std::vector<double> drawn_;
  std::mt19937 rng_{1234};
};

TEST_F(CustomVjpResidualsTest, GradRunsFwdOnceAndBwdGetsItsResiduals) {
  auto f = make();
  auto loss = [&](const Array& x) { return sum(f(x)); };
  Array y = f(kX);
  EXPECT_EQ(vals(y), vals(sin(kX)));
  EXPECT_EQ(count("f ran"), 1);
  EXPECT_EQ(count("fwd ran"), 0) << "without differentiation f runs, not fwd";
  for (int call = 0; call < 3; ++call) {
    lines_.clear();
    int traces = fwd_traces_;
    auto [v, g] = value_and_grad(loss)(kX);
    EXPECT_EQ(fwd_traces_, traces + 1) << "fwd is traced once per grad call";
    EXPECT_NEAR(v.item<double>(), sum(sin(kX)).item<double>(), 1e-12);
    // bwd saw the residual of this call's fwd trace: x * c with the c drawn then.
    const double c = drawn_.back();
    for (size_t i = 0; i < 3; ++i) EXPECT_NEAR(vals(g)[i], vals(kX)[i] * c, 1e-12);
    EXPECT_EQ(count("fwd ran"), 1) << "the forward pass runs fwd once";
    EXPECT_EQ(count("f ran"), 0) << "f does not run under grad";
  }
  EXPECT_NE(drawn_[0], drawn_[1]);
}

TEST_F(CustomVjpResidualsTest, JitOfGradMatchesGradAndRunsFwdOncePerCall) {
  auto f = make();
  auto g = grad([&](const Array& x) { return sum(f(x)); });
  auto jg = jit(g);
  Array got = jg(kX);
  const double c = drawn_.back();  // the jit trace's fwd drew it
  for (size_t i = 0; i < 3; ++i) EXPECT_NEAR(vals(got)[i], vals(kX)[i] * c, 1e-12);
  EXPECT_EQ(count("fwd ran"), 1);
  EXPECT_EQ(count("f ran"), 0);
  lines_.clear();
  int traces = fwd_traces_;
  Array again = jg(kX * 2.0);
  EXPECT_EQ(fwd_traces_, traces) << "a cached call traces nothing";
  EXPECT_EQ(count("fwd ran"), 1);
  EXPECT_EQ(count("f ran"), 0);
  for (size_t i = 0; i < 3; ++i) EXPECT_NEAR(vals(again)[i], 2 * vals(kX)[i] * c, 1e-12);
  // Eager grad of the same function: the same formula with its own c.
  Array eager = g(kX);
  for (size_t i = 0; i < 3; ++i) EXPECT_NEAR(vals(eager)[i], vals(kX)[i] * drawn_.back(), 1e-12);
}

TEST(CustomVjpTest, SecondOrderDifferentiatesThroughFwdsResiduals) {
  // bwd(res, ct) = 2 ct res with res = cos(x): grad = 2 cos(x); differentiating that again
  // goes through fwd's own derivative (as in JAX): -2 sin(x).
  auto f = custom_vjp([](const Array& x) { return sin(x); },
                      [](const Array& x) {
                        return std::pair{sin(x), cos(x)};
                      },
                      [](const Array& res, const Array& ct) { return std::tuple{ct * res * 2.0}; });
  auto g = [&](const Array& x) { return grad([&](const Array& z) { return sum(f(z)); })(x); };
  Array g1 = g(kX);
  Array g2 = grad([&](const Array& x) { return sum(g(x)); })(kX);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_NEAR(vals(g1)[i], 2 * std::cos(vals(kX)[i]), 1e-12);
    EXPECT_NEAR(vals(g2)[i], -2 * std::sin(vals(kX)[i]), 1e-12);
  }
  Array jg2 = jit(grad([&](const Array& x) { return sum(g(x)); }))(kX);
  for (size_t i = 0; i < 3; ++i) EXPECT_NEAR(vals(jg2)[i], vals(g2)[i], 1e-12);
}

TEST(CustomVjpTest, ResidualsOfSeveralKindsUnderVmapOfGrad) {
  // Residuals as a pytree with an integer member; bwd uses both.
  auto f = custom_vjp([](const Array& x, const Array& w) { return x * w; },
                      [](const Array& x, const Array& w) {
                        return std::pair{x * w, std::tuple{w, astype(x > 0.0, DType::kI32), x}};
                      },
                      [](const std::tuple<Array, Array, Array>& res, const Array& ct) {
                        const auto& [w, pos, x] = res;
                        return std::tuple{ct * w * astype(pos, DType::kF64), ct * x * 10.0};
                      });
  Array xs = array<double>({1, -2, 3, 4, -5, 6}, Shape{2, 3});
  Array w = array<double>({0.5, 2.0, -1.0});
  Array per = vmap(
      [&](const Array& x) { return grad([&](const Array& z) { return sum(f(z, w)); })(x); })(xs);
  std::vector<double> want;
  for (double x : vals(xs)) want.push_back(x > 0 ? 1 : 0);
  std::vector<double> pv = vals(per), wv = vals(w);
  for (size_t i = 0; i < 6; ++i) EXPECT_NEAR(pv[i], want[i] * wv[i % 3], 1e-12);
  Array x0 = array<double>({1, -2, 3});
  Array gw = grad([&](const Array& v) { return sum(f(x0, v)); })(w);
  EXPECT_EQ(vals(gw), vals(x0 * 10.0)) << "bwd's second cotangent";
}

}  // namespace
}  // namespace graft
