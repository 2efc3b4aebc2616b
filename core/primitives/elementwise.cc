#include "core/primitives/elementwise.h"

#include "absl/strings/str_cat.h"
#include "core/error.h"

namespace graft {

bool accepts(DTypeClass c, DType d) {
  switch (c) {
    case DTypeClass::kAny:
      return true;
    case DTypeClass::kNumeric:
      return d != DType::kBool;
    case DTypeClass::kFloating:
      return is_floating(d);
    case DTypeClass::kIntegral:
      return is_integral(d);
    case DTypeClass::kBoolOrIntegral:
      return d == DType::kBool || is_integral(d);
  }
  return false;
}

namespace {
const char* class_name(DTypeClass c) {
  switch (c) {
    case DTypeClass::kAny:
      return "any dtype";
    case DTypeClass::kNumeric:
      return "a numeric dtype";
    case DTypeClass::kFloating:
      return "a floating dtype";
    case DTypeClass::kIntegral:
      return "an integer dtype";
    case DTypeClass::kBoolOrIntegral:
      return "a bool or integer dtype";
  }
  return "";
}

void check_arity(const Primitive& p, const std::vector<Aval>& in, size_t n) {
  if (in.size() != n) fail(p.name(), "takes ", n, " operands, got ", in.size());
}
}  // namespace

std::vector<Aval> Unary::infer(const std::vector<Aval>& in) const {
  check_arity(*this, in, 1);
  DTypeClass c = dtype_class(id());
  if (!accepts(c, in[0].dtype)) {
    fail(name(), "requires ", class_name(c), ", got ", in[0].str());
  }
  if (primitive_facts(id()).has(kBoolOut)) return {Aval{in[0].shape, DType::kBool, false}};
  return {in[0]};
}

std::vector<Aval> Binary::infer(const std::vector<Aval>& in) const {
  check_arity(*this, in, 2);
  if (in[0].shape != in[1].shape || in[0].dtype != in[1].dtype) {
    fail(name(), "operands must have equal shapes and dtypes, got ", in[0].str(), " and ",
         in[1].str());
  }
  DTypeClass c = dtype_class(id());
  if (!accepts(c, in[0].dtype)) fail(name(), "requires ", class_name(c), ", got ", in[0].str());
  if (is_comparison()) return {Aval{in[0].shape, DType::kBool, false}};
  return {Aval{in[0].shape, in[0].dtype, in[0].weak && in[1].weak}};
}

std::vector<Aval> SelectN::infer(const std::vector<Aval>& in) const {
  check_arity(*this, in, 3);
  if (in[0].dtype != DType::kBool) fail(name(), "predicate must be bool, got ", in[0].str());
  if (in[1].shape != in[2].shape || in[1].dtype != in[2].dtype || in[0].shape != in[1].shape) {
    fail(name(), "predicate and cases must have equal shapes (and cases equal dtypes), got ",
         in[0].str(), ", ", in[1].str(), ", ", in[2].str());
  }
  return {Aval{in[1].shape, in[1].dtype, in[1].weak && in[2].weak}};
}

std::vector<Aval> ConvertElementType::infer(const std::vector<Aval>& in) const {
  check_arity(*this, in, 1);
  return {Aval{in[0].shape, dtype_, weak_}};
}
std::string ConvertElementType::params() const {
  return absl::StrCat("new_dtype=", dtype_name(dtype_), weak_ ? " weak_type=True" : "");
}
bool ConvertElementType::same_params(const Primitive& o) const {
  auto& c = static_cast<const ConvertElementType&>(o);
  return o.id() == id() && c.dtype_ == dtype_ && c.weak_ == weak_;
}

std::vector<Aval> BitcastConvertType::infer(const std::vector<Aval>& in) const {
  check_arity(*this, in, 1);
  if (dtype_size(in[0].dtype) != dtype_size(dtype_) || in[0].dtype == DType::kBool ||
      dtype_ == DType::kBool) {
    fail(name(), "needs non-bool dtypes of equal width, got ", dtype_name(in[0].dtype), " -> ",
         dtype_name(dtype_));
  }
  return {Aval{in[0].shape, dtype_, false}};
}
std::string BitcastConvertType::params() const {
  return absl::StrCat("new_dtype=", dtype_name(dtype_));
}
bool BitcastConvertType::same_params(const Primitive& o) const {
  return o.id() == id() && static_cast<const BitcastConvertType&>(o).dtype_ == dtype_;
}

std::vector<Aval> StopGradient::infer(const std::vector<Aval>& in) const {
  check_arity(*this, in, 1);
  return {in[0]};
}
std::vector<Array> StopGradient::jvp(const std::vector<Array>&, const std::vector<Array>&,
                                     const std::vector<Array>&) const {
  return {Array()};  // zero tangent, by definition
}
std::vector<Array> StopGradient::vjp(const std::vector<Array>&, const std::vector<Array>&,
                                     const std::vector<Array>&) const {
  return {Array()};  // no cotangent flows back
}
Batched StopGradient::vmap(const std::vector<Array>& args, const std::vector<int>& dims) const {
  return {{bind1(std::make_shared<const StopGradient>(), {args[0]})}, {dims[0]}};
}

Array unary(PrimitiveId id, const Array& x) {
  return bind1(std::make_shared<const Unary>(id), {x});
}

Array binary(PrimitiveId id, const Array& a, const Array& b) {
  return bind1(std::make_shared<const Binary>(id), {a, b});
}

}  // namespace graft
