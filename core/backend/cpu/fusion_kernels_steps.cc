// The steps of fused_elementwise's CPU kernel: each primitive on a tile of values. A unary or
// binary step applies its op's functor (core/primitives/elementwise_ops.h) with the same loop
// as the unfused kernels (elementwise_loops.h), so fused and unfused results agree bit for bit;
// the dispatch over ops is generated from core/primitives/list.h.
#include <cstring>
#include <type_traits>

#include "core/backend/cpu/elementwise_loops.h"
#include "core/backend/cpu/fusion_kernels.h"
#include "core/error.h"
#include "core/primitives/elementwise_ops.h"

namespace graft::cpu::fusion {
namespace {

using P = PrimitiveId;

// Calls f.template operator()<C>() with the C++ type of a slot kind.
template <typename F>
void with_kind(Kind k, F&& f) {
  switch (k) {
    case Kind::kF32:
      return f.template operator()<float>();
    case Kind::kF64:
      return f.template operator()<double>();
    case Kind::kBool:
      return f.template operator()<bool>();
  }
}

[[noreturn]] void no_step(P id) {
  fail("fused_elementwise", "no fused kernel for ", kPrimitiveNames[static_cast<int>(id)]);
}

template <P id>
void unary_step(Kind in, const void* x, void* y, int64_t n) {
  using Op = ew::functor_t<id>;
  with_kind(in, [&]<typename C>() {
    if constexpr (ew::kAccepts<id, C>) {
      using R = unary_result_t<Op, C>;
      map_unary<Op>(static_cast<const C*>(x), static_cast<R*>(y), n);
    } else {
      no_step(id);
    }
  });
}

template <P id>
void binary_step(Kind in, const void* a, const void* b, void* y, int64_t n) {
  using Op = ew::functor_t<id>;
  with_kind(in, [&]<typename C>() {
    if constexpr (ew::kAccepts<id, C>) {
      using R = binary_result_t<Op, C>;
      map_binary<Op>(static_cast<const C*>(a), static_cast<const C*>(b), static_cast<R*>(y), n);
    } else {
      no_step(id);
    }
  });
}

template <typename S, typename D>
void convert(const S* x, D* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    if constexpr (std::is_same_v<D, bool>) {
      y[i] = x[i] != S(0);
    } else {
      y[i] = static_cast<D>(x[i]);
    }
  }
}

template <typename D>
void convert_from(Kind from, const void* x, D* y, int64_t n) {
  switch (from) {
    case Kind::kF32:
      return convert(static_cast<const float*>(x), y, n);
    case Kind::kF64:
      return convert(static_cast<const double*>(x), y, n);
    case Kind::kBool:
      return convert(static_cast<const bool*>(x), y, n);
  }
}

}  // namespace

void run_step(const FusedStep& s, const Kind* kinds, void* const* ptr, void* dst, Kind kind,
              int64_t n) {
  const P id = s.prim->id();
  auto arg = [&](int i) { return ptr[s.args[i]]; };
  const Kind in_kind = kinds[s.args[0]];
  switch (id) {
#define GRAFT_UNARY_STEP(name) \
  case P::k##name:             \
    return unary_step<P::k##name>(in_kind, arg(0), dst, n);
#define GRAFT_BINARY_STEP(name) \
  case P::k##name:              \
    return binary_step<P::k##name>(in_kind, arg(0), arg(1), dst, n);
#define GRAFT_ROW(name, str, family, k, ...) GRAFT_IF_##k(GRAFT_UNARY_STEP, GRAFT_BINARY_STEP, name)
    GRAFT_PRIMITIVES(GRAFT_ROW)
#undef GRAFT_ROW
#undef GRAFT_BINARY_STEP
#undef GRAFT_UNARY_STEP
    case P::kConvertElementType:
      switch (kind) {
        case Kind::kF32:
          return convert_from(in_kind, arg(0), static_cast<float*>(dst), n);
        case Kind::kF64:
          return convert_from(in_kind, arg(0), static_cast<double*>(dst), n);
        case Kind::kBool:
          return convert_from(in_kind, arg(0), static_cast<bool*>(dst), n);
      }
      return;
    case P::kSelectN: {
      const bool* p = static_cast<const bool*>(arg(0));
      int64_t w = kind == Kind::kF64 ? 8 : (kind == Kind::kF32 ? 4 : 1);
      auto* f = static_cast<const char*>(arg(1));
      auto* t = static_cast<const char*>(arg(2));
      auto* o = static_cast<char*>(dst);
      if (w == 4) {
        auto* fo = reinterpret_cast<float*>(o);
        auto* ff = reinterpret_cast<const float*>(f);
        auto* tt = reinterpret_cast<const float*>(t);
        for (int64_t i = 0; i < n; ++i) fo[i] = p[i] ? tt[i] : ff[i];
      } else {
        for (int64_t i = 0; i < n; ++i) std::memcpy(o + i * w, (p[i] ? t : f) + i * w, w);
      }
      return;
    }
    default:
      no_step(id);
  }
}

}  // namespace graft::cpu::fusion
