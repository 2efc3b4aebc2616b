// DType promotion against JAX's documented lattice (jax.numpy.promote_types table, the
// "type promotion semantics" page), and the f16 / bf16 conversions against the hardware.
#include "core/dtype/dtype.h"

#include <immintrin.h>

#include <cmath>

#include "core/dtype/half.h"
#include "core/ops.h"
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

// JAX without x64 (0.10.2 on CPU, tools/make_jax_edge_vectors.py): an integer or bool array
// with a weak float is weak f32, and a further weak float keeps it f32; graft's C++ double is
// a weak f64 (full precision), which takes the width of any other weak float it meets.
TEST(DTypeTest, WeakFloatsJoinLikeJaxWithoutX64) {
  TypeInfo weak_f64{DType::kF64, true}, weak_f32{DType::kF32, true};
  for (DType d : {DType::kBool, DType::kU8, DType::kU32, DType::kI32, DType::kI64}) {
    TypeInfo r = promote_types({d, false}, weak_f64);
    EXPECT_EQ(r.dtype, DType::kF32) << d;
    EXPECT_TRUE(r.weak) << d;
    TypeInfo again = promote_types(r, weak_f64);  // (int_array + 2.5) + 0.5
    EXPECT_EQ(again.dtype, DType::kF32) << d;
    EXPECT_TRUE(again.weak) << d;
  }
  EXPECT_EQ(promote_types(weak_f64, weak_f32).dtype, DType::kF32);
  EXPECT_EQ(promote_types({DType::kBF16, true}, weak_f64).dtype, DType::kBF16);
  EXPECT_EQ(promote_types(weak_f64, weak_f64).dtype, DType::kF64);  // C++ doubles stay exact
  // Weak f16 and weak bf16 join as the strong types do (f32), in either order.
  EXPECT_EQ(promote_types({DType::kF16, true}, {DType::kBF16, true}).dtype, DType::kF32);
  EXPECT_EQ(promote_types({DType::kBF16, true}, {DType::kF16, true}).dtype, DType::kF32);
  EXPECT_EQ(promote_types({DType::kI32, true}, {DType::kI64, true}).dtype, DType::kI64);
  // The weak f32 result still gives way to a strong float: (i32 + 2.5) * bf16 is bf16.
  EXPECT_EQ(promote_types(weak_f32, {DType::kBF16, false}).dtype, DType::kBF16);
}

TEST(DTypeTest, ArrayPromotionWithCppScalarsMatchesJax) {
  for (DType d : {DType::kU8, DType::kU32, DType::kI32, DType::kI64}) {
    Array x = ones({3}, d);
    EXPECT_EQ((x + 2.5).dtype(), DType::kF32) << d;
    EXPECT_TRUE((x + 2.5).weak_type()) << d;
    EXPECT_EQ((x + 2.5 + 0.5).dtype(), DType::kF32) << d;
    EXPECT_EQ((x + 2).dtype(), d) << d;
    EXPECT_EQ(clip(x, 0.5, 2.5).dtype(), DType::kF32) << d;
    EXPECT_EQ(clip(x, 1, 2).dtype(), d) << d;
  }
  Array b = ones({2}, DType::kBool);
  EXPECT_EQ((b + 2.5).dtype(), DType::kF32);
  EXPECT_EQ((b + 2).dtype(), DType::kI32);
  EXPECT_TRUE((b + 2).weak_type());
  Array i = ones({3}, DType::kI32);
  EXPECT_EQ(((i + 2.5) * ones({3}, DType::kBF16)).dtype(), DType::kBF16);
  EXPECT_EQ(((i + 2.5) + ones({3}, DType::kF16)).dtype(), DType::kF16);
  EXPECT_EQ((ones({3}, DType::kF64) + 0.1).dtype(), DType::kF64);
  EXPECT_EQ((Array(1.0) + Array(2.0)).dtype(), DType::kF64);
}

// graft has i64 as a first-class type, so u32 + i32 joins in JAX's lattice to i64, as JAX does
// with x64 on; JAX without x64 canonicalizes that to i32 (docs/arrays-and-ops.md, "Dtypes and promotion").
TEST(DTypeTest, U32PlusI32IsI64AsDocumented) {
  EXPECT_EQ(P(DType::kU32, DType::kI32), DType::kI64);
  Array s = ones({2}, DType::kU32) + full({2}, -3, DType::kI32);
  EXPECT_EQ(s.dtype(), DType::kI64);
  EXPECT_EQ(s.to_vector<int64_t>(), (std::vector<int64_t>{-2, -2}));
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
