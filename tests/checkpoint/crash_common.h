// What the crash child saves at each step: a function of the step alone, so the parent can
// rebuild the expectation for whatever step it finds committed.
#pragma once

#include "checkpoint/item.h"
#include "tests/checkpoint/test_util.h"

namespace graft::checkpoint::testing {

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
