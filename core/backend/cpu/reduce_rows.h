// The reduce kernels' combining operations and their reduction of contiguous rows, shared by
// reduce_kernels.cc and fused_reduce's kernel (fused_reduce_kernel.cc), which computes a row's
// values piece by piece instead of reading them: both go through reduce_rows_pass with the same
// pieces, so they give the same bits. Internal to the CPU backend.
#pragma once

#include <algorithm>
#include <limits>
#include <memory>
#include <type_traits>

#include "core/backend/cpu/fold_row.h"
#include "core/backend/cpu/parallel.h"
#include "core/backend/cpu/reduce_util.h"

namespace graft::cpu::reduce_detail {

inline constexpr int64_t kPairwiseBlock = 2048;  // contiguous run summed with lanes, then pairwise

// ---- the operations: identity and combine, over the accumulation type A ----

template <typename A>
constexpr bool kIsFloat = std::is_floating_point_v<A>;
// Integer arithmetic in at least unsigned int: u8 / u16 would promote to (signed) int, where
// a u16 product overflows.
template <typename A>
using Arith = std::conditional_t<std::is_integral_v<A>, std::common_type_t<A, unsigned>, A>;

struct SumOp {
  template <typename A>
  static A identity() {
    return A(0);
  }
  template <typename A>
  static A apply(A a, A b) {
    return static_cast<A>(Arith<A>(a) + Arith<A>(b));
  }
};
struct ProdOp {
  template <typename A>
  static A identity() {
    return A(1);
  }
  template <typename A>
  static A apply(A a, A b) {
    return static_cast<A>(Arith<A>(a) * Arith<A>(b));
  }
};
// max/min propagate NaN like XLA: once a NaN is seen it stays.
struct MaxOp {
  template <typename A>
  static A identity() {
    if constexpr (kIsFloat<A>) {
      return -std::numeric_limits<A>::infinity();
    } else {
      return std::numeric_limits<A>::lowest();
    }
  }
  template <typename A>
  static A apply(A a, A b) {
    return (a >= b || a != a) ? a : b;
  }
};
struct MinOp {
  template <typename A>
  static A identity() {
    if constexpr (kIsFloat<A>) {
      return std::numeric_limits<A>::infinity();
    } else {
      return std::numeric_limits<A>::max();
    }
  }
  template <typename A>
  static A apply(A a, A b) {
    return (a <= b || a != a) ? a : b;
  }
};
struct AndOp {
  template <typename A>
  static A identity() {
    if constexpr (std::is_same_v<A, bool>) {
      return true;
    } else {
      return static_cast<A>(~A(0));
    }
  }
  template <typename A>
  static A apply(A a, A b) {
    if constexpr (std::is_same_v<A, bool>) {
      return a && b;
    } else {
      return static_cast<A>(a & b);
    }
  }
};
struct OrOp {
  template <typename A>
  static A identity() {
    return A(0);
  }
  template <typename A>
  static A apply(A a, A b) {
    if constexpr (std::is_same_v<A, bool>) {
      return a || b;
    } else {
      return static_cast<A>(a | b);
    }
  }
};

template <typename Op, typename T>
using acc_t = std::conditional_t<std::is_same_v<Op, SumOp> || std::is_same_v<Op, ProdOp>,
                                 sum_acc_t<T>, widen_t<T>>;

// acc[j] = op(acc[j], row[j]) for j < w (fold_row.h: vectorized).
template <typename Op, typename A, typename In>
inline void fold_op_row(A* acc, const In* row, int64_t w) {
  cpu::fold_row(acc, row, w, [](A a, In x) { return Op::apply(a, static_cast<A>(x)); });
}

// Op over elements [start, start + n) of a run: pieces of at most kPairwiseBlock elements
// (split in halves at multiples of kLanes from `start`) each reduced with kLanes independent
// lanes, the pieces combined pairwise. leaf(s, len) gives a pointer to the values of elements
// [s, s + len); it is called once per piece, and the values are used before the next call.
template <typename Op, typename A, typename Leaf>
A reduce_run(int64_t start, int64_t n, const Leaf& leaf) {
  if (n > kPairwiseBlock) {
    const int64_t half = n / 2 / kLanes * kLanes;
    const A first = reduce_run<Op, A>(start, half, leaf);
    return Op::apply(first, reduce_run<Op, A>(start + half, n - half, leaf));
  }
  const auto* x = leaf(start, n);
  A lanes[kLanes];
  for (A& l : lanes) l = Op::template identity<A>();
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (int k = 0; k < kLanes; ++k) lanes[k] = Op::apply(lanes[k], static_cast<A>(x[i + k]));
  }
  for (int k = 0; i < n; ++i, ++k) lanes[k] = Op::apply(lanes[k], static_cast<A>(x[i]));
  for (int w = kLanes / 2; w > 0; w /= 2) {
    for (int k = 0; k < w; ++k) lanes[k] = Op::apply(lanes[k], lanes[k + w]);
  }
  return lanes[0];
}

// Where the threads of reduce_rows_pass over l (inner == 1) start their pieces, relative to a
// row's start: 0, and with split rows each thread's first row element n * q / threads.
inline std::vector<int64_t> row_piece_starts(const Layout& l) {
  const Split sp = plan_split(l, /*can_split_rows=*/true);
  std::vector<int64_t> starts{0};
  if (sp.split_rows) {
    for (int64_t q = 1; q < sp.threads; ++q) starts.push_back(l.n * q / sp.threads);
  }
  return starts;
}

// out[o] = Op over row o of an [outer, n] array (l.inner == 1), whose elements leaf gives as
// reduce_run says (element o * n + r of the array). Rows are spread over threads; when there
// are fewer rows than threads and the rows are long, each thread reduces a range of every row
// (row_piece_starts) and the partial results are merged in thread order.
template <typename Op, typename A, typename Leaf>
void reduce_rows_pass(const Layout& l, A* out, const Leaf& leaf) {
  const Split sp = plan_split(l, /*can_split_rows=*/true);
  if (!sp.split_rows) {
    parallel_for(sp.tasks(l), sp.grain(l), [&](int64_t t0, int64_t t1) {
      for (int64_t o = t0; o < t1; ++o) out[o] = reduce_run<Op, A>(o * l.n, l.n, leaf);
    });
    return;
  }
  const int64_t p = sp.threads;
  std::unique_ptr<A[]> partial(new A[p * l.outer]);
  parallel_for(p, 1, [&](int64_t p0, int64_t p1) {
    for (int64_t q = p0; q < p1; ++q) {
      const int64_t r0 = l.n * q / p, r1 = l.n * (q + 1) / p;
      for (int64_t o = 0; o < l.outer; ++o) {
        partial[q * l.outer + o] = reduce_run<Op, A>(o * l.n + r0, r1 - r0, leaf);
      }
    }
  });
  for (int64_t q = 1; q < p; ++q)
    fold_op_row<Op>(partial.get(), partial.get() + q * l.outer, l.outer);
  std::copy(partial.get(), partial.get() + l.outer, out);
}

}  // namespace graft::cpu::reduce_detail
