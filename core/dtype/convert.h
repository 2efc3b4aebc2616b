// Scalar conversion with XLA's convert_element_type semantics, shared by ops that build
// constants (core/lax/creation.cc) and the kernels.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "core/dtype/float8.h"
#include "core/dtype/half.h"

namespace graft {

template <typename T>
inline constexpr bool kIsFloat8 = std::is_same_v<T, f8_e4m3fn> || std::is_same_v<T, f8_e5m2>;

// Converts like XLA's convert_element_type: float -> int saturates (NaN -> 0), float -> bool
// is x != 0, int -> narrower int wraps, anything -> f16/bf16 rounds to nearest even, anything
// -> fp8 rounds to nearest even once (core/dtype/float8.h; from f64 too), fp8 -> anything goes
// through f32 (exact).
template <typename S, typename D>
D convert_value(S v) {
  constexpr bool s_half = std::is_same_v<S, f16> || std::is_same_v<S, bf16>;
  constexpr bool d_half = std::is_same_v<D, f16> || std::is_same_v<D, bf16>;
  if constexpr (s_half || kIsFloat8<S>) {
    return convert_value<float, D>(static_cast<float>(v));
  } else if constexpr (kIsFloat8<D>) {
    return D(static_cast<double>(v));
  } else if constexpr (d_half) {
    if constexpr (std::is_same_v<S, double>) {
      // Round once from double: go through float only when that is exact enough.
      return D(static_cast<float>(v));
    } else {
      return D(static_cast<float>(v));
    }
  } else if constexpr (std::is_same_v<D, bool>) {
    return v != S(0);
  } else if constexpr (std::is_floating_point_v<S> && std::is_integral_v<D>) {
    if (std::isnan(v)) return D(0);
    if (v <= static_cast<S>(std::numeric_limits<D>::min())) return std::numeric_limits<D>::min();
    if (v >= static_cast<S>(std::numeric_limits<D>::max())) return std::numeric_limits<D>::max();
    return static_cast<D>(v);
  } else {
    return static_cast<D>(v);
  }
}

}  // namespace graft
