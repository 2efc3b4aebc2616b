// Transform rules of the elementwise primitives (JAX's rules, jax/_src/lax/lax.py).
//
// Each elementwise primitive has a diagonal Jacobian, so one function per class gives
// g * d(out)/d(operand i) for any g: the jvp applies it to the tangents and sums, the vjp
// applies it to the cotangent. Binary operands have equal shapes, so nothing is summed back.
// Batching applies the same primitive once all operands share one batch axis.
#include <cmath>
#include <memory>

#include "core/ops.h"
#include "core/ops_util.h"
#include "core/primitives/elementwise.h"

namespace graft {

using P = PrimitiveId;

namespace {

const double kPi = 3.14159265358979323846;

// A lazy zero array (a broadcast scalar: nothing materialized while tracing).
Array zeros_of(const Shape& shape, DType dtype) {
  return broadcast_in_dim(scalar(0.0, dtype), shape, {});
}

// The constant v in x's dtype, strongly typed, so a rule's constant never changes the
// dtype or weak flag of what it multiplies.
Array k(double v, const Array& x) { return scalar(v, x.dtype()); }

// g * d(out)/dx for a unary primitive; empty where the derivative is zero everywhere it
// exists (sign, floor, ceil, round) or the output is not floating (is_finite, not).
Array unary_scale(P id, const Array& g, const Array& x, const Array& out) {
  switch (id) {
    case P::kNeg:
      return neg(g);
    case P::kAbs:
      return where(x >= k(0, x), g, neg(g));  // abs'(+-0) = 1, as JAX's select(x >= 0, g, -g)
    case P::kExp:
      return g * out;
    case P::kExpm1:
      return g * (out + k(1, out));
    case P::kLog:
      return g / x;
    case P::kLog1p:
      return g / (x + k(1, x));
    case P::kSqrt:
      return g * (k(0.5, out) / out);
    case P::kRsqrt:
      return g * (k(-0.5, x) * (out / x));
    case P::kSquare:
      return g * (k(2, x) * x);
    case P::kSin:
      return g * cos(x);
    case P::kCos:
      return neg(g * sin(x));
    case P::kTanh:
      return (g + g * out) * (k(1, out) - out);  // g * (1 - out^2), as JAX writes it
    case P::kLogistic:
      return g * (out * (k(1, out) - out));
    case P::kErf:
      return g * (k(2 / std::sqrt(kPi), x) * exp(neg(square(x))));
    case P::kErfInv:
      return k(std::sqrt(kPi) / 2, x) * (g * exp(square(out)));
    default:
      return Array();  // sign, floor, ceil, round, is_finite, not: zero derivative
  }
}

// JAX's _balanced_eq: where both operands equal the max (min), each gets half the gradient.
Array balanced(const Array& g, const Array& self, const Array& other, const Array& out) {
  return where(self == out, where(other == out, g * k(0.5, g), g), zeros_of(g.shape(), g.dtype()));
}

// g * d(out)/d(operand i) for a binary primitive of float operands x, y; empty when zero.
Array binary_scale(P id, int i, const Array& g, const Array& x, const Array& y, const Array& out) {
  switch (id) {
    case P::kAdd:
      return g;
    case P::kSub:
      return i == 0 ? g : neg(g);
    case P::kMul:
      return g * (i == 0 ? y : x);
    case P::kDiv:
      return i == 0 ? g / y : neg(g) * x / square(y);
    case P::kRem: {
      if (i == 0) return g;
      Array q = x / y;  // -round_toward_zero(x / y)
      return neg(g) * (sign(q) * floor(abs(q)));
    }
    case P::kPow: {
      if (i == 0) return g * (y * power(x, y - k(1, y)));
      // log(x) * x^y, with x == 0 giving 0 (JAX's _replace_zero) rather than -inf * 0.
      Array safe = where(x == k(0, x), k(1, x), x);
      return g * (log(safe) * out);
    }
    case P::kMax:
    case P::kMin:
      return i == 0 ? balanced(g, x, y, out) : balanced(g, y, x, out);
    default:
      // Comparisons, logical and bitwise ops, shifts: bool or integer results, piecewise
      // constant: zero derivative.
      return Array();
  }
}

// The operands with one common batch axis (the first batched operand's): other batched
// operands move to it, unbatched ones are broadcast along it, so all shapes are equal.
int align(const std::vector<Array>& args, const std::vector<int>& dims, std::vector<Array>* out) {
  int d = -1;
  Shape shape;
  for (size_t i = 0; i < args.size() && d < 0; ++i) {
    if (dims[i] >= 0) {
      d = dims[i];
      shape = args[i].shape();
    }
  }
  out->clear();
  for (size_t i = 0; i < args.size(); ++i) {
    if (dims[i] == d) {
      out->push_back(args[i]);
    } else if (dims[i] >= 0) {
      out->push_back(moveaxis(args[i], dims[i], d));
    } else {
      std::vector<int> bd;
      for (int k = 0; k < static_cast<int>(shape.size()); ++k) {
        if (k != d) bd.push_back(k);
      }
      out->push_back(broadcast_in_dim(args[i], shape, bd));
    }
  }
  return d;
}

}  // namespace

// ---- unary ----

std::vector<Array> Unary::jvp(const std::vector<Array>& x, const std::vector<Array>& t,
                              const std::vector<Array>& out) const {
  if (!t[0].valid() || !is_floating(out[0].dtype())) return {Array()};
  return {unary_scale(id(), t[0], x[0], out[0])};
}
std::vector<Array> Unary::vjp(const std::vector<Array>& x, const std::vector<Array>& out,
                              const std::vector<Array>& ct) const {
  if (!ct[0].valid() || !is_floating(x[0].dtype()) || !is_floating(out[0].dtype())) {
    return {Array()};
  }
  return {unary_scale(id(), ct[0], x[0], out[0])};
}
Batched Unary::vmap(const std::vector<Array>& args, const std::vector<int>& dims) const {
  return {{unary(id(), args[0])}, {dims[0]}};
}

// ---- binary ----

std::vector<Array> Binary::jvp(const std::vector<Array>& x, const std::vector<Array>& t,
                               const std::vector<Array>& out) const {
  if (!is_floating(out[0].dtype())) return {Array()};  // comparisons, integer ops
  Array r;
  for (int i = 0; i < 2; ++i) {
    if (t[i].valid()) r = detail::add_any(r, binary_scale(id(), i, t[i], x[0], x[1], out[0]));
  }
  return {r};
}
std::vector<Array> Binary::vjp(const std::vector<Array>& x, const std::vector<Array>& out,
                               const std::vector<Array>& ct) const {
  if (!ct[0].valid() || !is_floating(out[0].dtype())) return {Array(), Array()};
  return {binary_scale(id(), 0, ct[0], x[0], x[1], out[0]),
          binary_scale(id(), 1, ct[0], x[0], x[1], out[0])};
}
Batched Binary::vmap(const std::vector<Array>& args, const std::vector<int>& dims) const {
  std::vector<Array> a;
  int d = align(args, dims, &a);
  return {{binary(id(), a[0], a[1])}, {d}};
}

// ---- select_n(pred, on_false, on_true) ----

std::vector<Array> SelectN::jvp(const std::vector<Array>& x, const std::vector<Array>& t,
                                const std::vector<Array>& out) const {
  // The predicate is bool: no tangent. The cases' tangents are selected like the cases.
  if ((!t[1].valid() && !t[2].valid()) || !is_floating(out[0].dtype())) return {Array()};
  auto case_t = [&](int i) {
    return t[i].valid() ? t[i] : zeros_of(out[0].shape(), out[0].dtype());
  };
  return {bind1(std::make_shared<const SelectN>(), {x[0], case_t(1), case_t(2)})};
}
std::vector<Array> SelectN::vjp(const std::vector<Array>& x, const std::vector<Array>&,
                                const std::vector<Array>& ct) const {
  if (!ct[0].valid() || !is_floating(x[1].dtype())) return {Array(), Array(), Array()};
  Array z = zeros_of(ct[0].shape(), ct[0].dtype());
  auto select = [&](const Array& f, const Array& t) {
    return bind1(std::make_shared<const SelectN>(), {x[0], f, t});
  };
  // The predicate gets none; each case gets the cotangent where it was selected.
  return {Array(), select(ct[0], z), select(z, ct[0])};
}
Batched SelectN::vmap(const std::vector<Array>& args, const std::vector<int>& dims) const {
  std::vector<Array> a;
  int d = align(args, dims, &a);
  return {{bind1(std::make_shared<const SelectN>(), a)}, {d}};
}

// ---- convert_element_type ----

std::vector<Array> ConvertElementType::jvp(const std::vector<Array>& x, const std::vector<Array>& t,
                                           const std::vector<Array>&) const {
  // Between floating dtypes the tangent converts too; to or from ints / bool it is zero.
  if (!t[0].valid() || !is_floating(x[0].dtype()) || !is_floating(dtype_)) return {Array()};
  return {t[0].dtype() == dtype_ ? t[0] : astype(t[0], dtype_)};
}
std::vector<Array> ConvertElementType::vjp(const std::vector<Array>& x, const std::vector<Array>&,
                                           const std::vector<Array>& ct) const {
  if (!ct[0].valid() || !is_floating(x[0].dtype()) || !is_floating(dtype_)) return {Array()};
  DType d = x[0].dtype();
  return {ct[0].dtype() == d ? ct[0] : astype(ct[0], d)};
}
Batched ConvertElementType::vmap(const std::vector<Array>& args,
                                 const std::vector<int>& dims) const {
  return {{apply<ConvertElementType>({args[0]}, dtype_, weak_)}, {dims[0]}};
}

// ---- bitcast_convert_type ----

std::vector<Array> BitcastConvertType::jvp(const std::vector<Array>&, const std::vector<Array>&,
                                           const std::vector<Array>&) const {
  return {Array()};  // reinterpreting bits is not differentiable: zero tangent
}
std::vector<Array> BitcastConvertType::vjp(const std::vector<Array>&, const std::vector<Array>&,
                                           const std::vector<Array>&) const {
  return {Array()};  // no cotangent flows through a bit reinterpretation
}
Batched BitcastConvertType::vmap(const std::vector<Array>& args,
                                 const std::vector<int>& dims) const {
  return {{apply<BitcastConvertType>({args[0]}, dtype_)}, {dims[0]}};
}

}  // namespace graft
