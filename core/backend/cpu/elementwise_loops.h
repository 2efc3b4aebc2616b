// Applying an elementwise functor (core/primitives/elementwise_ops.h) to n contiguous values:
// the one loop that the eager kernels (per parallel chunk), the fused tile interpreter (per
// tile) and compiled loops (per block, for steps they do not emit inline) all run. Whole
// packets from the start, scalar() on the last n % packet elements: chunks, tiles and blocks
// start at multiples of 64 elements from the array's start, so every path computes the same
// elements with the same code, and gets the same bits. y may be x (or a, or b).
#pragma once

#include <cstdint>
#include <type_traits>

#include "core/primitives/elementwise_ops.h"

// Eigen's packet types carry vector attributes that template arguments drop (harmlessly:
// Eigen's own headers silence the same warning).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wignored-attributes"

namespace graft::cpu {

template <typename Op, typename C, typename R>
void map_unary(const C* x, R* y, int64_t n) {
  if constexpr (std::is_same_v<C, R> && requires(const C* a, R* b) { Op::run(a, b, int64_t{}); }) {
    Op::run(x, y, n);
    return;
  } else if constexpr (std::is_same_v<C, R> && std::is_floating_point_v<C>) {
    if constexpr (Op::template vec<C>) {
      using P = typename ew::ei::packet_traits<C>::type;
      constexpr int64_t kLanes = ew::ei::packet_traits<C>::size;
      int64_t i = 0;
      for (; i + kLanes <= n; i += kLanes) {
        ew::ei::pstoreu(y + i, Op::packet(ew::ei::ploadu<P>(x + i)));
      }
      for (; i < n; ++i) y[i] = Op::scalar(x[i]);
      return;
    }
  }
  for (int64_t i = 0; i < n; ++i) y[i] = Op::scalar(x[i]);
}

template <typename Op, typename C, typename R>
void map_binary(const C* a, const C* b, R* y, int64_t n) {
  if constexpr (std::is_same_v<C, R> && std::is_floating_point_v<C>) {
    if constexpr (Op::template vec<C>) {
      using P = typename ew::ei::packet_traits<C>::type;
      constexpr int64_t kLanes = ew::ei::packet_traits<C>::size;
      int64_t i = 0;
      for (; i + kLanes <= n; i += kLanes) {
        ew::ei::pstoreu(y + i, Op::packet(ew::ei::ploadu<P>(a + i), ew::ei::ploadu<P>(b + i)));
      }
      for (; i < n; ++i) y[i] = Op::scalar(a[i], b[i]);
      return;
    }
  }
  for (int64_t i = 0; i < n; ++i) y[i] = Op::scalar(a[i], b[i]);
}

// What applying Op to values of type C gives (bool for comparisons and is_finite).
template <typename Op, typename C>
using unary_result_t = decltype(Op::scalar(C{}));
template <typename Op, typename C>
using binary_result_t = decltype(Op::scalar(C{}, C{}));

}  // namespace graft::cpu

#pragma GCC diagnostic pop
