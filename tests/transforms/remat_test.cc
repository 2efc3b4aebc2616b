// checkpoint (remat): gradients equal the plain ones under every policy, and the values the
// pullback keeps shrink as the policy saves less.
#include "transforms/remat.h"

#include <cmath>
#include <string>

#include "core/ops.h"
#include "gtest/gtest.h"
#include "transforms/autodiff.h"
#include "transforms/custom_derivatives.h"
#include "transforms/jit.h"
#include "transforms/vmap.h"

namespace graft {
namespace {

Array det(Shape shape, double seed) {
  std::vector<double> v(numel(shape));
  for (size_t i = 0; i < v.size(); ++i) v[i] = std::sin(seed * 7.1 + 1.3 * i) * 0.8;
  return array<double>(v, shape);
}

// An MLP-like body: dots and elementwise ops between them.
Array body(const Array& x, const Array& w1, const Array& w2) {
  Array a = matmul(x, w1);
  Array b = sin(a);
  Array c = b * a;
  Array d = matmul(c, w2);
  Array e = exp(d * 0.5);
  return sum(e * e);
}

void expect_close(const Array& a, const Array& b, double tol = 1e-12) {
  ASSERT_EQ(a.shape(), b.shape());
  auto va = a.to_vector<double>(), vb = b.to_vector<double>();
  for (size_t i = 0; i < va.size(); ++i) EXPECT_NEAR(va[i], vb[i], tol * (1 + std::abs(vb[i])));
}

const Array kX = det({4, 3}, 1), kW1 = det({3, 5}, 2), kW2 = det({5, 2}, 3);

std::vector<RematPolicy> policies() {
  return {nothing_saveable(), dots_saveable(), everything_saveable(), save_only_these_names({"c"})};
}

Array named_body(const Array& x, const Array& w1, const Array& w2) {
  Array a = checkpoint_name(matmul(x, w1), "a");
  Array c = checkpoint_name(sin(a) * a, "c");
  return sum(exp(matmul(c, w2)));
}

TEST(RematTest, GradientsEqualPlainGradientsUnderEveryPolicy) {
  auto want = grad(body, argnums<0, 1, 2>)(kX, kW1, kW2);
  auto want_named = grad(named_body, argnums<0, 1, 2>)(kX, kW1, kW2);
  for (const RematPolicy& p : policies()) {
    SCOPED_TRACE(p.name);
    expect_close(checkpoint(body, p)(kX, kW1, kW2), body(kX, kW1, kW2));
    auto got = grad(checkpoint(body, p), argnums<0, 1, 2>)(kX, kW1, kW2);
    expect_close(std::get<0>(got), std::get<0>(want));
    expect_close(std::get<1>(got), std::get<1>(want));
    expect_close(std::get<2>(got), std::get<2>(want));
    auto got_named = grad(checkpoint(named_body, p), argnums<0, 1, 2>)(kX, kW1, kW2);
    expect_close(std::get<1>(got_named), std::get<1>(want_named));
    auto jitted = jit(grad(checkpoint(body, p), argnums<1>));
    expect_close(jitted(kX, kW1, kW2), std::get<1>(want));
  }
}

TEST(RematTest, ComposesWithJvpHigherOrderVmapAndClosures) {
  for (const RematPolicy& p : policies()) {
    SCOPED_TRACE(p.name);
    auto f = [](const Array& x) { return sum(sin(matmul(x, kW1))) * sum(x); };
    auto cf = checkpoint(f, p);
    auto second = [](auto g) { return grad([g](const Array& x) { return sum(sin(grad(g)(x))); }); };
    expect_close(second(cf)(kX), second(f)(kX));
    Array v = det({4, 3}, 5);
    expect_close(jvp(grad(cf), std::tuple{kX}, std::tuple{v}).second,
                 jvp(grad(f), std::tuple{kX}, std::tuple{v}).second);
    Array xs = det({2, 4, 3}, 6);
    expect_close(vmap(grad(cf))(xs), vmap(grad(f))(xs));
    expect_close(grad([&](const Array& x) { return sum(vmap(cf)(x)); })(xs),
                 grad([&](const Array& x) { return sum(vmap(f)(x)); })(xs));
    // A closed-over array of an outer trace still gets its gradient.
    auto outer = [&](const Array& w) {
      return checkpoint([&](const Array& x) { return sum(tanh(matmul(x, w))); }, p)(kX);
    };
    auto plain = [&](const Array& w) { return sum(tanh(matmul(kX, w))); };
    expect_close(grad(outer)(kW1), grad(plain)(kW1));
  }
}

int64_t total_bytes(const std::vector<SavedResidual>& r) {
  int64_t t = 0;
  for (const auto& s : r) t += s.bytes;
  return t;
}

TEST(RematTest, SavedResidualBytesShrinkWithThePolicy) {
  auto res = [](const RematPolicy& p) {
    return saved_residuals(checkpoint(body, p), kX, kW1, kW2);
  };
  auto nothing = res(nothing_saveable()), dots = res(dots_saveable()),
       everything = res(everything_saveable());
  auto plain = saved_residuals(body, kX, kW1, kW2);
  int64_t args_bytes = (12 + 15 + 10) * 8;
  // nothing_saveable keeps only the arguments; dots_saveable adds a (4x5) and d (4x2).
  EXPECT_EQ(total_bytes(nothing), args_bytes);
  EXPECT_EQ(total_bytes(dots), args_bytes + (20 + 8) * 8);
  EXPECT_LT(total_bytes(dots), total_bytes(everything));
  EXPECT_EQ(total_bytes(everything), total_bytes(plain));
  for (const auto& r : dots) {
    EXPECT_TRUE(r.source.rfind("argument", 0) == 0 || r.source == "remat/dot_general") << r.source;
  }
  std::string table = print_saved_residuals(checkpoint(body, dots_saveable()), kX, kW1, kW2);
  EXPECT_NE(table.find("remat/dot_general"), std::string::npos) << table;
  EXPECT_NE(table.find("total: 5 residuals, " + std::to_string(args_bytes + 224) + " bytes"),
            std::string::npos)
      << table;
}

TEST(RematTest, SaveOnlyTheseNamesKeepsExactlyTheNamedValues) {
  for (auto [names, want] : std::vector<std::pair<std::set<std::string>, int64_t>>{
           {{}, 0}, {{"a"}, 20 * 8}, {{"c"}, 20 * 8}, {{"a", "c"}, 40 * 8}}) {
    auto r = saved_residuals(checkpoint(named_body, save_only_these_names(names)), kX, kW1, kW2);
    int64_t named = 0;
    for (const auto& s : r) {
      if (s.source.rfind("argument", 0) == 0) continue;
      EXPECT_EQ(s.source, "remat/checkpoint_name");
      named += s.bytes;
    }
    EXPECT_EQ(named, want);
    EXPECT_EQ(total_bytes(r), (12 + 15 + 10) * 8 + want);
  }
}

TEST(RematTest, CustomVjpInsideACheckpointKeepsItsRule) {
  // bwd scales by 10 with fwd's residual cos(x): the recomputation inside the checkpoint's
  // pullback runs fwd and hands its residual to bwd under every policy.
  auto f = custom_vjp([](const Array& x) { return sin(x); },
                      [](const Array& x) {
                        return std::pair{sin(x), cos(x)};
                      },
                      [](const Array& r, const Array& ct) { return std::tuple{ct * r * 10.0}; });
  auto body = [&](const Array& x) { return sum(exp(f(x * 2.0))); };
  for (const RematPolicy& p : policies()) {
    SCOPED_TRACE(p.name);
    Array g = grad(checkpoint(body, p))(kX), jg = jit(grad(checkpoint(body, p)))(kX);
    Array want = exp(sin(kX * 2.0)) * cos(kX * 2.0) * 20.0;
    expect_close(g, want);
    expect_close(jg, want);
  }
}

TEST(RematTest, CheckpointNameIsTheIdentityUnderTransforms) {
  Array y = checkpoint_name(kX, "x");
  EXPECT_EQ(y.to_vector<double>(), kX.to_vector<double>());
  expect_close(grad([](const Array& x) { return sum(sin(checkpoint_name(x, "n"))); })(kX), cos(kX));
  EXPECT_THROW(checkpoint_name(Array(), "x"), Error);
}

}  // namespace
}  // namespace graft
