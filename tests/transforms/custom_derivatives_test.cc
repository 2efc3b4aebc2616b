// custom_jvp / custom_vjp under grad, jvp, vmap and their compositions.
#include "transforms/custom_derivatives.h"

#include <cmath>

#include "core/ops.h"
#include "gtest/gtest.h"
#include "transforms/autodiff.h"
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

}  // namespace
}  // namespace graft
