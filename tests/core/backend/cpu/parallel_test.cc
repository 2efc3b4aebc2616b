#include "core/backend/cpu/parallel.h"

#include <atomic>
#include <stdexcept>
#include <vector>

#include "gtest/gtest.h"
#include "tests/util/tsan_suppressions.h"

namespace graft::cpu {
namespace {

TEST(ParallelTest, CoversEveryIndexExactlyOnce) {
  for (int64_t n : {0, 1, 7, 1000, 100003}) {
    std::vector<std::atomic<int>> hits(n);
    parallel_for(n, 13, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) hits[i]++;
    });
    for (int64_t i = 0; i < n; ++i) ASSERT_EQ(hits[i].load(), 1) << n << " " << i;
  }
}

// Chunks start at multiples of `align` and still cover every index once (the elementwise
// kernels rely on it so that a value's bits do not depend on the thread count).
TEST(ParallelTest, AlignedChunksStartAtMultiples) {
  for (int64_t n : {1, 65, 1000, 100003, 300001}) {
    std::vector<std::atomic<int>> hits(n);
    std::atomic<int> chunks{0};
    std::atomic<bool> misaligned{false};
    parallel_for_aligned(n, 13, 64, [&](int64_t b, int64_t e) {
      ++chunks;
      if (b % 64 != 0) misaligned = true;
      for (int64_t i = b; i < e; ++i) hits[i]++;
    });
    EXPECT_FALSE(misaligned.load()) << n;
    if (n >= 1000 && num_threads() > 1) {
      EXPECT_GT(chunks.load(), 1) << n;
    }
    for (int64_t i = 0; i < n; ++i) ASSERT_EQ(hits[i].load(), 1) << n << " " << i;
  }
}

TEST(ParallelTest, NestedCallsRunAndExceptionsPropagate) {
  std::atomic<int64_t> total{0};
  parallel_for(64, 1, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      parallel_for(10, 1, [&](int64_t b2, int64_t e2) { total += e2 - b2; });
    }
  });
  EXPECT_EQ(total.load(), 640);
  EXPECT_THROW(parallel_for(100, 1,
                            [](int64_t b, int64_t) {
                              if (b == 0) throw std::runtime_error("boom");
                            }),
               std::runtime_error);
  // The pool still works after an exception.
  std::atomic<int> count{0};
  parallel_for(100, 1, [&](int64_t b, int64_t e) { count += static_cast<int>(e - b); });
  EXPECT_EQ(count.load(), 100);
}

}  // namespace
}  // namespace graft::cpu
