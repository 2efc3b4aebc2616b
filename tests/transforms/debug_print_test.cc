// debug_print: eager, inside jit (every call, cache hits included, results unused), vmap,
// grad, and inside scan / cond / while_loop bodies with the print's result unused.
#include <string>
#include <vector>

#include "core/ops.h"
#include "core/primitives/debug.h"
#include "gtest/gtest.h"
#include "transforms/autodiff.h"
#include "transforms/control_flow.h"
#include "transforms/jit.h"
#include "transforms/vmap.h"

namespace graft {
namespace {

class DebugPrintTest : public ::testing::Test {
 protected:
  void SetUp() override {
    prev_ = set_debug_print_sink([this](const std::string& s) { lines_.push_back(s); });
  }
  void TearDown() override { set_debug_print_sink(prev_); }
  std::vector<std::string> lines_;
  DebugSink prev_;
};

TEST_F(DebugPrintTest, EagerPrintsAtOnceAndReturnsInputs) {
  Array x = array<float>({1, 2});
  std::vector<Array> r = debug_print("x = {}, n = {}!", x, array<int32_t>({7}));
  ASSERT_EQ(lines_.size(), 1u);
  EXPECT_EQ(lines_[0], "x = " + to_string(x) + ", n = " + to_string(array<int32_t>({7})) + "!");
  EXPECT_EQ(r[0].to_vector<float>(), (std::vector<float>{1, 2}));
  debug_print("no arrays");
  EXPECT_EQ(lines_.back(), "no arrays");
}

TEST_F(DebugPrintTest, JitPrintsOnEveryCallEvenWhenUnused) {
  auto f = jit([](const Array& x) {
    debug_print("inside: {}", exp(x));  // results unused: DCE must keep it
    return x * 2.0f;
  });
  Array x = array<float>({0, 0});
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(f(x).to_vector<float>(), (std::vector<float>{0, 0}));
    ASSERT_EQ(lines_.size(), static_cast<size_t>(i + 1));
    EXPECT_EQ(lines_.back(), "inside: " + to_string(array<float>({1, 1})));
  }
  EXPECT_EQ(f.stats().hits, 2);
  // Different values on a cache hit print the new values.
  f(array<float>({0, 1}));
  EXPECT_EQ(lines_.back(), "inside: " + to_string(exp(array<float>({0, 1}))));
}

TEST_F(DebugPrintTest, JitOfValueNotDependingOnArgumentsPrintsWhenTraced) {
  // Its inputs are concrete while tracing, so it prints then (once), like a C++ print.
  auto f = jit([](const Array& x) {
    debug_print("c = {}", array<float>({3}));
    return x + 1.0f;
  });
  f(array<float>({1}));
  f(array<float>({1}));
  EXPECT_EQ(lines_.size(), 1u);
}

TEST_F(DebugPrintTest, VmapPrintsBatchedValues) {
  Array xs = array<float>({1, 2, 3, 4}, Shape{2, 2});
  Array y = vmap([](const Array& x) { return debug_print("{}", x * 1.0f)[0] + 1.0f; })(xs);
  ASSERT_EQ(lines_.size(), 1u);
  EXPECT_EQ(lines_[0], to_string(xs));
  EXPECT_EQ(y.to_vector<float>(), (std::vector<float>{2, 3, 4, 5}));
}

TEST_F(DebugPrintTest, GradPassesCotangentsThrough) {
  auto f = [](const Array& x) { return sum(debug_print("{}", x * x)[0]); };
  Array g = grad(f)(array<float>({1, 3}));
  EXPECT_EQ(g.to_vector<float>(), (std::vector<float>{2, 6}));
  ASSERT_EQ(lines_.size(), 1u);  // the primal, once (not the cotangents)
  EXPECT_EQ(lines_[0], to_string(array<float>({1, 9})));
  auto jg = jit(grad(f));
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(jg(array<float>({1, 3})).to_vector<float>(), (std::vector<float>{2, 6}));
  }
  EXPECT_EQ(lines_.size(), 3u);  // every call of the compiled gradient
}

TEST_F(DebugPrintTest, GradAndVmapKeepAPrintWhoseResultIsUnused) {
  // The function is traced into a closed program whose effects stay in it, so the
  // transforms' forward pass prints (once, the primal) although no output depends on it.
  auto f = [](const Array& x) {
    debug_print("x = {}", x);
    return sum(x * x);
  };
  Array g = grad(f)(array<float>({1, 3}));
  EXPECT_EQ(g.to_vector<float>(), (std::vector<float>{2, 6}));
  ASSERT_EQ(lines_.size(), 1u);
  EXPECT_EQ(lines_[0], "x = " + to_string(array<float>({1, 3})));
  Array v = vmap(f)(array<float>({1, 2, 3, 4}, Shape{2, 2}));
  EXPECT_EQ(v.to_vector<float>(), (std::vector<float>{5, 25}));
  ASSERT_EQ(lines_.size(), 2u);
  EXPECT_EQ(lines_[1], "x = " + to_string(array<float>({1, 2, 3, 4}, Shape{2, 2})));
}

// Bodies whose print's result is unused: the print is still part of the body (traced as an
// effect), so it happens once per iteration / taken branch, eagerly and under jit.
Array scan_printing_unused(const Array& x) {
  auto [c, ys] = scan(
      [](const Array& c, const Array& t) {
        debug_print("scan c = {}", c);
        return std::pair{c + t, std::tuple<>{}};
      },
      x, ones({3}));
  return c;
}

