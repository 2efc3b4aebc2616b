// debug_print: eager, inside jit (every call, cache hits included, results unused), vmap and
// grad.
#include <string>
#include <vector>

#include "core/ops.h"
#include "core/primitives/debug.h"
#include "gtest/gtest.h"
#include "transforms/autodiff.h"
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

}  // namespace
}  // namespace graft
