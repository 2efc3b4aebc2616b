// Shared pieces of the reduce-family CPU kernels (reduce_kernels.cc, scan_kernels.cc).
// Internal to the CPU backend.
#pragma once

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "core/backend/cpu/kernel.h"
#include "core/half.h"

namespace graft::cpu::reduce_detail {

// Elements of work per parallel chunk (at least), and the width of the column blocks the
// kernels keep on the stack when reducing over a non-trailing axis.
inline constexpr int64_t kGrain = 16384;
inline constexpr int64_t kColChunk = 256;

// The type values are computed in: f16/bf16 widen to f32, everything else is itself.
template <typename T>
struct Widen {
  using type = T;
};
template <>
struct Widen<f16> {
  using type = float;
};
template <>
struct Widen<bf16> {
  using type = float;
};
template <typename T>
using widen_t = typename Widen<T>::type;

// Sums accumulate in widen_t, except that signed integers accumulate unsigned so overflow
// wraps (as XLA does) instead of being undefined behaviour.
template <typename T, bool = std::is_integral_v<T>&& std::is_signed_v<T>>
struct SumAcc {
  using type = widen_t<T>;
};
template <typename T>
struct SumAcc<T, true> {
  using type = std::make_unsigned_t<T>;
};
template <typename T>
using sum_acc_t = typename SumAcc<T>::type;

// Views an array as [outer, n, inner] around `axis` (n = the axis' size).
struct Layout {
  int64_t outer = 1, n = 1, inner = 1;
};
inline Layout layout_around(const Shape& s, int axis) {
  Layout l;
  for (int i = 0; i < static_cast<int>(s.size()); ++i) {
    if (i < axis) l.outer *= s[i];
    if (i == axis) l.n = s[i];
    if (i > axis) l.inner *= s[i];
  }
  return l;
}

inline int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// How many threads a job of `work` elements deserves.
int threads_for(int64_t work);

void register_scan_kernels(KernelTable& table);

}  // namespace graft::cpu::reduce_detail