Array cond_printing_unused(const Array& x) {
  return cond(
      sum(x) > 0.0f,
      [](const Array& a) {
        debug_print("true {}", a);
        return a * 2.0f;
      },
      [](const Array& a) {
        debug_print("false {}", a);
        return a - 1.0f;
      },
      x);
}

Array while_printing_unused(const Array& x) {
  return while_loop([](const Array& c) { return sum(c) < 3.0f; },
                    [](const Array& c) {
                      debug_print("while c = {}", c);
                      return c + 1.0f;
                    },
                    x);
}

TEST_F(DebugPrintTest, ScanBodyPrintWithUnusedResult) {
  Array x = array<float>({0});
  EXPECT_EQ(scan_printing_unused(x).to_vector<float>(), std::vector<float>{3});
  ASSERT_EQ(lines_.size(), 3u);
  EXPECT_EQ(lines_[0], "scan c = " + to_string(array<float>({0})));
  EXPECT_EQ(lines_[2], "scan c = " + to_string(array<float>({2})));
  auto f = jit(scan_printing_unused);
  for (int call = 0; call < 2; ++call) {
    lines_.clear();
    EXPECT_EQ(f(x).to_vector<float>(), std::vector<float>{3});
    ASSERT_EQ(lines_.size(), 3u);
    EXPECT_EQ(lines_[1], "scan c = " + to_string(array<float>({1})));
  }
}

TEST_F(DebugPrintTest, CondBranchPrintWithUnusedResult) {
  Array pos = array<float>({2}), neg = array<float>({-2});
  EXPECT_EQ(cond_printing_unused(pos).to_vector<float>(), std::vector<float>{4});
  EXPECT_EQ(cond_printing_unused(neg).to_vector<float>(), std::vector<float>{-3});
  ASSERT_EQ(lines_.size(), 2u);  // only the branch taken prints
  EXPECT_EQ(lines_[0], "true " + to_string(pos));
  EXPECT_EQ(lines_[1], "false " + to_string(neg));
  auto f = jit(cond_printing_unused);
  lines_.clear();
  EXPECT_EQ(f(pos).to_vector<float>(), std::vector<float>{4});
  EXPECT_EQ(f(neg).to_vector<float>(), std::vector<float>{-3});
  ASSERT_EQ(lines_.size(), 2u);
  EXPECT_EQ(lines_[0], "true " + to_string(pos));
  EXPECT_EQ(lines_[1], "false " + to_string(neg));
}

TEST_F(DebugPrintTest, WhileBodyPrintWithUnusedResult) {
  Array x = array<float>({0});
  EXPECT_EQ(while_printing_unused(x).to_vector<float>(), std::vector<float>{3});
  ASSERT_EQ(lines_.size(), 3u);
  EXPECT_EQ(lines_[2], "while c = " + to_string(array<float>({2})));
  auto f = jit(while_printing_unused);
  for (int call = 0; call < 2; ++call) {
    lines_.clear();
    EXPECT_EQ(f(x).to_vector<float>(), std::vector<float>{3});
    ASSERT_EQ(lines_.size(), 3u);
    EXPECT_EQ(lines_[0], "while c = " + to_string(array<float>({0})));
  }
}

// The loop's outputs unused too: the loop is kept for its body's print.
TEST_F(DebugPrintTest, JitKeepsALoopWhoseOnlyUseIsItsBodyPrint) {
  auto f = jit([](const Array& x) {
    scan_printing_unused(x);
    while_printing_unused(x);
    cond_printing_unused(x);
    return x * 2.0f;
  });
  EXPECT_EQ(f(array<float>({1})).to_vector<float>(), std::vector<float>{2});
  EXPECT_EQ(lines_.size(), 3u + 2u + 1u);
}

// A cond whose branches return nothing but print: the print still happens.
TEST_F(DebugPrintTest, CondWithoutOutputsStillPrints) {
  auto f = [](const Array& x) {
    cond(
        sum(x) > 0.0f,
        [](const Array& a) {
          debug_print("pos {}", a);
          return std::tuple<>{};
        },
        [](const Array&) { return std::tuple<>{}; }, x);
    return x + 1.0f;
  };
  Array x = array<float>({1});
  f(x);
  ASSERT_EQ(lines_.size(), 1u);
  EXPECT_EQ(lines_[0], "pos " + to_string(x));
  lines_.clear();
  EXPECT_EQ(jit(f)(x).to_vector<float>(), std::vector<float>{2});
  EXPECT_EQ(lines_.size(), 1u);
}

// A scan with no carry and no ys that only prints: once per step.
TEST_F(DebugPrintTest, ScanWithoutOutputsStillPrints) {
  auto f = [](const Array& xs) {
    scan(
        [](std::tuple<>, const Array& x) {
          debug_print("x = {}", x);
          return std::pair{std::tuple<>{}, std::tuple<>{}};
        },
        std::tuple<>{}, xs);
    return xs * 2.0f;
  };
  Array xs = array<float>({1, 2, 3});
  f(xs);
  ASSERT_EQ(lines_.size(), 3u);
  EXPECT_EQ(lines_[2], "x = " + to_string(Array(3.0f)));
  lines_.clear();
  EXPECT_EQ(jit(f)(xs).to_vector<float>(), (std::vector<float>{2, 4, 6}));
  EXPECT_EQ(lines_.size(), 3u);
}

}  // namespace
}  // namespace graft
