// Element types and JAX's type-promotion lattice.
#pragma once

#include <cstdint>
#include <ostream>
#include <string_view>

#include "core/half.h"

namespace graft {

enum class DType : uint8_t { kBool, kU8, kU32, kI32, kI64, kF16, kBF16, kF32, kF64 };
inline constexpr int kNumDTypes = 9;
inline constexpr DType kAllDTypes[kNumDTypes] = {DType::kBool, DType::kU8,  DType::kU32,
                                                 DType::kI32,  DType::kI64, DType::kF16,
                                                 DType::kBF16, DType::kF32, DType::kF64};

const char* dtype_name(DType d);  // "f32", "bf16", "i32", ...
int64_t dtype_size(DType d);      // bytes per element
bool is_floating(DType d);
bool is_integral(DType d);  // signed or unsigned integers, not bool
bool is_unsigned(DType d);  // u8, u32
std::ostream& operator<<(std::ostream& os, DType d);

// JAX's promotion: the least upper bound in the lattice
//   bool -> i* -> {u8, i8...} ... i64 -> f* -> {f16, bf16} -> f32 -> f64
// where i* and f* are the weak (C++ scalar) int and float. A weak operand only fixes the
// kind (int or float); the result is weak iff both operands are weak.
struct TypeInfo {
  DType dtype;
  bool weak = false;
};
TypeInfo promote_types(TypeInfo a, TypeInfo b);

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
template <typename T>
inline constexpr DType dtype_v = dtype_of<T>::value;

// Calls fn.template operator()<T>() with the C++ type of `d`.
template <typename Fn>
decltype(auto) dispatch_dtype(DType d, Fn&& fn) {
  switch (d) {
    case DType::kBool:
      return fn.template operator()<bool>();
    case DType::kU8:
      return fn.template operator()<uint8_t>();
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
    case DType::kF64:
      break;
  }
  return fn.template operator()<double>();
}

}  // namespace graft
