// What the crash child saves at each step: a function of the step alone, so the parent can
// rebuild the expectation for whatever step it finds committed.
#pragma once

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "checkpoint/item.h"
#include "tests/checkpoint/test_util.h"

namespace graft::checkpoint::testing {

// The crash child binary: in the test's runfiles, or beside the test when run by hand.
inline std::string crash_child_path() {
  const char* srcdir = std::getenv("TEST_SRCDIR");
  const char* ws = std::getenv("TEST_WORKSPACE");
  if (srcdir && ws) return std::string(srcdir) + "/" + ws + "/tests/checkpoint/crash_child";
  return (std::filesystem::path(program_invocation_name).parent_path() / "crash_child").string();
}

struct CrashState {
  std::vector<Array> params;
  std::map<std::string, Array> opt;
};

inline CrashState crash_state(int64_t step) {
  uint64_t s = static_cast<uint64_t>(step) * 1000;
  CrashState c;
  c.params = {pattern_array(DType::kF32, {256, 256}, s), pattern_array(DType::kBF16, {512}, s + 1),
              pattern_array(DType::kI64, {3}, s + 2)};
  c.opt = {{"mu", pattern_array(DType::kF32, {128, 64}, s + 3)},
           {"count", pattern_array(DType::kI32, {}, s + 4)}};
  return c;
}

inline Composite crash_items(int64_t step) {
  CrashState c = crash_state(step);
  return {{"params", Item::tree(c.params)},
          {"opt", Item::tree(c.opt)},
          {"loader", Item::json({{"step", step}, {"offset", step * 17}})}};
}

}  // namespace graft::checkpoint::testing
