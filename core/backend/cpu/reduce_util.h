// Shared pieces of the reduce-family CPU kernels (reduce_kernels.cc, scan_kernels.cc).
// Internal to the CPU backend.
#pragma once

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "core/backend/cpu/compute_type.h"  // widen_t: the type values are computed in
#include "core/backend/cpu/kernel.h"
#include "core/dtype/half.h"

namespace graft::cpu::reduce_detail {

// Elements of work per parallel chunk (at least); the number of independent accumulators
// (lanes) a contiguous loop keeps, written as fixed-size inner loops the compiler vectorizes
// at -O2; and the widest run of columns a kernel accumulates at once (so its buffers stay in
// cache while rows stream through).
inline constexpr int64_t kGrain = 16384;
inline constexpr int kLanes = 16;
inline constexpr int64_t kTile = 4096;

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

// How to spread an [outer, n, inner] job over threads: tasks are (outer slice, column part)
// pairs, each walking all n rows of its columns; or, when there are too few of those and the
// n axis is long, each thread takes a range of rows and the partial results are merged.
struct Split {
  int threads = 1;
  int64_t col_parts = 1;
  bool split_rows = false;
  int64_t tasks(const Layout& l) const { return l.outer * col_parts; }
  // Columns [begin, end) of part c.
  int64_t col_begin(const Layout& l, int64_t c) const { return l.inner * c / col_parts; }
  int64_t col_end(const Layout& l, int64_t c) const { return l.inner * (c + 1) / col_parts; }
  // Tasks per parallel_for chunk, so chunks hold about kGrain elements.
  int64_t grain(const Layout& l) const {
    return std::max<int64_t>(1, kGrain * col_parts / std::max<int64_t>(1, l.n * l.inner));
  }
};

inline Split plan_split(const Layout& l, bool can_split_rows) {
  Split s;
  s.threads = threads_for(l.outer * l.n * l.inner);
  if (s.threads <= 1 || l.outer >= s.threads) return s;
  const int64_t want = ceil_div(s.threads, l.outer);  // parts per slice to feed the threads
  const int64_t min_cols = 64;                        // keep row segments worth streaming
  if (l.inner >= want * min_cols || !can_split_rows || l.n < 2 * s.threads) {
    s.col_parts = std::max<int64_t>(1, std::min(want, l.inner / min_cols));
  } else {
    s.split_rows = true;
  }
  return s;
}

void register_scan_kernels(KernelTable& table);

}  // namespace graft::cpu::reduce_detail
