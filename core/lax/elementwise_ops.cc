// Public elementwise ops: jax.numpy semantics (promotion, broadcasting) over the lax-level
// primitives of core/primitives/elementwise.h.
#include <limits>

#include "core/error.h"
#include "core/lax/lax.h"
#include "core/lax/util.h"
#include "core/primitives/elementwise.h"

namespace graft {

using detail::check_valid;
using detail::convert;
using detail::promote_and_broadcast;
using P = PrimitiveId;

namespace {

// Float-only unary op: integer and bool inputs are promoted to the default float first,
// like jnp.exp(int_array).
Array float_unary(const char* op, P id, const Array& x) {
  check_valid(op, x);
  detail::refuse_complex(op, x);
  Array f = is_floating(x.dtype()) ? x : convert(x, DType::kF32, x.weak_type());
  return unary(id, f);
}

Array numeric_unary(const char* op, P id, const Array& x) {
  check_valid(op, x);
  if (x.dtype() == DType::kBool) fail(op, "is not defined for bool, got ", x.aval().str());
  return unary(id, x);
}

Array binary_op(const char* op, P id, const Array& a, const Array& b) {
  std::vector<Array> xs = promote_and_broadcast(op, {a, b});
  if (is_complex(xs[0].dtype())) {
    if (primitive_facts(id).has(kBoolOut) || id == P::kMax || id == P::kMin) {
      return detail::complex_compare(id, xs[0], xs[1]);
    }
    fail(op, "does not support complex values (got ", a.aval().str(), " and ", b.aval().str(),
         ")");
  }
  DTypeClass c = dtype_class(id);
  if (!accepts(c, xs[0].dtype())) {
    fail(op, "is not defined for ", dtype_name(xs[0].dtype()), " operands: ", a.aval().str(),
         " and ", b.aval().str());
  }
  return binary(id, xs[0], xs[1]);
}

// Promotes integer / bool operands to the default float (true division, jnp.power of floats).
Array float_binary(const char* op, P id, const Array& a, const Array& b) {
  std::vector<Array> xs = promote_and_broadcast(op, {a, b});
  if (is_complex(xs[0].dtype())) {
    fail(op, "does not support complex values (got ", a.aval().str(), " and ", b.aval().str(),
         ")");
  }
  if (!is_floating(xs[0].dtype())) {
    bool weak = xs[0].weak_type();
    xs[0] = convert(xs[0], DType::kF32, weak);
    xs[1] = convert(xs[1], DType::kF32, weak);
  }
  return binary(id, xs[0], xs[1]);
}

Array bool_or_int(const char* op, P id, const Array& a, const Array& b, bool bool_only) {
  std::vector<Array> xs = promote_and_broadcast(op, {a, b});
  DType d = xs[0].dtype();
  if (bool_only ? d != DType::kBool : !(d == DType::kBool || is_integral(d))) {
    fail(op, "needs ", bool_only ? "bool" : "bool or integer", " operands, got ", a.aval().str(),
         " and ", b.aval().str());
  }
  return binary(id, xs[0], xs[1]);
}

// lax.round (half away from zero) from floor and ceil: truncate, then step away from zero
// where the dropped fraction is at least one half. Exact: x - trunc(x) is representable.
Array round_half_away(const Array& x) {
  Array t = where(less(x, 0), unary(P::kCeil, x), unary(P::kFloor, x));
  return where(greater_equal(abs(x - t), 0.5), t + sign(x), t);
}

// jnp's _float_divmod (CPython's float_divmod): (x - fmod(x, y)) / y, one less where fmod's
// sign differs from y's, rounded. So -1 // inf == -1 and -0.0 // 3 == +0.0, as in JAX.
Array float_floor_divide(const Array& x, const Array& y) {
  Array mod = binary(P::kRem, x, y);
  Array div = binary(P::kDiv, where(equal(y, 0), x, x - mod), y);
  Array ind = logical_and(not_equal(mod, 0), not_equal(sign(y), sign(mod)));
  return round_half_away(where(ind, div - 1, div));
}

}  // namespace

Array elementwise_unary(P id, const Array& x) {
  const char* op = kPrimitiveNames[static_cast<int>(id)];
  if (primitive_facts(id).kind != OpKind::kUnary) fail(op, "is not a unary elementwise op");
  check_valid(op, x);
  if (is_complex(x.dtype())) return detail::complex_unary(op, id, x);
  switch (dtype_class(id)) {
    case DTypeClass::kFloating:
      return float_unary(op, id, x);
    case DTypeClass::kNumeric:
      return numeric_unary(op, id, x);
    default:
      check_valid(op, x);
      if (!accepts(dtype_class(id), x.dtype())) {
        fail(op, "is not defined for ", dtype_name(x.dtype()), ", got ", x.aval().str());
      }
      return unary(id, x);
  }
}
Array sigmoid(const Array& x) {
  check_valid("sigmoid", x);
  if (is_complex(x.dtype())) return detail::complex_unary("sigmoid", P::kLogistic, x);
  return float_unary("sigmoid", P::kLogistic, x);
}
Array reciprocal(const Array& x) {
  check_valid("reciprocal", x);
  return divide(Array(1.0), x);
}

// floor / ceil / round of integers are the identity, like jnp.
Array floor(const Array& x) {
  check_valid("floor", x);
  detail::refuse_complex("floor", x);
  return is_floating(x.dtype()) ? unary(P::kFloor, x) : x;
}
Array ceil(const Array& x) {
  check_valid("ceil", x);
  detail::refuse_complex("ceil", x);
  return is_floating(x.dtype()) ? unary(P::kCeil, x) : x;
}
Array round(const Array& x) {
  check_valid("round", x);
  if (is_complex(x.dtype())) return complex(round(real(x)), round(imag(x)));  // as jnp.round
  return is_floating(x.dtype()) ? unary(P::kRound, x) : x;
}
Array isfinite(const Array& x) {
  check_valid("isfinite", x);
  if (is_complex(x.dtype())) return logical_and(isfinite(real(x)), isfinite(imag(x)));
  if (!is_floating(x.dtype())) return full(x.shape(), 1, DType::kBool);
  return unary(P::kIsFinite, x);
}
Array isnan(const Array& x) {
  check_valid("isnan", x);
  if (is_complex(x.dtype())) return logical_or(isnan(real(x)), isnan(imag(x)));
  if (!is_floating(x.dtype())) return full(x.shape(), 0, DType::kBool);
  return binary(P::kNe, x, x);
}
Array isinf(const Array& x) {
  check_valid("isinf", x);
  if (is_complex(x.dtype())) return logical_or(isinf(real(x)), isinf(imag(x)));
  if (!is_floating(x.dtype())) return full(x.shape(), 0, DType::kBool);
  return equal(abs(x), Array(std::numeric_limits<double>::infinity()));
}
Array logical_not(const Array& x) {
  check_valid("logical_not", x);
  return unary(P::kNot, convert(x, DType::kBool));
}
Array bitwise_not(const Array& x) {
  check_valid("bitwise_not", x);
  if (!(x.dtype() == DType::kBool || is_integral(x.dtype()))) {
    fail("bitwise_not", "needs a bool or integer operand, got ", x.aval().str());
  }
  return unary(P::kNot, x);
}

Array add(const Array& a, const Array& b) {
  // bool + bool is logical or in jnp; lax.add rejects bool, so map it.
  std::vector<Array> xs = promote_and_broadcast("add", {a, b});
  if (xs[0].dtype() == DType::kBool) return binary(P::kOr, xs[0], xs[1]);
  if (is_complex(xs[0].dtype())) return detail::complex_add(xs[0], xs[1]);
  return binary(P::kAdd, xs[0], xs[1]);
}
Array subtract(const Array& a, const Array& b) {
  std::vector<Array> xs = promote_and_broadcast("subtract", {a, b});
  if (is_complex(xs[0].dtype())) return detail::complex_subtract(xs[0], xs[1]);
  return binary_op("subtract", P::kSub, xs[0], xs[1]);
}
Array multiply(const Array& a, const Array& b) {
  std::vector<Array> xs = promote_and_broadcast("multiply", {a, b});
  if (xs[0].dtype() == DType::kBool) return binary(P::kAnd, xs[0], xs[1]);
  if (is_complex(xs[0].dtype())) return detail::complex_multiply(xs[0], xs[1]);
  return binary(P::kMul, xs[0], xs[1]);
}
Array divide(const Array& a, const Array& b) {
  std::vector<Array> xs = promote_and_broadcast("divide", {a, b});
  if (is_complex(xs[0].dtype())) return detail::complex_divide(xs[0], xs[1]);
  return float_binary("divide", P::kDiv, xs[0], xs[1]);
}
// jnp.floor_divide / jnp.remainder, written as jax.numpy writes them over lax ops, so edge
// cases (signed zeros, infinities, division by zero) give JAX's values on every path.
Array floor_divide(const Array& a, const Array& b) {
  std::vector<Array> xs = promote_and_broadcast("floor_divide", {a, b});
  const Array &x = xs[0], &y = xs[1];
  if (x.dtype() == DType::kBool) fail("floor_divide", "is not defined for bool operands");
  if (is_floating(x.dtype())) return float_floor_divide(x, y);
  // lax.div rounds toward zero (x / 0 is -1, or all ones unsigned); step down where the signs
  // differ and it was inexact. jnp compares sign(x) with sign(y), so x // 0 is -2 for x != 0.
  Array q = binary(P::kDiv, x, y);
  if (is_unsigned(x.dtype())) return q;
  Array adjust = logical_and(not_equal(sign(x), sign(y)), not_equal(binary(P::kRem, x, y), 0));
  return where(adjust, q - 1, q);
}
Array remainder(const Array& a, const Array& b) {
  std::vector<Array> xs = promote_and_broadcast("remainder", {a, b});
  Array x = xs[0], y = xs[1];
  if (x.dtype() == DType::kBool) fail("remainder", "is not defined for bool operands");
  // jnp divides integers by 1 where the divisor is 0, so x % 0 == 0.
  if (!is_floating(y.dtype())) y = where(equal(y, 0), ones_like(y), y);
  Array r = binary(P::kRem, x, y);
  if (is_unsigned(x.dtype())) return r;
  // lax.rem takes the dividend's sign; jnp.remainder the divisor's.
  Array zero = zeros_like(r);
  Array fix = logical_and(not_equal(r, zero), not_equal(less(r, zero), less(y, zero)));
  return where(fix, r + y, r);
}
Array power(const Array& a, const Array& b) {
  check_valid("power", a);
  check_valid("power", b);
  if (is_complex(a.dtype()) || is_complex(b.dtype())) return detail::complex_power(a, b);
  return binary_op("power", P::kPow, a, b);
}
Array maximum(const Array& a, const Array& b) { return binary_op("maximum", P::kMax, a, b); }
Array minimum(const Array& a, const Array& b) { return binary_op("minimum", P::kMin, a, b); }
Array equal(const Array& a, const Array& b) { return binary_op("equal", P::kEq, a, b); }
Array not_equal(const Array& a, const Array& b) { return binary_op("not_equal", P::kNe, a, b); }
Array less(const Array& a, const Array& b) { return binary_op("less", P::kLt, a, b); }
Array less_equal(const Array& a, const Array& b) { return binary_op("less_equal", P::kLe, a, b); }
Array greater(const Array& a, const Array& b) { return binary_op("greater", P::kGt, a, b); }
Array greater_equal(const Array& a, const Array& b) {
  return binary_op("greater_equal", P::kGe, a, b);
}
Array logical_and(const Array& a, const Array& b) {
  Shape s = broadcast_shapes("logical_and", a.shape(), b.shape());
  return binary(P::kAnd, convert(broadcast_to(a, s), DType::kBool),
                convert(broadcast_to(b, s), DType::kBool));
}
Array logical_or(const Array& a, const Array& b) {
  Shape s = broadcast_shapes("logical_or", a.shape(), b.shape());
  return binary(P::kOr, convert(broadcast_to(a, s), DType::kBool),
                convert(broadcast_to(b, s), DType::kBool));
}
Array logical_xor(const Array& a, const Array& b) {
  Shape s = broadcast_shapes("logical_xor", a.shape(), b.shape());
  return binary(P::kXor, convert(broadcast_to(a, s), DType::kBool),
                convert(broadcast_to(b, s), DType::kBool));
}
Array bitwise_and(const Array& a, const Array& b) {
  return bool_or_int("bitwise_and", P::kAnd, a, b, false);
}
Array bitwise_or(const Array& a, const Array& b) {
  return bool_or_int("bitwise_or", P::kOr, a, b, false);
}
Array bitwise_xor(const Array& a, const Array& b) {
  return bool_or_int("bitwise_xor", P::kXor, a, b, false);
}
Array shift_left(const Array& a, const Array& b) {
  return binary_op("shift_left", P::kShiftLeft, a, b);
}
Array shift_right_logical(const Array& a, const Array& b) {
  return binary_op("shift_right_logical", P::kShiftRightLogical, a, b);
}

Array where(const Array& cond, const Array& x, const Array& y) {
  check_valid("where", cond);
  std::vector<Array> xs = promote_and_broadcast("where", {x, y});
  Shape s = broadcast_shapes("where", cond.shape(), xs[0].shape());
  Array c = detail::broadcast_to_shape("where", convert(cond, DType::kBool), s);
  return bind1(std::make_shared<const SelectN>(), {c, detail::broadcast_to_shape("where", xs[1], s),
                                                   detail::broadcast_to_shape("where", xs[0], s)});
}

Array clip(const Array& x, const Array& lo, const Array& hi) {
  check_valid("clip", x);
  // As jnp.clip: complex values have no order to clip by.
  detail::refuse_complex("clip", x);
  return minimum(maximum(x, lo), hi);
}

Array astype(const Array& x, DType dtype) {
  check_valid("astype", x);
  return convert(x, dtype, false);
}

Array bitcast_convert_type(const Array& x, DType dtype) {
  check_valid("bitcast_convert_type", x);
  return apply<BitcastConvertType>({x}, dtype);
}

Array operator-(const Array& x) { return neg(x); }
Array operator+(const Array& a, const Array& b) { return add(a, b); }
Array operator-(const Array& a, const Array& b) { return subtract(a, b); }
Array operator*(const Array& a, const Array& b) { return multiply(a, b); }
Array operator/(const Array& a, const Array& b) { return divide(a, b); }
Array operator%(const Array& a, const Array& b) { return remainder(a, b); }
Array operator<(const Array& a, const Array& b) { return less(a, b); }
Array operator<=(const Array& a, const Array& b) { return less_equal(a, b); }
Array operator>(const Array& a, const Array& b) { return greater(a, b); }
Array operator>=(const Array& a, const Array& b) { return greater_equal(a, b); }
Array operator==(const Array& a, const Array& b) { return equal(a, b); }
Array operator!=(const Array& a, const Array& b) { return not_equal(a, b); }
Array operator&(const Array& a, const Array& b) { return bitwise_and(a, b); }
Array operator|(const Array& a, const Array& b) { return bitwise_or(a, b); }
Array operator^(const Array& a, const Array& b) { return bitwise_xor(a, b); }
Array operator!(const Array& x) { return logical_not(x); }
Array operator~(const Array& x) { return bitwise_not(x); }

}  // namespace graft
