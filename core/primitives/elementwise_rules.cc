// Transform rules of the elementwise primitives (JAX's rules, jax/_src/lax/lax.py).
//
// Each elementwise primitive has a diagonal Jacobian, so one function per op gives
// g * d(out)/d(operand i) for any g (the d() beside its functor, core/primitives/
// elementwise_{unary,binary}_ops.h): the jvp applies it to the tangents and sums, the vjp
// applies it to the cotangent. Binary operands have equal shapes, so nothing is summed back.
// Batching applies the same primitive once all operands share one batch axis.
#include <memory>

#include "core/interpreters/spmd.h"
#include "core/lax/lax.h"
#include "core/lax/util.h"
#include "core/primitives/elementwise.h"
#include "core/primitives/elementwise_ops.h"

namespace graft {

using Id = PrimitiveId;

namespace {

using ew::zeros_of;

// g * d(out)/dx for a unary primitive: its functor's d() (elementwise_unary_ops.h); empty where
// the derivative is zero everywhere it exists (rows without kDiff: sign, floor, ceil, round,
// is_finite, not).
template <typename Op>
Array unary_d(const Array& g, const Array& x, const Array& out) {
  if constexpr (ew::HasUnaryD<Op>) {
    return Op::d(g, x, out);
  } else {
    return Array();
  }
}
template <typename Op>
Array binary_d(int i, const Array& g, const Array& x, const Array& y, const Array& out) {
  if constexpr (ew::HasBinaryD<Op>) {
    return Op::d(i, g, x, y, out);
  } else {
    return Array();  // comparisons, logic, shifts: bool or integer valued, zero derivative
  }
}

Array unary_scale(Id id, const Array& g, const Array& x, const Array& out) {
  switch (id) {
#define GRAFT_UNARY(name) \
  case Id::k##name:        \
    return unary_d<ew::name>(g, x, out);
#define GRAFT_ROW(name, str, family, kind, ...) GRAFT_IF_##kind(GRAFT_UNARY, GRAFT_NONE, name)
#define GRAFT_NONE(name)
    GRAFT_PRIMITIVES(GRAFT_ROW)
#undef GRAFT_ROW
#undef GRAFT_UNARY
    default:
      return Array();
  }
}

// g * d(out)/d(operand i) for a binary primitive of float operands x, y; empty when zero.
Array binary_scale(Id id, int i, const Array& g, const Array& x, const Array& y, const Array& out) {
  switch (id) {
#define GRAFT_BINARY(name) \
  case Id::k##name:         \
    return binary_d<ew::name>(i, g, x, y, out);
#define GRAFT_ROW(name, str, family, kind, ...) GRAFT_IF_##kind(GRAFT_NONE, GRAFT_BINARY, name)
    GRAFT_PRIMITIVES(GRAFT_ROW)
#undef GRAFT_ROW
#undef GRAFT_BINARY
#undef GRAFT_NONE
    default:
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
  if ((!t[1].valid() && !t[2].valid()) || !is_inexact(out[0].dtype())) return {Array()};
  auto case_t = [&](int i) {
    return t[i].valid() ? t[i] : zeros_of(out[0].shape(), out[0].dtype());
  };
  return {bind1(std::make_shared<const SelectN>(), {x[0], case_t(1), case_t(2)})};
}
std::vector<Array> SelectN::vjp(const std::vector<Array>& x, const std::vector<Array>&,
                                const std::vector<Array>& ct) const {
  if (!ct[0].valid() || !is_inexact(x[1].dtype())) return {Array(), Array(), Array()};
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
  // Between inexact (floating or complex) dtypes the tangent converts too; to or from ints / bool it is zero.
  if (!t[0].valid() || !is_inexact(x[0].dtype()) || !is_inexact(dtype_)) return {Array()};
  return {t[0].dtype() == dtype_ ? t[0] : astype(t[0], dtype_)};
}
std::vector<Array> ConvertElementType::vjp(const std::vector<Array>& x, const std::vector<Array>&,
                                           const std::vector<Array>& ct) const {
  if (!ct[0].valid() || !is_inexact(x[0].dtype()) || !is_inexact(dtype_)) return {Array()};
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


// ---- sharding: operands of one shape computed block by block (core/interpreters/spmd.h) ----
// neg and mul are linear in each operand, add and sub in both together: partial sums pass
// through them (spmd.h).
std::optional<spmd::Plan> Unary::sharding_rule(const spmd::RuleArgs& a) const {
  spmd::Plan p = spmd::elementwise_plan(a);
  p.linear = id() == PrimitiveId::kNeg;
  return p;
}
std::optional<spmd::Plan> Binary::sharding_rule(const spmd::RuleArgs& a) const {
  spmd::Plan p = spmd::elementwise_plan(a);
  p.linear = id() == PrimitiveId::kMul;
  p.additive = id() == PrimitiveId::kAdd || id() == PrimitiveId::kSub;
  return p;
}
std::optional<spmd::Plan> SelectN::sharding_rule(const spmd::RuleArgs& a) const {
  return spmd::elementwise_plan(a);
}
std::optional<spmd::Plan> ConvertElementType::sharding_rule(const spmd::RuleArgs& a) const {
  return spmd::elementwise_plan(a);
}
std::optional<spmd::Plan> StopGradient::sharding_rule(const spmd::RuleArgs& a) const {
  return spmd::elementwise_plan(a);
}

}  // namespace graft
