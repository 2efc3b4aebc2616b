#include "core/dtype/dtype.h"

#include <array>

#include "core/error.h"

namespace graft {

const char* dtype_name(DType d) {
  switch (d) {
    case DType::kBool:
      return "bool";
    case DType::kU8:
      return "u8";
    case DType::kU32:
      return "u32";
    case DType::kI32:
      return "i32";
    case DType::kI64:
      return "i64";
    case DType::kF16:
      return "f16";
    case DType::kBF16:
      return "bf16";
    case DType::kF32:
      return "f32";
    case DType::kF64:
      return "f64";
    case DType::kC64:
      return "c64";
    case DType::kC128:
      return "c128";
    case DType::kI8:
      return "i8";
    case DType::kI16:
      return "i16";
    case DType::kU16:
      return "u16";
    case DType::kU64:
      return "u64";
    case DType::kF8E4M3FN:
      return "f8_e4m3fn";
    case DType::kF8E5M2:
      return "f8_e5m2";
  }
  return "?";
}

int64_t dtype_size(DType d) {
  switch (d) {
    case DType::kBool:
    case DType::kU8:
    case DType::kI8:
    case DType::kF8E4M3FN:
    case DType::kF8E5M2:
      return 1;
    case DType::kI16:
    case DType::kU16:
    case DType::kF16:
    case DType::kBF16:
      return 2;
    case DType::kU32:
    case DType::kI32:
    case DType::kF32:
      return 4;
    case DType::kI64:
    case DType::kU64:
    case DType::kF64:
    case DType::kC64:
      return 8;
    case DType::kC128:
      return 16;
  }
  return 0;
}

bool is_floating(DType d) {
  return d == DType::kF16 || d == DType::kBF16 || d == DType::kF32 || d == DType::kF64 ||
         is_float8(d);
}
bool is_float8(DType d) { return d == DType::kF8E4M3FN || d == DType::kF8E5M2; }
bool is_complex(DType d) { return d == DType::kC64 || d == DType::kC128; }
bool is_inexact(DType d) { return is_floating(d) || is_complex(d); }
DType complex_part_dtype(DType d) {
  if (d == DType::kC64) return DType::kF32;
  if (d == DType::kC128) return DType::kF64;
  return d;
}
DType complex_dtype_for(DType d) {
  return d == DType::kF64 || d == DType::kC128 ? DType::kC128 : DType::kC64;
}

void fail_dtype_dispatch(DType d) {
  fail("dtype", dtype_name(d), " values reached a kernel that does not support them");
}

bool is_unsigned(DType d) {
  return d == DType::kU8 || d == DType::kU16 || d == DType::kU32 || d == DType::kU64;
}
bool is_integral(DType d) {
  return is_unsigned(d) || d == DType::kI8 || d == DType::kI16 || d == DType::kI32 ||
         d == DType::kI64;
}

std::ostream& operator<<(std::ostream& os, DType d) { return os << dtype_name(d); }

namespace {

// The full JAX lattice, including types graft does not expose, so joins are exact.
enum L : int {
  kB,
  kIw,
  kFw,
  kU8,
  kU16,
  kU32,
  kU64,
  kI8,
  kI16,
  kI32,
  kI64,
  kF16,
  kBF16,
  kF32,
  kF64,
  kCw,
  kC64,
  kC128,
  kF8E4M3FN,
  kF8E5M2,
  kN
};

constexpr std::array<std::array<int, 5>, kN> kEdges = {{
    {kIw, -1, -1, -1, -1},                  // bool
    {kU8, kI8, -1, -1, -1},                 // i*
    {kF16, kBF16, kCw, kF8E4M3FN, kF8E5M2},  // f*
    {kI16, kU16, -1, -1, -1},               // u8
    {kI32, kU32, -1, -1, -1},               // u16
    {kI64, kU64, -1, -1, -1},               // u32
    {kFw, -1, -1, -1, -1},                  // u64
    {kI16, -1, -1, -1, -1},                 // i8
    {kI32, -1, -1, -1, -1},                 // i16
    {kI64, -1, -1, -1, -1},                 // i32
    {kFw, -1, -1, -1, -1},                  // i64
    {kF32, -1, -1, -1, -1},                 // f16
    {kF32, -1, -1, -1, -1},                 // bf16
    {kF64, kC64, -1, -1, -1},               // f32
    {kC128, -1, -1, -1, -1},                // f64
    {kC64, -1, -1, -1, -1},                 // c*
    {kC128, -1, -1, -1, -1},                // c64
    {-1, -1, -1, -1, -1},                   // c128
    {-1, -1, -1, -1, -1},                   // f8_e4m3fn: no edges up (8-bit floats do not promote)
    {-1, -1, -1, -1, -1},                   // f8_e5m2
}};

// upper[a] = bitmask of all nodes reachable from a (including a).
std::array<uint32_t, kN> upper_sets() {
  std::array<uint32_t, kN> up{};
  for (int a = kN - 1; a >= 0; --a) {
    // Nodes are not topologically numbered, so iterate to a fixed point below.
    up[a] = 1u << a;
  }
  for (bool changed = true; changed;) {
    changed = false;
    for (int a = 0; a < kN; ++a) {
      for (int e : kEdges[a]) {
        if (e < 0) continue;
        uint32_t merged = up[a] | up[e];
        if (merged != up[a]) {
          up[a] = merged;
          changed = true;
        }
      }
    }
  }
  return up;
}

int to_lattice(TypeInfo t) {
  if (t.weak && is_complex(t.dtype)) return kCw;
  if (t.weak && is_floating(t.dtype)) return kFw;
  if (t.weak && (is_integral(t.dtype))) return kIw;
  switch (t.dtype) {
    case DType::kBool:
      return kB;
    case DType::kU8:
      return kU8;
    case DType::kU16:
      return kU16;
    case DType::kU64:
      return kU64;
    case DType::kI8:
      return kI8;
    case DType::kI16:
      return kI16;
    case DType::kU32:
      return kU32;
    case DType::kI32:
      return kI32;
    case DType::kI64:
      return kI64;
    case DType::kF16:
      return kF16;
    case DType::kBF16:
      return kBF16;
    case DType::kF32:
      return kF32;
    case DType::kF64:
      return kF64;
    case DType::kC64:
      return kC64;
    case DType::kC128:
      return kC128;
    case DType::kF8E4M3FN:
      return kF8E4M3FN;
    case DType::kF8E5M2:
      return kF8E5M2;
  }
  return kF32;
}

TypeInfo from_lattice(int l) {
  switch (l) {
    case kB:
      return {DType::kBool, false};
    case kIw:
      return {DType::kI32, true};
    case kFw:
      return {DType::kF32, true};
    case kU8:
      return {DType::kU8, false};
    case kU16:
      return {DType::kU16, false};
    case kU32:
      return {DType::kU32, false};
    case kU64:
      return {DType::kU64, false};
    case kI8:
      return {DType::kI8, false};
    case kI16:
      return {DType::kI16, false};
    case kI32:
      return {DType::kI32, false};
    case kI64:
      return {DType::kI64, false};
    case kF16:
      return {DType::kF16, false};
    case kBF16:
      return {DType::kBF16, false};
    case kF32:
      return {DType::kF32, false};
    case kCw:
      return {DType::kC64, true};
    case kC64:
      return {DType::kC64, false};
    case kC128:
      return {DType::kC128, false};
    case kF8E4M3FN:
      return {DType::kF8E4M3FN, false};
    case kF8E5M2:
      return {DType::kF8E5M2, false};
    default:
      return {DType::kF64, false};
  }
}

// Two weak values of one kind. A weak f64 is a C++ double: its width is not a type fact but
// precision held until a width appears, so another weak float's width wins (a weak f32 array,
// e.g. i32_array + 0.5, stays f32 with a further `+ 0.5`, as in JAX without x64, where every
// weak float is f32). Otherwise the join of the strong dtypes (weak f16 + weak bf16 -> f32,
// weak i32 + weak i64 -> i64), still weak, as JAX's all-weak rule.
TypeInfo join_weak(DType a, DType b) {
  if (a == b) return {a, true};
  if (is_floating(a) && is_floating(b)) {
    if (a == DType::kF64) return {b, true};
    if (b == DType::kF64) return {a, true};
  }
  if (is_complex(a) && is_complex(b)) {
    if (a == DType::kC128) return {b, true};
    if (b == DType::kC128) return {a, true};
  }
  return {promote_types({a, false}, {b, false}).dtype, true};
}

}  // namespace

TypeInfo promote_types(TypeInfo a, TypeInfo b, std::string_view op) {
  static const std::array<uint32_t, kN> up = upper_sets();
  int la = to_lattice(a), lb = to_lattice(b);
  if (la == lb) {
    if (a.weak && b.weak) return join_weak(a.dtype, b.dtype);
    return {a.dtype, false};
  }
  uint32_t common = up[la] & up[lb];
  // The least upper bound is the common node whose own upper set contains all the others.
  for (int c = 0; c < kN; ++c) {
    if ((common >> c & 1) && (up[c] & common) == common) {
      // u64 with a signed int meets only at the weak float: JAX (x64) gives a weak f64 there,
      // not the default float that a weak float operand gives.
      if (c == kFw && la != kFw && lb != kFw) return {DType::kF64, true};
      return from_lattice(c);
    }
  }
  // Only the fp8 types lack a common upper bound with others (as in JAX).
  fail(op, "no implicit promotion between ", dtype_name(a.dtype), a.weak ? " (weak)" : "", " and ",
       dtype_name(b.dtype), b.weak ? " (weak)" : "",
       ": 8-bit floats do not promote to other floats; convert explicitly (astype)");
}

}  // namespace graft
