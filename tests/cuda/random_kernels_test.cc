// The CUDA threefry2x32 launcher (core/backend/cuda/kernels/random.h) against graft's CPU
// threefry (which matches JAX bit for bit, tests/core/random/random_test.cc): every key layout (each
// key word a scalar or per counter), sizes 0, 1, 5 and 1000003, from a misaligned start (the
// scalar path), and the Random123 known-answer vectors. All bits must be equal. Skips without a
// GPU; without --config=cuda the file is one skipping test.
#include "gtest/gtest.h"

#ifdef GRAFT_CUDA

#include "core/backend/cuda/kernels/random.h"
#include "core/random/random.h"
#include "tests/cuda/kernels_test_util.h"

namespace graft::cuda {
namespace {

using namespace graft::cuda::testing;  // NOLINT: the test helpers

std::vector<uint8_t> random_words(int64_t n, uint64_t seed) {
  std::vector<uint8_t> bytes(byte_size(DType::kU32, n));
  std::mt19937_64 rng(seed);
  for (int64_t i = 0; i < n; ++i) put<uint32_t>(bytes, i, static_cast<uint32_t>(rng()));
  return bytes;
}

TEST(CudaRandom, ThreefryMatchesCpu) {
  GRAFT_REQUIRE_GPUS(1);
  for (int64_t n : {int64_t{0}, int64_t{1}, int64_t{5}, int64_t{1000003}}) {
    for (bool k1_scalar : {true, false}) {
      for (bool k2_scalar : {true, false}) {
        SCOPED_TRACE("n " + std::to_string(n) + (k1_scalar ? " k1 scalar" : " k1 per counter") +
                     (k2_scalar ? " k2 scalar" : " k2 per counter"));
        const Shape shape{n};
        const auto k1 = random_words(k1_scalar ? 1 : n, 21),
                   k2 = random_words(k2_scalar ? 1 : n, 22);
        const auto x1 = random_words(n, 23), x2 = random_words(n, 24);
        const auto [r1, r2] = random::threefry2x32(
            host_array(k1, k1_scalar ? Shape{} : shape, DType::kU32),
            host_array(k2, k2_scalar ? Shape{} : shape, DType::kU32),
            host_array(x1, shape, DType::kU32), host_array(x2, shape, DType::kU32));
        const auto want1 = bytes_of(r1), want2 = bytes_of(r2);
        DeviceBuffer dk1(k1), dk2(k2), dx1(x1), dx2(x2);
        DeviceBuffer dy1(byte_size(DType::kU32, n)), dy2(byte_size(DType::kU32, n));
        launch_threefry2x32(dk1.as<uint32_t>(), k1_scalar, dk2.as<uint32_t>(), k2_scalar,
                            dx1.as<uint32_t>(), dx2.as<uint32_t>(), dy1.as<uint32_t>(),
                            dy2.as<uint32_t>(), n, nullptr);
        EXPECT_TRUE(agree(DType::kU32, dy1.download().data(), want1.data(), n, {}));
        EXPECT_TRUE(agree(DType::kU32, dy2.download().data(), want2.data(), n, {}));
        if (n < 2) continue;
        // From counter 1: nothing 16-byte aligned, the scalar loop does all of it.
        const int64_t k1_off = k1_scalar ? 0 : 1, k2_off = k2_scalar ? 0 : 1;
        launch_threefry2x32(dk1.as<uint32_t>(k1_off), k1_scalar, dk2.as<uint32_t>(k2_off),
                            k2_scalar, dx1.as<uint32_t>(1), dx2.as<uint32_t>(1),
                            dy1.as<uint32_t>(1), dy2.as<uint32_t>(1), n - 1, nullptr);
        EXPECT_TRUE(agree(DType::kU32, dy1.download().data() + 4, want1.data() + 4, n - 1, {}));
        EXPECT_TRUE(agree(DType::kU32, dy2.download().data() + 4, want2.data() + 4, n - 1, {}));
      }
    }
  }
}

// Random123's known-answer tests for Threefry-2x32-20 (kat_vectors), as JAX's own tests use.
TEST(CudaRandom, ThreefryKnownAnswers) {
  GRAFT_REQUIRE_GPUS(1);
  struct Kat {
    uint32_t k[2], x[2], y[2];
  };
  const Kat kats[] = {
      {{0x00000000, 0x00000000}, {0x00000000, 0x00000000}, {0x6b200159, 0x99ba4efe}},
      {{0xffffffff, 0xffffffff}, {0xffffffff, 0xffffffff}, {0x1cb996fc, 0xbb002be7}},
      {{0x13198a2e, 0x03707344}, {0x243f6a88, 0x85a308d3}, {0xc4923a9c, 0x483df7a0}},
  };
  for (const Kat& kat : kats) {
    std::vector<uint8_t> k1(4), k2(4), x1(4), x2(4);
    put<uint32_t>(k1, 0, kat.k[0]);
    put<uint32_t>(k2, 0, kat.k[1]);
    put<uint32_t>(x1, 0, kat.x[0]);
    put<uint32_t>(x2, 0, kat.x[1]);
    DeviceBuffer dk1(k1), dk2(k2), dx1(x1), dx2(x2), dy1(4), dy2(4);
    launch_threefry2x32(dk1.as<uint32_t>(), true, dk2.as<uint32_t>(), true, dx1.as<uint32_t>(),
                        dx2.as<uint32_t>(), dy1.as<uint32_t>(), dy2.as<uint32_t>(), 1, nullptr);
    uint32_t y1, y2;
    std::memcpy(&y1, dy1.download().data(), 4);
    std::memcpy(&y2, dy2.download().data(), 4);
    EXPECT_EQ(y1, kat.y[0]);
    EXPECT_EQ(y2, kat.y[1]);
  }
}

}  // namespace
}  // namespace graft::cuda

#else  // !GRAFT_CUDA

TEST(CudaRandom, NeedsCuda) { GTEST_SKIP() << "built without CUDA (--config=cuda)"; }

#endif  // GRAFT_CUDA
