// DType promotion against JAX's documented lattice (jax.numpy.promote_types table, the
// "type promotion semantics" page), and the f16 / bf16 conversions against the hardware.
#include "core/dtype.h"

#include <immintrin.h>

#include <cmath>

#include "core/half.h"
#include "gtest/gtest.h"

namespace graft {
namespace {

DType P(DType a, DType b) { return promote_types({a, false}, {b, false}).dtype; }

TEST(DTypeTest, PromotionOfStrongTypesMatchesJaxTable) {
  using D = DType;
  EXPECT_EQ(P(D::kBool, D::kU8), D::kU8);
  EXPECT_EQ(P(D::kU8, D::kI32), D::kI32);
  EXPECT_EQ(P(D::kU32, D::kI32), D::kI64);
  EXPECT_EQ(P(D::kU8, D::kU32), D::kU32);
  EXPECT_EQ(P(D::kI32, D::kI64), D::kI64);
  EXPECT_EQ(P(D::kI64, D::kF16), D::kF16);
  EXPECT_EQ(P(D::kI32, D::kBF16), D::kBF16);
  EXPECT_EQ(P(D::kF16, D::kBF16), D::kF32);
  EXPECT_EQ(P(D::kBF16, D::kF32), D::kF32);
  EXPECT_EQ(P(D::kF32, D::kF64), D::kF64);
  EXPECT_EQ(P(D::kBool, D::kBool), D::kBool);
  // Symmetric over every pair.
  for (DType a : kAllDTypes)
    for (DType b : kAllDTypes) EXPECT_EQ(P(a, b), P(b, a)) << a << " " << b;
}

TEST(DTypeTest, WeakScalarsTakeTheArraysType) {
  TypeInfo weak_float{DType::kF64, true}, weak_int{DType::kI32, true};
  EXPECT_EQ(promote_types({DType::kBF16, false}, weak_float).dtype, DType::kBF16);
  EXPECT_FALSE(promote_types({DType::kBF16, false}, weak_float).weak);
  EXPECT_EQ(promote_types({DType::kU8, false}, weak_int).dtype, DType::kU8);
  EXPECT_EQ(promote_types({DType::kF16, false}, weak_int).dtype, DType::kF16);
  // An integer array with a float scalar becomes the default float, still weak.
  TypeInfo r = promote_types({DType::kI32, false}, weak_float);
  EXPECT_EQ(r.dtype, DType::kF32);
  EXPECT_TRUE(r.weak);
  // A bool array with a weak int becomes (weak) i32.
  EXPECT_EQ(promote_types({DType::kBool, false}, weak_int).dtype, DType::kI32);
  // Two weak floats stay weak.
  EXPECT_TRUE(promote_types(weak_float, {DType::kF32, true}).weak);
}

TEST(DTypeTest, F16ConversionMatchesF16CInstructions) {
  // Every f16 bit pattern round-trips through float exactly.
  for (uint32_t b = 0; b < 65536; ++b) {
    float hw = _cvtsh_ss(static_cast<uint16_t>(b));
    float sw = f16::to_float(static_cast<uint16_t>(b));
    if (std::isnan(hw)) {
      EXPECT_TRUE(std::isnan(sw));
    } else {
      ASSERT_EQ(float_bits(hw), float_bits(sw)) << b;
    }
  }
  // float -> f16 rounding (nearest even) on a sweep of bit patterns, incl. subnormals/overflow.
  for (uint64_t u = 0; u < (1ull << 32); u += 4099) {
    float f = bits_float(static_cast<uint32_t>(u));
    uint16_t hw = _cvtss_sh(f, _MM_FROUND_TO_NEAREST_INT);
    uint16_t sw = f16::from_float(f);
    if (std::isnan(f)) {
      EXPECT_EQ(sw & 0x7c00, 0x7c00);
      EXPECT_NE(sw & 0x3ff, 0);
    } else {
      ASSERT_EQ(hw, sw) << "float bits " << u;
    }
  }
}

TEST(DTypeTest, BF16RoundsToNearestEven) {
  EXPECT_EQ(bf16::from_float(1.0f), 0x3f80);
  // 1 + 2^-8 is halfway between 1 and 1 + 2^-7: ties to even (1.0).
  EXPECT_EQ(bf16::from_float(1.00390625f), 0x3f80);
  // 1 + 3 * 2^-8 is halfway between 1 + 2^-7 (odd) and 1 + 2^-6: rounds up to even.
  EXPECT_EQ(bf16::from_float(1.01171875f), 0x3f82);
  EXPECT_TRUE(std::isnan(bf16::to_float(bf16::from_float(NAN))));
  EXPECT_TRUE(std::isinf(bf16::to_float(bf16::from_float(3.4e38f))));
  // Sweep: the result is the nearer of the two bf16 neighbours (ties to even mantissa).
  for (uint64_t u = 0; u < 0x7f7f0000ull; u += 7919) {
    float f = bits_float(static_cast<uint32_t>(u));
    uint16_t lo = static_cast<uint16_t>(u >> 16), hi = static_cast<uint16_t>(lo + 1);
    double dlo = std::fabs(double(f) - bf16::to_float(lo));
    double dhi = std::fabs(double(f) - bf16::to_float(hi));
    uint16_t want = dlo < dhi ? lo : (dhi < dlo ? hi : ((lo & 1) ? hi : lo));
    ASSERT_EQ(bf16::from_float(f), want) << u;
  }
}

}  // namespace
}  // namespace graft
