// GRAFT_POISON_BUFFERS: every new buffer (fresh or taken from the cache) is filled with 0xFF
// bytes (NaN as f32 / f64), so a kernel that reads memory it did not write shows up as NaN.
// The variable is read at the first allocation, so this test sets it before allocating.
#include <cstdlib>
#include <cstring>

#include "core/buffer.h"
#include "core/ops.h"
#include "gtest/gtest.h"

namespace graft {
namespace {

bool all_ff(const void* p, size_t n) {
  const auto* b = static_cast<const unsigned char*>(p);
  for (size_t i = 0; i < n; ++i) {
    if (b[i] != 0xFF) return false;
  }
  return true;
}

TEST(BufferPoisonTest, NewAndReusedBuffersAreFilledAndKernelsOverwriteThem) {
  setenv("GRAFT_POISON_BUFFERS", "1", 1);
  auto small = Buffer::make(100);
  EXPECT_TRUE(all_ff(small->data(), 100));
  const size_t big = size_t{2} << 20;
  void* first;
  {
    auto b = Buffer::make(big);
    EXPECT_TRUE(all_ff(b->data(), big));
    std::memset(b->data(), 0, big);
    first = b->data();
  }  // into the cache, zeroed
  auto again = Buffer::make(big);
  ASSERT_EQ(again->data(), first);  // the cached block, poisoned again
  EXPECT_TRUE(all_ff(again->data(), big));

  Array x = iota(DType::kF32, {1 << 19});  // 2 MiB: may take a cached, poisoned block
  auto y = (x * 2.0f + 1.0f).to_vector<float>();
  for (size_t i = 0; i < y.size(); ++i) ASSERT_EQ(y[i], 2.0f * i + 1.0f) << i;
}

}  // namespace
}  // namespace graft
