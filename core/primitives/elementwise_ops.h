// The elementwise functors by primitive id, generated from the Unary / Binary rows of
// core/primitives/list.h: functor_t<PrimitiveId::kExp> is ew::Exp. Kernels, the fused tile
// interpreter, the compiled loops and the derivative tables dispatch through this, so none of
// them lists the ops again.
#pragma once

#include <type_traits>

#include "core/dtype/dtype.h"
#include "core/dtype/half.h"
#include "core/primitives/elementwise_binary_ops.h"
#include "core/primitives/elementwise_unary_ops.h"
#include "core/primitives/list.h"

namespace graft::ew {

template <PrimitiveId id>
struct FunctorOf;

template <PrimitiveId id>
using functor_t = typename FunctorOf<id>::type;

template <typename Op>
concept HasUnaryD = requires(const Array& a) {
  Op::d(a, a, a);
};
template <typename Op>
concept HasBinaryD = requires(const Array& a) {
  Op::d(0, a, a, a, a);
};

// The row's facts agree with its functor: kDiff exactly when it defines d(), kBoolOut exactly
// when its float result is bool.
#define GRAFT_EW_UNARY(name)                                                         \
  template <>                                                                        \
  struct FunctorOf<PrimitiveId::k##name> {                                           \
    using type = name;                                                               \
  };                                                                                 \
  static_assert(HasUnaryD<name> == primitive_facts(PrimitiveId::k##name).has(kDiff), \
                #name ": the kDiff flag in list.h must say whether the functor defines d()");
#define GRAFT_EW_BINARY(name)                                                         \
  template <>                                                                         \
  struct FunctorOf<PrimitiveId::k##name> {                                            \
    using type = name;                                                                \
  };                                                                                  \
  static_assert(HasBinaryD<name> == primitive_facts(PrimitiveId::k##name).has(kDiff), \
                #name ": the kDiff flag in list.h must say whether the functor defines d()");
#define GRAFT_EW_ROW(name, str, family, kind, ...) \
  GRAFT_IF_##kind(GRAFT_EW_UNARY, GRAFT_EW_BINARY, name)
GRAFT_PRIMITIVES(GRAFT_EW_ROW)
#undef GRAFT_EW_ROW
#undef GRAFT_EW_BINARY
#undef GRAFT_EW_UNARY

// Whether storage type T belongs to dtype class c (f16 / bf16 are floating).
template <typename T>
constexpr bool accepts_type(DTypeClass c) {
  constexpr bool fl =
      std::is_floating_point_v<T> || std::is_same_v<T, f16> || std::is_same_v<T, bf16>;
  constexpr bool b = std::is_same_v<T, bool>;
  switch (c) {
    case DTypeClass::kAny:
      return true;
    case DTypeClass::kNumeric:
      return !b;
    case DTypeClass::kFloating:
      return fl;
    case DTypeClass::kIntegral:
      return !fl && !b;
    case DTypeClass::kBoolOrIntegral:
      return !fl;
  }
  return false;
}
template <PrimitiveId id, typename T>
inline constexpr bool kAccepts = accepts_type<T>(primitive_facts(id).dtypes);

// The type arithmetic happens in: f32 for f16 / bf16.
template <typename T>
using Compute = std::conditional_t<std::is_same_v<T, f16> || std::is_same_v<T, bf16>, float, T>;

}  // namespace graft::ew
