// 16-bit float storage types. Arithmetic happens in f32: kernels widen, compute, round.
#pragma once

#include <cstdint>
#include <cstring>

namespace graft {

inline uint32_t float_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
inline float bits_float(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// IEEE binary16.
struct f16 {
  uint16_t bits = 0;
  f16() = default;
  explicit f16(float f) : bits(from_float(f)) {}
  explicit operator float() const { return to_float(bits); }
  static f16 from_bits(uint16_t b) {
    f16 h;
    h.bits = b;
    return h;
  }

  static uint16_t from_float(float f) {
    // Round to nearest even; handles subnormals, overflow to inf and NaN.
    uint32_t x = float_bits(f);
    uint32_t sign = (x >> 16) & 0x8000u;
    uint32_t abs = x & 0x7fffffffu;
    if (abs >= 0x7f800000u) {  // inf or nan
      return static_cast<uint16_t>(sign | 0x7c00u | (abs > 0x7f800000u ? 0x200u : 0u));
    }
    if (abs >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // rounds to inf
    if (abs < 0x38800000u) {  // result is subnormal or zero in f16
      // Scale so the f16 subnormal lsb (2^-24) becomes 1.0 and round to integer (RNE).
      float a = bits_float(abs) * 16777216.0f;  // 2^24
      // Adding 2^23 rounds to an integer with RNE in f32 arithmetic.
      float r = (a + 8388608.0f) - 8388608.0f;
      return static_cast<uint16_t>(sign | static_cast<uint32_t>(r));
    }
    uint32_t mant_odd = (abs >> 13) & 1u;
    abs += 0xc8000fffu + mant_odd;  // rebias exponent (-112 << 23) and round
    return static_cast<uint16_t>(sign | (abs >> 13));
  }
  static float to_float(uint16_t h) {
    uint32_t sign = (h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1fu;
    uint32_t mant = h & 0x3ffu;
    if (exp == 0x1f) return bits_float(sign | 0x7f800000u | (mant << 13));
    if (exp == 0) {
      float v = static_cast<float>(mant) * (1.0f / 16777216.0f);
      return sign ? -v : v;
    }
    return bits_float(sign | ((exp + 112) << 23) | (mant << 13));
  }
};

// bfloat16: the top half of an f32.
struct bf16 {
  uint16_t bits = 0;
  bf16() = default;
  explicit bf16(float f) : bits(from_float(f)) {}
  explicit operator float() const { return to_float(bits); }
  static bf16 from_bits(uint16_t b) {
    bf16 h;
    h.bits = b;
    return h;
  }

  static uint16_t from_float(float f) {
    uint32_t x = float_bits(f);
    if ((x & 0x7fffffffu) > 0x7f800000u)
      return static_cast<uint16_t>((x >> 16) | 0x40u);  // quiet nan
    x += 0x7fffu + ((x >> 16) & 1u);                    // round to nearest even
    return static_cast<uint16_t>(x >> 16);
  }
  static float to_float(uint16_t b) { return bits_float(static_cast<uint32_t>(b) << 16); }
};

}  // namespace graft
