// core/buffer: the cache of freed large blocks (reuse, size matching, limits, release), views
// (windows into another buffer), and the live / peak byte counters.
#include "core/buffer.h"

#include <cstring>

#include "core/ops.h"
#include "gtest/gtest.h"

namespace graft {
namespace {

TEST(BufferTest, LargeBlocksAreReusedAndReleased) {
  Buffer::release_cached();
  EXPECT_EQ(Buffer::cached_bytes(), 0u);
  const size_t big = size_t{4} << 20;
  void* first;
  {
    auto b = Buffer::make(big);
    first = b->data();
    std::memset(b->data(), 1, big);  // usable over its whole size
    EXPECT_EQ(reinterpret_cast<uintptr_t>(first) % 64, 0u);
  }
  EXPECT_GE(Buffer::cached_bytes(), big);
  {
    auto b = Buffer::make(big - 100);  // fits in the cached block: reused
    EXPECT_EQ(b->data(), first);
    EXPECT_EQ(b->bytes(), big - 100);
    EXPECT_EQ(Buffer::cached_bytes(), 0u);
    auto c = Buffer::make(big / 2);  // would waste half of a cached block: a new one
    EXPECT_NE(c->data(), first);
  }
  EXPECT_GE(Buffer::cached_bytes(), big + big / 2);
  Buffer::release_cached();
  EXPECT_EQ(Buffer::cached_bytes(), 0u);
}

TEST(BufferTest, BlocksOfEightMiBOrMoreAreHugePageAlignedAndReused) {
  Buffer::release_cached();
  const size_t odd = (size_t{17} << 19) + 100;  // 8.5 MiB + 100 bytes: rounded to 10 MiB
  void* first;
  {
    auto b = Buffer::make(odd);
    first = b->data();
    EXPECT_EQ(reinterpret_cast<uintptr_t>(first) % (size_t{2} << 20), 0u);
    std::memset(b->data(), 1, odd);
  }
  EXPECT_EQ(Buffer::cached_bytes(), size_t{10} << 20);
  auto again = Buffer::make(odd);  // the same size again: the same block
  EXPECT_EQ(again->data(), first);
}

// Live bytes follow allocations and frees (a cached block is not live); the peak is the most
// since the last reset, and a view adds nothing.
TEST(BufferTest, LiveAndPeakBytesCountWhatBuffersHold) {
  const size_t base = Buffer::live_bytes();
  Buffer::reset_peak_bytes();
  EXPECT_EQ(Buffer::peak_bytes(), base);
  const size_t mib = size_t{1} << 20;
  {
    auto a = Buffer::make(3 * mib);
    EXPECT_EQ(Buffer::live_bytes(), base + 3 * mib);
    {
      auto b = Buffer::make(5 * mib);
      auto v = Buffer::view(b, 0, mib);
      EXPECT_EQ(Buffer::live_bytes(), base + 8 * mib);
    }
    EXPECT_EQ(Buffer::live_bytes(), base + 3 * mib);  // b went to the cache: not live
    EXPECT_EQ(Buffer::peak_bytes(), base + 8 * mib);
    Buffer::reset_peak_bytes();
    EXPECT_EQ(Buffer::peak_bytes(), base + 3 * mib);
    auto small = Buffer::make(100);  // rounded to 64 bytes
    EXPECT_EQ(Buffer::live_bytes(), base + 3 * mib + 128);
  }
  EXPECT_EQ(Buffer::live_bytes(), base);
  EXPECT_EQ(Buffer::peak_bytes(), base + 3 * mib + 128);
}

TEST(BufferTest, ViewsShareTheirParentsBytesAndKeepItAlive) {
  std::shared_ptr<Buffer> v;
  {
    auto parent = Buffer::make(256);
    for (int i = 0; i < 256; ++i) parent->as<unsigned char>()[i] = static_cast<unsigned char>(i);
    v = Buffer::view(parent, 128, 64);
    EXPECT_TRUE(v->is_view());
    EXPECT_FALSE(parent->is_view());
    EXPECT_EQ(v->data(), parent->as<char>() + 128);
    EXPECT_EQ(v->bytes(), 64u);
  }  // the view still holds the parent
  EXPECT_EQ(v->as<unsigned char>()[0], 128);
  EXPECT_EQ(v->as<unsigned char>()[63], 191);
  auto p = Buffer::make(256);
  EXPECT_THROW(Buffer::view(p, 192, 128), Error);  // past the end
  EXPECT_THROW(Buffer::view(p, 32, 64), Error);    // breaks 64-byte alignment
  EXPECT_THROW(Buffer::view(nullptr, 0, 0), Error);
}

TEST(BufferTest, SmallBlocksAreNotCached) {
  Buffer::release_cached();
  { auto b = Buffer::make(1000); }
  EXPECT_EQ(Buffer::cached_bytes(), 0u);
}

TEST(BufferTest, ArraysOfReusedBlocksHoldTheirOwnValues) {
  Buffer::release_cached();
  const int64_t n = 1 << 20;  // 4 MiB of f32
  {
    Array a = full({n}, 3.0f);
    eval(a);
  }                                  // freed into the cache
  Array b = iota(DType::kF32, {n});  // may take the cached block
  auto v = b.to_vector<float>();
  for (int64_t i = 0; i < n; i += 4097) ASSERT_EQ(v[i], static_cast<float>(i));
}

}  // namespace
}  // namespace graft
