// Element types and JAX's type-promotion lattice.
#pragma once

#include <complex>
#include <cstdint>
#include <ostream>
#include <string_view>

#include "core/dtype/float8.h"
#include "core/dtype/half.h"

namespace graft {

// kC64 / kC128 are complex64 / complex128 (std::complex<float> / <double>). Only the
// primitives whose row in core/primitives/list.h has the kComplex flag take them; bind() rejects
// the rest at trace time. kF8E4M3FN / kF8E5M2 are float8_e4m3fn / float8_e5m2
// (core/dtype/float8.h), likewise limited to the kFloat8 rows. kAllDTypes and dispatch_dtype cover
// the other real dtypes only: complex kernels dispatch on their own (dispatch_complex), fp8 ones on
// dispatch_float8. New dtypes are appended (kI8.. after kC128): nothing depends on the numeric
// values, but appending keeps serialized enums stable.
enum class DType : uint8_t {
  kBool,
  kU8,
  kU32,
  kI32,
  kI64,
  kF16,
  kBF16,
  kF32,
  kF64,
  kC64,
  kC128,
  kI8,
  kI16,
  kU16,
  kU64,
  kF8E4M3FN,
  kF8E5M2,
};
inline constexpr int kNumDTypes = 13;  // the real dtypes, listed in kAllDTypes
inline constexpr DType kAllDTypes[kNumDTypes] = {
    DType::kBool, DType::kU8,  DType::kU16, DType::kU32, DType::kU64, DType::kI8,  DType::kI16,
    DType::kI32,  DType::kI64, DType::kF16, DType::kBF16, DType::kF32, DType::kF64};
// The integer dtypes (bool excluded), narrowest first within each signedness.
inline constexpr DType kIntegerDTypes[8] = {DType::kU8, DType::kU16, DType::kU32, DType::kU64,
                                            DType::kI8, DType::kI16, DType::kI32, DType::kI64};
inline constexpr DType kComplexDTypes[2] = {DType::kC64, DType::kC128};
inline constexpr DType kFloat8DTypes[2] = {DType::kF8E4M3FN, DType::kF8E5M2};

const char* dtype_name(DType d);  // "f32", "bf16", "i32", "f8_e4m3fn", ...
int64_t dtype_size(DType d);      // bytes per element
bool is_floating(DType d);  // f16, bf16, f32, f64 and the fp8 types (as jnp.floating)
bool is_float8(DType d);    // f8_e4m3fn, f8_e5m2
bool is_integral(DType d);  // signed or unsigned integers, not bool
bool is_unsigned(DType d);  // u8, u16, u32, u64
bool is_complex(DType d);   // c64, c128
bool is_inexact(DType d);   // floating or complex: the values that carry derivatives
// c64 -> f32, c128 -> f64 (the dtype of real / imag parts); real dtypes map to themselves.
DType complex_part_dtype(DType d);
// The complex dtype holding `d`'s values: f64 (and c128) -> c128, everything else -> c64.
DType complex_dtype_for(DType d);
std::ostream& operator<<(std::ostream& os, DType d);

// JAX's promotion: the least upper bound in the lattice
//   bool -> i* -> {u8, i8} ... {u64, i64} -> f* -> {f16, bf16} -> f32 -> f64
//   f* -> c* -> c64 -> c128, f32 -> c64, f64 -> c128, f* -> f8_e4m3fn, f* -> f8_e5m2
// where i*, f* and c* are the weak (C++ scalar) int, float and complex. A weak operand only fixes the
// kind (int or float); the result is weak iff both operands are weak. The fp8 types have no
// edges up, as in JAX: bool, integers and weak floats promote to them, while an fp8 type with
// any other float or complex type has no common type and throws graft::Error ("promote_types:
// ..."; convert explicitly).
struct TypeInfo {
  DType dtype;
  bool weak = false;
};
TypeInfo promote_types(TypeInfo a, TypeInfo b, std::string_view op = "promote_types");

// Maps C++ element types to DTypes.
template <typename T>
struct dtype_of;
template <>
struct dtype_of<bool> {
  static constexpr DType value = DType::kBool;
};
template <>
struct dtype_of<uint8_t> {
  static constexpr DType value = DType::kU8;
};
template <>
struct dtype_of<uint16_t> {
  static constexpr DType value = DType::kU16;
};
template <>
struct dtype_of<uint64_t> {
  static constexpr DType value = DType::kU64;
};
template <>
struct dtype_of<int8_t> {
  static constexpr DType value = DType::kI8;
};
template <>
struct dtype_of<int16_t> {
  static constexpr DType value = DType::kI16;
};
template <>
struct dtype_of<uint32_t> {
  static constexpr DType value = DType::kU32;
};
template <>
struct dtype_of<int32_t> {
  static constexpr DType value = DType::kI32;
};
template <>
struct dtype_of<int64_t> {
  static constexpr DType value = DType::kI64;
};
template <>
struct dtype_of<f16> {
  static constexpr DType value = DType::kF16;
};
template <>
struct dtype_of<bf16> {
  static constexpr DType value = DType::kBF16;
};
template <>
struct dtype_of<float> {
  static constexpr DType value = DType::kF32;
};
template <>
struct dtype_of<double> {
  static constexpr DType value = DType::kF64;
};
template <>
struct dtype_of<std::complex<float>> {
  static constexpr DType value = DType::kC64;
};
template <>
struct dtype_of<std::complex<double>> {
  static constexpr DType value = DType::kC128;
};
template <>
struct dtype_of<f8_e4m3fn> {
  static constexpr DType value = DType::kF8E4M3FN;
};
template <>
struct dtype_of<f8_e5m2> {
  static constexpr DType value = DType::kF8E5M2;
};
template <typename T>
inline constexpr DType dtype_v = dtype_of<T>::value;

// Throws graft::Error: a complex or fp8 dtype reached a kernel without it (core/dtype/dtype.cc).
[[noreturn]] void fail_dtype_dispatch(DType d);

// Calls fn.template operator()<T>() with the C++ type of `d`, a dtype of kAllDTypes (a complex
// or fp8 one is an error: bind() keeps them away from kernels that do not support them).
template <typename Fn>
decltype(auto) dispatch_dtype(DType d, Fn&& fn) {
  switch (d) {
    case DType::kBool:
      return fn.template operator()<bool>();
    case DType::kU8:
      return fn.template operator()<uint8_t>();
    case DType::kU16:
      return fn.template operator()<uint16_t>();
    case DType::kU64:
      return fn.template operator()<uint64_t>();
    case DType::kI8:
      return fn.template operator()<int8_t>();
    case DType::kI16:
      return fn.template operator()<int16_t>();
    case DType::kU32:
      return fn.template operator()<uint32_t>();
    case DType::kI32:
      return fn.template operator()<int32_t>();
    case DType::kI64:
      return fn.template operator()<int64_t>();
    case DType::kF16:
      return fn.template operator()<f16>();
    case DType::kBF16:
      return fn.template operator()<bf16>();
    case DType::kF32:
      return fn.template operator()<float>();
    case DType::kC64:
    case DType::kC128:
    case DType::kF8E4M3FN:
    case DType::kF8E5M2:
      fail_dtype_dispatch(d);
    case DType::kF64:
      break;
  }
  return fn.template operator()<double>();
}

// Calls fn.template operator()<T>() with std::complex<float> or std::complex<double>.
template <typename Fn>
decltype(auto) dispatch_complex(DType d, Fn&& fn) {
  if (d == DType::kC64) return fn.template operator()<std::complex<float>>();
  if (d != DType::kC128) fail_dtype_dispatch(d);
  return fn.template operator()<std::complex<double>>();
}

// Calls fn.template operator()<T>() with f8_e4m3fn or f8_e5m2.
template <typename Fn>
decltype(auto) dispatch_float8(DType d, Fn&& fn) {
  if (d == DType::kF8E4M3FN) return fn.template operator()<f8_e4m3fn>();
  if (d != DType::kF8E5M2) fail_dtype_dispatch(d);
  return fn.template operator()<f8_e5m2>();
}

// dispatch_dtype with the fp8 types too, for code that only converts or stores elements
// (convert_element_type, constants, reading an Array), never computes in them.
template <typename Fn>
decltype(auto) dispatch_real_or_float8(DType d, Fn&& fn) {
  if (is_float8(d)) return dispatch_float8(d, fn);
  return dispatch_dtype(d, fn);
}

}  // namespace graft
