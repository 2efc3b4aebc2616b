// Helpers shared by the manager tests: a one-leaf checkpoint whose value is its step, and
// opening a manager that the test expects to open.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "checkpoint/manager.h"
#include "core/ops.h"
#include "gtest/gtest.h"

namespace graft::checkpoint::testing {

inline Composite small(int64_t step) { return {{"x", Item::tree(full({2}, double(step)))}}; }

// The manager, or null (with a test failure) when open() fails.
inline std::unique_ptr<CheckpointManager> open_or_die(const std::string& dir,
                                                      CheckpointManagerOptions o = {}) {
  auto m = CheckpointManager::open(dir, std::move(o));
  EXPECT_TRUE(m.ok()) << m.status();
  return m.ok() ? std::move(*m) : nullptr;
}

}  // namespace graft::checkpoint::testing
