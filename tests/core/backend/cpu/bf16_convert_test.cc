// The vectorized f32 <-> bf16 conversions give bf16's scalar bits (core/dtype/half.h) for every
// bf16 value, for the f32 values where rounding is delicate (ties, carries into the
// exponent, overflow to inf, NaN payloads, subnormals) and for random bit patterns, at every
// length (the vector loop's tail included), and through the convert kernel.
#include "core/backend/cpu/bf16_convert.h"

#include <cstdint>
#include <random>
#include <vector>

#include "core/ops.h"
#include "gtest/gtest.h"

namespace graft::cpu {
namespace {

std::vector<float> delicate_values() {
  std::vector<uint32_t> bits = {
      0x00000000u, 0x80000000u, 0x7f800000u, 0xff800000u,  // zeros, infinities
      0x7fc00000u, 0xffc00000u, 0x7f800001u, 0x7fbfffffu,  // quiet / signaling NaNs
      0xff80ffffu, 0x7fff0000u, 0x7fffffffu,               // payloads at the rounding bits
      0x3f808000u, 0x3f818000u, 0x3f807fffu, 0x3f808001u,  // ties to even, just below / above
      0x3fffffffu, 0x7f7fffffu, 0xff7fffffu, 0x7f7f8000u,  // carries into the exponent, to inf
      0x00000001u, 0x00008000u, 0x00018000u, 0x807fffffu,  // subnormals
  };
  std::vector<float> v;
  for (uint32_t b : bits) v.push_back(bits_float(b));
  std::mt19937 rng(7);
  for (int i = 0; i < 100000; ++i) v.push_back(bits_float(static_cast<uint32_t>(rng())));
  return v;
}

TEST(Bf16ConvertTest, RoundsAsTheScalarConversion) {
  const std::vector<float> x = delicate_values();
  for (int64_t n : {int64_t{0}, int64_t{1}, int64_t{15}, int64_t{16}, int64_t{17}, int64_t{23},
                    static_cast<int64_t>(x.size())}) {
    std::vector<bf16> y(n);
    round_to_bf16(x.data(), y.data(), n);
    std::vector<float> through(x.begin(), x.begin() + n);
    round_through_bf16(through.data(), n);
    for (int64_t i = 0; i < n; ++i) {
      const uint16_t want = bf16::from_float(x[i]);
      ASSERT_EQ(y[i].bits, want) << "n=" << n << " bits 0x" << std::hex << float_bits(x[i]);
      ASSERT_EQ(float_bits(through[i]), uint32_t{want} << 16) << std::hex << float_bits(x[i]);
    }
  }
}

TEST(Bf16ConvertTest, WidensEveryBf16Exactly) {
  std::vector<bf16> x(65536 + 5);
  for (size_t i = 0; i < x.size(); ++i) x[i] = bf16::from_bits(static_cast<uint16_t>(i));
  std::vector<float> y(x.size());
  widen_bf16(x.data(), y.data(), static_cast<int64_t>(x.size()));
  for (size_t i = 0; i < x.size(); ++i) {
    ASSERT_EQ(float_bits(y[i]), uint32_t{x[i].bits} << 16) << i;
  }
}

// astype (convert_element_type) f32 -> bf16 -> f32 on more elements than one thread's chunk.
TEST(Bf16ConvertTest, ConvertKernelUsesTheSameRounding) {
  std::vector<float> x = delicate_values();
  const int64_t n = static_cast<int64_t>(x.size());
  Array half = astype(array(x), DType::kBF16);
  auto got = half.host_buffer();
  const bf16* h = static_cast<const bf16*>(got->data());
  std::vector<float> back = astype(half, DType::kF32).to_vector<float>();
  for (int64_t i = 0; i < n; ++i) {
    ASSERT_EQ(h[i].bits, bf16::from_float(x[i])) << std::hex << float_bits(x[i]);
    ASSERT_EQ(float_bits(back[i]), uint32_t{h[i].bits} << 16) << std::hex << float_bits(x[i]);
  }
}

}  // namespace
}  // namespace graft::cpu
