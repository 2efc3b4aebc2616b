// 8-bit float storage types, as ml_dtypes (and so JAX) defines them. Values are only stored in
// these types: kernels widen to f32 (every fp8 value is exact in bf16 and f32), compute, and
// round back. The conversions are integer bit work, so the CUDA kernels share them
// (GRAFT_F8_HD marks them host and device there).
//
//   f8_e4m3fn  S.EEEE.MMM, bias 7, no infinities, NaN is S.1111.111, max 448.
//   f8_e5m2    S.EEEEE.MM, bias 15, IEEE-like: inf S.11111.00, NaN S.11111.{01,10,11}.
//
// Rounding from f32 / f64 is to nearest even in one step (an f64 does not round through f32).
// As ml_dtypes: a value whose rounding passes the largest finite one becomes NaN in e4m3fn (it
// has no inf; +-inf and NaN become NaN too, keeping the sign) and inf in e5m2; NaN keeps its
// sign (e5m2's NaN is S.11111.10).
#pragma once

#include <cstdint>
#include <cstring>

#if defined(__CUDACC__)
#define GRAFT_F8_HD __host__ __device__
#else
#define GRAFT_F8_HD
#endif

namespace graft {
namespace float8_detail {

GRAFT_F8_HD inline uint64_t double_bits(double d) {
#if defined(__CUDA_ARCH__)
  return static_cast<uint64_t>(__double_as_longlong(d));
#else
  uint64_t u;
  std::memcpy(&u, &d, 8);
  return u;
#endif
}
GRAFT_F8_HD inline float bits_to_float(uint32_t u) {
#if defined(__CUDA_ARCH__)
  return __int_as_float(static_cast<int>(u));
#else
  float f;
  std::memcpy(&f, &u, 4);
  return f;
#endif
}

// kExp exponent bits, kMant mantissa bits; kFiniteOnly: the all-ones pattern is the only NaN
// and there is no inf (the "fn" formats).
template <int kExp, int kMant, bool kFiniteOnly>
struct Float8Codec {
  static constexpr int kBias = (1 << (kExp - 1)) - 1;
  static constexpr int kMinExp = 1 - kBias;  // exponent of the smallest normal
  // The first pattern past the largest finite one (magnitude bits).
  static constexpr uint32_t kOverflow = kFiniteOnly ? 0x7fu : (((1u << kExp) - 1) << kMant);
  static constexpr uint32_t kNan = kFiniteOnly ? 0x7fu : (kOverflow | (1u << (kMant - 1)));
  static constexpr uint32_t kInf = kFiniteOnly ? kNan : kOverflow;

  GRAFT_F8_HD static uint8_t from_double(double x) {
    const uint64_t u = double_bits(x);
    const uint32_t sign = static_cast<uint32_t>(u >> 63) << 7;
    const int e_field = static_cast<int>((u >> 52) & 0x7ff);
    const uint64_t m_field = u & ((uint64_t{1} << 52) - 1);
    if (e_field == 0x7ff) return static_cast<uint8_t>(sign | (m_field != 0 ? kNan : kInf));
    if (e_field == 0) return static_cast<uint8_t>(sign);  // f64 subnormals round to zero
    const int e = e_field - 1023;
    if (e > kBias + 2) return static_cast<uint8_t>(sign | kInf);  // far past the largest
    // value = sig * 2^(e - 52); in the fp8 binade of exponent e8 its units are 2^(e8 - kMant).
    const uint64_t sig = (uint64_t{1} << 52) | m_field;
    const int e8 = e < kMinExp ? kMinExp : e;
    const int shift = 52 - kMant + (e8 - e);
    uint64_t q = 0;
    if (shift < 64) {
      q = sig >> shift;
      const uint64_t rem = sig & ((uint64_t{1} << shift) - 1);
      const uint64_t half = uint64_t{1} << (shift - 1);
      if (rem > half || (rem == half && (q & 1))) ++q;  // to nearest even
    }
    // Patterns are ordered like the values: a mantissa carry moves into the exponent.
    const uint64_t mag = (static_cast<uint64_t>(e8 - kMinExp) << kMant) + q;
    if (mag >= kOverflow) return static_cast<uint8_t>(sign | kInf);
    return static_cast<uint8_t>(sign | static_cast<uint32_t>(mag));
  }

  GRAFT_F8_HD static float to_float(uint8_t b) {
    const uint32_t sign = static_cast<uint32_t>(b & 0x80) << 24;
    const uint32_t e_field = (b >> kMant) & ((1u << kExp) - 1);
    const uint32_t m = b & ((1u << kMant) - 1);
    if ((b & 0x7f) >= kOverflow) {  // NaN, or inf in e5m2
      const bool inf = !kFiniteOnly && m == 0;
      return bits_to_float(sign | 0x7f800000u | (inf ? 0u : 0x400000u));
    }
    if (e_field == 0) {  // subnormal: m units of 2^(kMinExp - kMant), exact in f32
      const float v =
          static_cast<float>(m) * bits_to_float(static_cast<uint32_t>(127 + kMinExp - kMant) << 23);
      return sign ? -v : v;
    }
    return bits_to_float(sign | ((e_field - kBias + 127) << 23) | (m << (23 - kMant)));
  }
};

}  // namespace float8_detail

// An fp8 value: its bits, converted through Codec.
template <typename Codec>
struct Float8Storage {
  uint8_t bits = 0;
  Float8Storage() = default;
  GRAFT_F8_HD explicit Float8Storage(float f) : bits(Codec::from_double(f)) {}
  GRAFT_F8_HD explicit Float8Storage(double d) : bits(Codec::from_double(d)) {}
  GRAFT_F8_HD explicit operator float() const { return Codec::to_float(bits); }
  GRAFT_F8_HD static Float8Storage from_bits(uint8_t b) {
    Float8Storage h;
    h.bits = b;
    return h;
  }
};

using f8_e4m3fn = Float8Storage<float8_detail::Float8Codec<4, 3, true>>;  // float8_e4m3fn
using f8_e5m2 = Float8Storage<float8_detail::Float8Codec<5, 2, false>>;   // float8_e5m2

}  // namespace graft
