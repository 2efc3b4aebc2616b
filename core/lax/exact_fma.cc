// A correctly rounded fused multiply-add built from ordinary ops: error-free transformations
// (TwoSum, Veltkamp's split, Dekker's product) and rounding to odd.
#include "core/lax/exact_fma.h"

#include <cstdint>
#include <utility>

#include "core/error.h"
#include "core/lax/lax.h"

namespace graft {
namespace {

Array f64(double v) { return scalar(v, DType::kF64); }
Array i64(int64_t v) { return array<int64_t>({v}, Shape{}); }

// Knuth's TwoSum: s = a + b rounded, and e with s + e == a + b exactly.
std::pair<Array, Array> two_sum(const Array& a, const Array& b) {
  Array s = a + b;
  Array z = s - a;
  return {s, (a - (s - z)) + (b - z)};
}

// s + e rounded to odd (f64), given s = RN(s + e): when inexact and s's last bit is even,
// step one ulp toward e (the other neighbour of the exact sum).
Array round_odd(const Array& s, const Array& e) {
  Array zero = f64(0);
  Array bits = bitcast_convert_type(s, DType::kI64);
  Array even = (bits & i64(1)) == i64(0);
  Array step = where((e > zero) == (s > zero), i64(1), i64(-1));
  return bitcast_convert_type(where(logical_and(e != zero, even), bits + step, bits), DType::kF64);
}

// Veltkamp's split: x = hi + lo exactly, each with at most 26 significant bits.
std::pair<Array, Array> veltkamp(const Array& x) {
  Array g = x * f64(134217729.0);  // 2^27 + 1
  Array hi = g - (g - x);
  return {hi, x - hi};
}

}  // namespace

namespace detail {

Array fma(const Array& a, const Array& b, const Array& c) {
  DType d = a.dtype();
  if (d != b.dtype() || d != c.dtype() || (d != DType::kF32 && d != DType::kF64)) {
    fail("fma", "needs f32 or f64 operands of one dtype, got ", a.aval().str(), ", ",
         b.aval().str(), ", ", c.aval().str());
  }
  if (d == DType::kF32) {
    // The product of two f32 is exact in f64; rounding the sum to odd in f64 (53 bits) and
    // then to f32 (24 bits) rounds correctly (Boldo & Melquiond, IEEE TC 2008).
    Array p = astype(a, DType::kF64) * astype(b, DType::kF64);
    auto [s, e] = two_sum(p, astype(c, DType::kF64));
    return astype(round_odd(s, e), DType::kF32);
  }
  // f64: Dekker's exact product ph + pl, then the correctly rounded sum of the three terms
  // ph + pl + c with one odd-rounded addition (Boldo & Melquiond, algorithm for three
  // addends). Checked against std::fma in tests/core/random/random_test.cc.
  auto [ah, al] = veltkamp(a);
  auto [bh, bl] = veltkamp(b);
  Array ph = a * b;
  Array pl = (((ah * bh - ph) + ah * bl) + al * bh) + al * bl;
  auto [uh, ul] = two_sum(c, pl);
  auto [th, tl] = two_sum(ph, uh);
  auto [s, e] = two_sum(tl, ul);
  return th + round_odd(s, e);
}

}  // namespace detail

}  // namespace graft
