// core/backend/cpu/kernel_profile.h: with GRAFT_PROFILE=1 (set in BUILD) every kernel run is
// counted per primitive and per (primitive, avals), and a loop's own time excludes its body's
// kernels.
#include "core/backend/cpu/kernel_profile.h"

#include <algorithm>
#include <string>

#include "core/ops.h"
#include "gtest/gtest.h"
#include "transforms/control_flow.h"
#include "transforms/jit.h"

namespace graft {
namespace {

// The calls column of the first row of `report` that starts with `row` (after the indent).
long long calls_of(const std::string& report, const std::string& row) {
  size_t at = report.find("\n  " + row + " ");
  if (at == std::string::npos) return -1;
  return std::stoll(report.substr(at + 3 + row.size()));
}

TEST(KernelProfileTest, CountsKernelsPerPrimitiveAndShape) {
  ASSERT_TRUE(cpu::profiling_enabled());
  Array a = ones({64, 32}), b = ones({32, 16});
  eval({a, b});
  cpu::profile_reset();
  auto f = jit([](const Array& a, const Array& b) { return matmul(a, b); });
  for (int i = 0; i < 3; ++i) eval({f(a, b)});
  std::string r = cpu::profile_report();
  EXPECT_EQ(calls_of(r, "dot_general"), 3) << r;
  EXPECT_NE(r.find("dot_general f32[64,32], f32[32,16] -> f32[64,16]"), std::string::npos) << r;
  EXPECT_EQ(calls_of(r, "scan"), -1) << r;
  cpu::profile_reset();
  EXPECT_EQ(calls_of(cpu::profile_report(), "dot_general"), -1);
}

TEST(KernelProfileTest, LoopsCountTheirBodysKernelsSeparately) {
  Array xs = ones({5, 8});
  eval({xs});
  cpu::profile_reset();
  auto [c, ys] = scan(
      [](const Array& c, const Array& x) { return std::pair{c + exp(x), x}; }, zeros({8}), xs);
  eval({c, ys});
  std::string r = cpu::profile_report();
  EXPECT_EQ(calls_of(r, "scan"), 1) << r;
  long long body = 0;  // the body's kernels, one row each, once per iteration at least
  for (const char* p : {"exp", "add", "fused_elementwise"}) body += std::max(0LL, calls_of(r, p));
  EXPECT_GE(body, 5) << r;
}

}  // namespace
}  // namespace graft
