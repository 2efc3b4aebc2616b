// The exact device helpers of the CUDA fused kernels (core/backend/cuda/fusion/
// device_exact.cuh), compiled for the host (host_prelude.h), against graft's CPU code bit for
// bit: f16 / bf16 conversions and rounding against core/dtype/half.h (every 16-bit pattern, and a
// stride through every f32 pattern), converts against core/dtype/convert.h, and the integer,
// bool and float ops against the elementwise functors the CPU kernels apply. No GPU needed:
// the same text is what NVRTC compiles into every kernel.
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "core/backend/cuda/fusion/host_prelude.h"
#include "core/dtype/convert.h"
#include "core/dtype/half.h"
#include "core/primitives/elementwise_ops.h"
#include "gtest/gtest.h"

namespace graft {
namespace {

namespace dev = graft_cuda_device;

template <typename T>
auto bits(T v) {
  if constexpr (sizeof(T) == 8) {
    return std::bit_cast<uint64_t>(v);
  } else {
    return std::bit_cast<uint32_t>(v);
  }
}

// Equal bits, or both NaN (a NaN's payload may differ between the CPU's and CUDA's libm).
template <typename T>
bool same(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    return bits(a) == bits(b) || (std::isnan(a) && std::isnan(b));
  } else {
    return a == b;
  }
}

// Special f32 values: NaNs, infinities, zeros, subnormals, f16 / bf16 rounding boundaries and
// ties, integer limits.
std::vector<float> special_floats() {
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> v = {
      std::nanf(""),  -std::nanf(""), inf,        -inf,     0.0f,          -0.0f,
      1.0f,           -1.0f,          0.5f,       1.5f,     2.5f,          -2.5f,
      65504.0f,       65519.0f,       65520.0f,   1e-45f,   1e-39f,        5.96e-8f,
      2.98e-8f,       6.1e-5f,        3.0e38f,    -3.0e38f, 2147483520.0f, 2147483648.0f,
      -2147483648.0f, 4294967296.0f,  255.5f,     256.0f,   -0.75f,        9.2233720e18f,
      -9.2233720e18f, 1.00390625f,    1.01171875f};
  for (uint32_t u : {0x7fa00000u, 0xffc00001u, 0x3f808000u, 0x3f818000u, 0x33000000u, 0x33000001u,
                     0x387fe000u, 0x387ff000u, 0x477fefffu, 0x477ff000u}) {
    v.push_back(std::bit_cast<float>(u));
  }
  return v;
}

TEST(FusionDeviceExact, HalfConversionsEqualCoreHalf) {
  for (uint32_t h = 0; h < 65536; ++h) {
    const auto b = static_cast<uint16_t>(h);
    ASSERT_EQ(bits(dev::g_from_f16(b)), bits(f16::to_float(b))) << h;
    ASSERT_EQ(bits(dev::g_from_bf16(b)), bits(bf16::to_float(b))) << h;
  }
  auto check = [](float f) {
    ASSERT_EQ(dev::g_to_f16(f), f16::from_float(f)) << bits(f);
    ASSERT_EQ(dev::g_to_bf16(f), bf16::from_float(f)) << bits(f);
    ASSERT_EQ(bits(dev::g_round_f16(f)), bits(static_cast<float>(f16(f)))) << bits(f);
    ASSERT_EQ(bits(dev::g_round_bf16(f)), bits(static_cast<float>(bf16(f)))) << bits(f);
    ASSERT_EQ(dev::g_bf16_bits(dev::g_round_bf16(f)), bf16(f).bits) << bits(f);
  };
  for (float f : special_floats()) check(f);
  // A stride through all 2^32 patterns (odd, so every low-bit pattern and exponent occurs).
  for (uint64_t u = 0; u < (uint64_t{1} << 32); u += 4093) check(std::bit_cast<float>(uint32_t(u)));
  // Every f16 rounding boundary's neighbours: halfway points between adjacent f16 values.
  for (uint32_t h = 0; h < 0x7c00; ++h) {
    const float lo = f16::to_float(uint16_t(h)), hi = f16::to_float(uint16_t(h + 1));
    const float mid = lo + (hi - lo) / 2;
    for (float f : {mid, std::nextafter(mid, 0.0f), std::nextafter(mid, hi), -mid}) check(f);
  }
}

template <typename D, typename S>
void expect_converts(const std::vector<S>& values) {
  for (S v : values) {
    EXPECT_EQ(dev::g_saturate<D>(v), (convert_value<S, D>(v))) << v;
    EXPECT_EQ(dev::g_to_bool(v), (convert_value<S, bool>(v))) << v;
  }
}

TEST(FusionDeviceExact, ConvertsSaturateAsXla) {
  const std::vector<float> f = special_floats();
  std::vector<double> d(f.begin(), f.end());
  for (double x : {9.3e18, -9.3e18, 4294967295.5, 2147483647.5, -2147483648.5, 1e300}) {
    d.push_back(x);
  }
  expect_converts<unsigned char>(f);
  expect_converts<unsigned int>(f);
  expect_converts<int>(f);
  expect_converts<long long>(f);
  expect_converts<unsigned char>(d);
  expect_converts<unsigned int>(d);
  expect_converts<int>(d);
  expect_converts<long long>(d);
  for (int x : {0, 1, -1, 7}) EXPECT_EQ(dev::g_to_bool(x), x != 0);
}

template <typename T>
std::vector<T> integer_values() {
  using L = std::numeric_limits<T>;
  std::vector<T> v = {0, 1, 2, 3, 7, 31, 32, 63, 64, 100, L::max(), L::min(), T(L::max() - 1)};
  if constexpr (std::is_signed_v<T>) {
    for (T x : {T(-1), T(-2), T(-7), T(-100), T(L::min() + 1)}) v.push_back(x);
  }
  return v;
}

// The device op against the CPU functor on every pair of values.
#define GRAFT_EXPECT_UNARY(name, Op, values)                                      \
  for (auto x : values) {                                                         \
    EXPECT_TRUE(same(dev::g_##name(x), ew::Op::scalar(x))) << #name << " " << +x; \
  }
#define GRAFT_EXPECT_BINARY(name, Op, values)                      \
  for (auto x : values) {                                          \
    for (auto y : values) {                                        \
      EXPECT_TRUE(same(dev::g_##name(x, y), ew::Op::scalar(x, y))) \
          << #name << " " << +x << " " << +y;                      \
    }                                                              \
  }

template <typename T>
void expect_integer_ops() {
  const std::vector<T> v = integer_values<T>();
  GRAFT_EXPECT_UNARY(neg, Neg, v)
  GRAFT_EXPECT_UNARY(abs, Abs, v)
  GRAFT_EXPECT_UNARY(sign, Sign, v)
  GRAFT_EXPECT_UNARY(square, Square, v)
  GRAFT_EXPECT_UNARY(not, Not, v)
  GRAFT_EXPECT_BINARY(add, Add, v)
  GRAFT_EXPECT_BINARY(sub, Sub, v)
  GRAFT_EXPECT_BINARY(mul, Mul, v)
  GRAFT_EXPECT_BINARY(div, Div, v)
  GRAFT_EXPECT_BINARY(rem, Rem, v)
  GRAFT_EXPECT_BINARY(pow, Pow, v)
  GRAFT_EXPECT_BINARY(max, Max, v)
  GRAFT_EXPECT_BINARY(min, Min, v)
  GRAFT_EXPECT_BINARY(and, And, v)
  GRAFT_EXPECT_BINARY(or, Or, v)
  GRAFT_EXPECT_BINARY(xor, Xor, v)
  GRAFT_EXPECT_BINARY(eq, Eq, v)
  GRAFT_EXPECT_BINARY(ne, Ne, v)
  GRAFT_EXPECT_BINARY(lt, Lt, v)
  GRAFT_EXPECT_BINARY(ge, Ge, v)
}

TEST(FusionDeviceExact, IntegerOpsWrapAsXla) {
  expect_integer_ops<unsigned char>();
  expect_integer_ops<unsigned int>();
  expect_integer_ops<int>();
  expect_integer_ops<long long>();
}

TEST(FusionDeviceExact, BoolOpsAreLogical) {
  const std::vector<bool> v = {false, true};
  GRAFT_EXPECT_UNARY(not, Not, v)
  GRAFT_EXPECT_BINARY(max, Max, v)
  GRAFT_EXPECT_BINARY(min, Min, v)
  GRAFT_EXPECT_BINARY(and, And, v)
  GRAFT_EXPECT_BINARY(or, Or, v)
  GRAFT_EXPECT_BINARY(xor, Xor, v)
  GRAFT_EXPECT_BINARY(eq, Eq, v)
  GRAFT_EXPECT_BINARY(lt, Lt, v)
}

template <typename C>
void expect_float_ops() {
  std::vector<C> v;
  for (float f : special_floats()) v.push_back(static_cast<C>(f));
  for (C x : {C(0.1), C(-3.7), C(1e-300 * (sizeof(C) == 8)), C(7.25)}) v.push_back(x);
  GRAFT_EXPECT_UNARY(neg, Neg, v)
  GRAFT_EXPECT_UNARY(abs, Abs, v)
  GRAFT_EXPECT_UNARY(sign, Sign, v)
  GRAFT_EXPECT_UNARY(square, Square, v)
  GRAFT_EXPECT_UNARY(sqrt, Sqrt, v)
  GRAFT_EXPECT_UNARY(rsqrt, Rsqrt, v)
  GRAFT_EXPECT_UNARY(floor, Floor, v)
  GRAFT_EXPECT_UNARY(ceil, Ceil, v)
  GRAFT_EXPECT_UNARY(round, Round, v)
  GRAFT_EXPECT_UNARY(is_finite, IsFinite, v)
  GRAFT_EXPECT_BINARY(add, Add, v)
  GRAFT_EXPECT_BINARY(sub, Sub, v)
  GRAFT_EXPECT_BINARY(mul, Mul, v)
  GRAFT_EXPECT_BINARY(div, Div, v)
  GRAFT_EXPECT_BINARY(rem, Rem, v)
  GRAFT_EXPECT_BINARY(max, Max, v)
  GRAFT_EXPECT_BINARY(min, Min, v)
  GRAFT_EXPECT_BINARY(eq, Eq, v)
  GRAFT_EXPECT_BINARY(ne, Ne, v)
  GRAFT_EXPECT_BINARY(lt, Lt, v)
  GRAFT_EXPECT_BINARY(le, Le, v)
  GRAFT_EXPECT_BINARY(gt, Gt, v)
  GRAFT_EXPECT_BINARY(ge, Ge, v)
}

// max / min propagate NaN and order -0 below +0; sign keeps +-0 and NaN: the bits matter.
TEST(FusionDeviceExact, FloatOpsGiveTheCpuBits) {
  expect_float_ops<float>();
  expect_float_ops<double>();
  EXPECT_EQ(bits(dev::g_max(0.0f, -0.0f)), bits(0.0f));
  EXPECT_EQ(bits(dev::g_min(0.0f, -0.0f)), bits(-0.0f));
  EXPECT_EQ(bits(dev::g_sign(-0.0f)), bits(-0.0f));
}

}  // namespace
}  // namespace graft
