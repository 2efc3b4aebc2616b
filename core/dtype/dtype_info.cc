// jax.numpy's dtype queries (core/dtype/dtype_info.h), with JAX 0.10.2's / numpy's answers.
#include "core/dtype/dtype_info.h"

#include <cmath>
#include <limits>

#include "core/error.h"

namespace graft {
namespace {

// numpy's order of kinds for same_kind casting: b < u < i < f < c.
int kind_rank(DType d) {
  if (d == DType::kBool) return 0;
  if (is_unsigned(d)) return 1;
  if (is_integral(d)) return 2;
  return is_complex(d) ? 4 : 3;
}

int bits_of(DType d) { return static_cast<int>(dtype_size(d) * 8); }

// Value digits: an unsigned int's bits, a signed int's bits less the sign, a float's
// significand (nmant + 1).
int digits(DType d) {
  if (is_floating(d)) return finfo(d).nmant + 1;
  return bits_of(d) - (is_unsigned(d) ? 0 : 1);
}

bool safe_cast(DType from, DType to) {
  if (from == to || from == DType::kBool) return true;
  if (to == DType::kBool) return false;
  // A complex number casts safely only to a complex type; into one, a value casts as into its
  // parts' float type.
  if (is_complex(from)) return is_complex(to) && safe_cast(complex_part_dtype(from), complex_part_dtype(to));
  if (is_complex(to)) return safe_cast(from, complex_part_dtype(to));
  if (is_integral(from) && is_integral(to)) {
    if (is_unsigned(from) == is_unsigned(to)) return bits_of(from) <= bits_of(to);
    return is_unsigned(from) && bits_of(from) < bits_of(to);
  }
  if (is_integral(from)) return to == DType::kF64 || digits(from) <= digits(to);  // numpy: i64->f64
  if (is_integral(to)) return false;
  const FInfo a = finfo(from), b = finfo(to);
  return a.nmant <= b.nmant && a.nexp <= b.nexp;
}

}  // namespace

FInfo finfo(DType dtype) {
  // A complex type's finfo is its parts' (numpy and JAX give float32's for complex64).
  if (is_complex(dtype)) return finfo(complex_part_dtype(dtype));
  // resolution: 10^-precision rounded to the dtype, as numpy stores it.
  int nmant, nexp;
  double resolution;
  switch (dtype) {
    case DType::kF16:
      nmant = 10, nexp = 5, resolution = 0.0010004043579101562;
      break;
    case DType::kBF16:
      nmant = 7, nexp = 8, resolution = 0.010009765625;
      break;
    case DType::kF32:
      nmant = 23, nexp = 8, resolution = 1e-6f;
      break;
    case DType::kF64:
      nmant = 52, nexp = 11, resolution = 1e-15;
      break;
    case DType::kF8E4M3FN:
      nmant = 3, nexp = 4, resolution = 0.1015625;
      break;
    case DType::kF8E5M2:
      nmant = 2, nexp = 5, resolution = 0.09375;
      break;
    default:
      fail("finfo", "data type ", dtype_name(dtype), " is not floating");
  }
  FInfo f{};
  f.dtype = dtype;
  f.bits = bits_of(dtype);
  f.nmant = nmant;
  f.nexp = f.iexp = nexp;
  f.maxexp = 1 << (nexp - 1);
  f.minexp = 2 - f.maxexp;
  f.machep = -nmant;
  f.negep = -nmant - 1;
  f.eps = std::ldexp(1.0, -nmant);
  f.epsneg = std::ldexp(1.0, -nmant - 1);
  f.max = (2 - f.eps) * std::ldexp(1.0, f.maxexp - 1);
  f.min = -f.max;
  f.tiny = f.smallest_normal = std::ldexp(1.0, f.minexp);
  f.smallest_subnormal = std::ldexp(1.0, f.minexp - nmant);
  f.precision = static_cast<int>(-std::log10(f.eps));
  f.resolution = resolution;
  if (is_float8(dtype)) f.precision = 1;  // as ml_dtypes' finfo
  if (dtype == DType::kF8E4M3FN) {  // no inf: the top exponent holds finite values up to 448
    f.maxexp = 9;
    f.max = 448, f.min = -448;
  }
  return f;
}

FInfo finfo(const Array& x) {
  detail::check_valid("finfo", x);
  return finfo(x.dtype());
}

IInfo iinfo(DType dtype) {
  switch (dtype) {
    case DType::kU8:
      return {dtype, 8, 0, 255};
    case DType::kU16:
      return {dtype, 16, 0, 65535};
    case DType::kU64:
      return {dtype, 64, 0, std::numeric_limits<uint64_t>::max()};
    case DType::kI8:
      return {dtype, 8, -128, 127};
    case DType::kI16:
      return {dtype, 16, -32768, 32767};
    case DType::kU32:
      return {dtype, 32, 0, std::numeric_limits<uint32_t>::max()};
    case DType::kI32:
      return {dtype, 32, std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max()};
    case DType::kI64:
      return {dtype, 64, std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max()};
    default:
      fail("iinfo", "data type ", dtype_name(dtype), " is not an integer type");
  }
}

IInfo iinfo(const Array& x) {
  detail::check_valid("iinfo", x);
  return iinfo(x.dtype());
}

bool issubdtype(DType dtype, DTypeCategory category) {
  switch (category) {
    case DTypeCategory::kGeneric:
      return true;
    case DTypeCategory::kNumber:
      return dtype != DType::kBool;
    case DTypeCategory::kInteger:
      return is_integral(dtype);
    case DTypeCategory::kSignedInteger:
      return is_integral(dtype) && !is_unsigned(dtype);
    case DTypeCategory::kUnsignedInteger:
      return is_unsigned(dtype);
    case DTypeCategory::kInexact:
      return is_inexact(dtype);
    case DTypeCategory::kFloating:
      return is_floating(dtype);
    case DTypeCategory::kComplexFloating:
      return is_complex(dtype);
    case DTypeCategory::kBool:
      return dtype == DType::kBool;
  }
  return false;
}

bool issubdtype(DType dtype, DType dtype2) { return dtype == dtype2; }

bool isdtype(DType dtype, const std::string& kind) {
  if (kind == "bool") return dtype == DType::kBool;
  if (kind == "signed integer") return issubdtype(dtype, DTypeCategory::kSignedInteger);
  if (kind == "unsigned integer") return is_unsigned(dtype);
  if (kind == "integral") return is_integral(dtype);
  if (kind == "real floating") return is_floating(dtype);
  if (kind == "complex floating") return is_complex(dtype);
  if (kind == "numeric") return dtype != DType::kBool;
  fail("isdtype", "unrecognized kind '", kind,
       "': expected one of 'bool', 'signed integer', 'unsigned integer', 'integral', "
       "'real floating', 'complex floating', 'numeric'");
}

bool isdtype(DType dtype, DType kind) { return dtype == kind; }

bool isdtype(DType dtype, const std::vector<std::string>& kinds) {
  bool any = false;
  for (const std::string& k : kinds) any = isdtype(dtype, k) || any;  // every kind checked
  return any;
}

bool can_cast(DType from, DType to, const std::string& casting) {
  if (casting == "no" || casting == "equiv") return from == to;
  if (casting == "safe") return safe_cast(from, to);
  if (casting == "same_kind") return safe_cast(from, to) || kind_rank(from) <= kind_rank(to);
  if (casting == "unsafe") return true;
  fail("can_cast", "casting must be one of 'no', 'equiv', 'safe', 'same_kind', or 'unsafe', got '",
       casting, "'");
}

bool can_cast(const Array& from, DType to, const std::string& casting) {
  detail::check_valid("can_cast", from);
  return can_cast(from.dtype(), to, casting);
}

DTypeArg::DTypeArg(const Array& x) {
  detail::check_valid("result_type", x);
  type = {x.dtype(), x.weak_type()};
}

DType result_type(const std::vector<DTypeArg>& args) {
  if (args.empty()) fail("result_type", "at least one array or dtype is required");
  TypeInfo t = args[0].type;
  for (size_t i = 1; i < args.size(); ++i) t = promote_types(t, args[i].type);
  // Weak C++ doubles (complex) alone are JAX's Python floats (complex): the default f32 (c64).
  // (u64 with a signed int is a weak f64 too, as in JAX with x64: that one stays f64.)
  bool all_weak = true;
  for (const DTypeArg& a : args) all_weak = all_weak && a.type.weak;
  if (all_weak && t.dtype == DType::kF64) return DType::kF32;
  if (all_weak && t.dtype == DType::kC128) return DType::kC64;
  return t.dtype;
}

}  // namespace graft
