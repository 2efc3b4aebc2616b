// jax.numpy's dtype queries: finfo / iinfo, issubdtype / isdtype, can_cast,
// result_type, isscalar, for graft's dtypes (core/dtype/dtype.h), with JAX 0.10.2's answers (JAX
// with x64 on where 64-bit types meet; a weak C++ float alone gives the default float, f32, as JAX
// with x64 off). Host-side facts: nothing is traced. Included at the end of core/ops.h; definitions
// in core/dtype_info.cc. Misuse (finfo of an integer type, an unknown kind or casting) throws
// graft::Error naming the function.
#pragma once

#include <complex>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "core/array.h"
#include "core/dtype/dtype.h"

namespace graft {

// jnp.finfo's fields (numpy's names and conventions: minexp / maxexp bound the exponent of
// 2^e with min normal 2^minexp, nmant the stored mantissa bits, machep / negep the exponents of
// eps / epsneg, precision the decimal digits, resolution 10^-precision).
struct FInfo {
  DType dtype;
  int bits, nmant, nexp, maxexp, minexp, machep, negep, iexp, precision;
  double eps, epsneg, max, min, tiny, smallest_normal, smallest_subnormal, resolution;
};
FInfo finfo(DType dtype);  // f16, bf16, f32, f64, fp8 (ml_dtypes'); c64 / c128: their parts'
FInfo finfo(const Array& x);
// jnp.iinfo: bits, min, max of the integer dtypes (max is unsigned: u64's does not fit int64).
struct IInfo {
  DType dtype;
  int bits;
  int64_t min;
  uint64_t max;
};
IInfo iinfo(DType dtype);
IInfo iinfo(const Array& x);

// numpy's abstract type hierarchy (jnp.generic, jnp.number, ...), for issubdtype.
enum class DTypeCategory {
  kGeneric,
  kNumber,
  kInteger,
  kSignedInteger,
  kUnsignedInteger,
  kInexact,
  kFloating,
  kComplexFloating,  // c64, c128
  kBool,
};
// Whether dtype is below the category (bf16 and f16 are floating, as in JAX), or equals dtype2.
bool issubdtype(DType dtype, DTypeCategory category);
bool issubdtype(DType dtype, DType dtype2);
// The array API's kinds: "bool", "signed integer", "unsigned integer", "integral",
// "real floating", "complex floating", "numeric"; or a dtype (equality); a list: any of them.
bool isdtype(DType dtype, const std::string& kind);
bool isdtype(DType dtype, DType kind);
bool isdtype(DType dtype, const std::vector<std::string>& kinds);

// numpy's can_cast (jnp.can_cast is numpy's): casting "no" / "equiv" (the same dtype), "safe"
// (every value exact), "same_kind" (safe, or within a kind, or up the order bool < unsigned <
// signed < floating), "unsafe" (always).
bool can_cast(DType from, DType to, const std::string& casting = "safe");
bool can_cast(const Array& from, DType to, const std::string& casting = "safe");

// One argument of result_type: an array (its dtype, weak or not), a dtype (strong), or a C++
// scalar (int, double: weak; bool: strong bool), like JAX's Python scalars.
struct DTypeArg {
  TypeInfo type;
  DTypeArg(const Array& x);  // NOLINT(runtime/explicit)
  DTypeArg(DType d) : type{d, false} {}                // NOLINT
  DTypeArg(int) : type{DType::kI32, true} {}           // NOLINT
  DTypeArg(int64_t) : type{DType::kI32, true} {}       // NOLINT
  DTypeArg(double) : type{DType::kF32, true} {}        // NOLINT
  DTypeArg(bool) : type{DType::kBool, false} {}        // NOLINT
  DTypeArg(std::complex<double>) : type{DType::kC128, true} {}  // NOLINT: a weak complex
};
// jnp.result_type: JAX's promotion of all the arguments (at least one).
DType result_type(const std::vector<DTypeArg>& args);

// jnp.isscalar: a C++ number, or an array with no dimensions.
inline bool isscalar(const Array& x) { return x.ndim() == 0; }
template <typename T, std::enable_if_t<std::is_arithmetic_v<T>, int> = 0>
constexpr bool isscalar(T) {
  return true;
}

}  // namespace graft
