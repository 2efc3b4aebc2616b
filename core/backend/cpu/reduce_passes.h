// The reduce kernels' combining operations and their passes over an [outer, n, inner] view
// (reduce n): contiguous rows (inner == 1) and columns (inner > 1). Shared by reduce_kernels.cc
// and fused_reduce's kernel (fused_reduce_kernel.cc), which computes the values piece by piece
// instead of reading them: both take the same pieces in the same order, so they give the same
// bits. Internal to the CPU backend.
#pragma once

#include <algorithm>
#include <limits>
#include <memory>
#include <type_traits>
#include <vector>

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

// With the reduced axis split between p threads: part(q, dst) writes thread q's n_out partial
// results to dst; they are merged in thread order into out.
template <typename Op, typename A, typename Part>
void merge_thread_parts(int64_t p, int64_t n_out, A* out, const Part& part) {
  std::unique_ptr<A[]> partial(new A[p * n_out]);
  parallel_for(p, 1, [&](int64_t p0, int64_t p1) {
    for (int64_t q = p0; q < p1; ++q) part(q, partial.get() + q * n_out);
  });
  for (int64_t q = 1; q < p; ++q) fold_op_row<Op>(partial.get(), partial.get() + q * n_out, n_out);
  std::copy(partial.get(), partial.get() + n_out, out);
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
  merge_thread_parts<Op>(p, l.outer, out, [&](int64_t q, A* part) {
    const int64_t r0 = l.n * q / p, r1 = l.n * (q + 1) / p;
    for (int64_t o = 0; o < l.outer; ++o) part[o] = reduce_run<Op, A>(o * l.n + r0, r1 - r0, leaf);
  });
}

// ---- columns: out[o, i] = op over r of x[o, r, i] (inner > 1) ----

inline constexpr int64_t kRowBlock = 512;   // rows summed into a column block before merging
inline constexpr int64_t kRowChunk = 4096;  // elements a column pass asks its leaf for at once

// A leaf for the column passes, leaf(s, rows, w): rows `rows` of `w` elements whose first
// starts at element s of the array and the next ones every inner elements (w <= inner,
// rows * w <= max(w, kRowChunk)). It returns where row j's values are: {ptr, stride} with row j
// at ptr + j * stride; they are used before the next call.
template <typename T>
struct RowsAt {
  const T* ptr;
  int64_t stride;
};

// Columns [c0, c1) of outer slice o, rows [r0, r1): out[c] = op(rows). Rows stream through
// tiles of at most kTile columns; long sums go through row blocks of kRowBlock, so the error
// grows with kRowBlock + n / kRowBlock rather than n.
template <typename Op, typename A, typename Leaf>
void reduce_columns(const Layout& l, int64_t o, A* out, int64_t r0, int64_t r1, int64_t c0,
                    int64_t c1, const Leaf& leaf) {
  const int64_t tile = std::min(kTile, c1 - c0);
  const bool blocked = r1 - r0 > kRowBlock;
  std::unique_ptr<A[]> total(new A[tile]), block(new A[blocked ? tile : 0]);
  for (int64_t b = c0; b < c1; b += kTile) {
    const int64_t w = std::min(kTile, c1 - b);
    const int64_t chunk = std::max<int64_t>(1, kRowChunk / w);
    std::fill(total.get(), total.get() + w, Op::template identity<A>());
    for (int64_t rb = r0; rb < r1; rb += kRowBlock) {
      const int64_t re = std::min(r1, rb + kRowBlock);
      A* acc = blocked ? block.get() : total.get();
      if (blocked) std::fill(acc, acc + w, Op::template identity<A>());
      for (int64_t r = rb; r < re; r += chunk) {
        const int64_t k = std::min(chunk, re - r);
        const auto rows = leaf((o * l.n + r) * l.inner + b, k, w);
        for (int64_t j = 0; j < k; ++j) fold_op_row<Op>(acc, rows.ptr + j * rows.stride, w);
      }
      if (blocked) fold_op_row<Op>(total.get(), acc, w);
    }
    std::copy(total.get(), total.get() + w, out + b);
  }
}

// Where the column parts of reduce_columns_pass over l start (relative to a row's start).
inline std::vector<int64_t> column_part_starts(const Layout& l) {
  const Split sp = plan_split(l, /*can_split_rows=*/true);
  std::vector<int64_t> starts;
  for (int64_t c = 0; c < sp.col_parts; ++c) starts.push_back(sp.col_begin(l, c));
  return starts;
}

// out[o * inner + i] = Op over r of element (o * n + r) * inner + i, which leaf gives (see
// RowsAt). Work is split over (outer slice, column part) tasks, or, with few of those and a
// long reduced axis, over ranges of rows whose partial results are merged in thread order.
template <typename Op, typename A, typename Leaf>
void reduce_columns_pass(const Layout& l, A* out, const Leaf& leaf) {
  const Split sp = plan_split(l, /*can_split_rows=*/true);
  if (!sp.split_rows) {
    parallel_for(sp.tasks(l), sp.grain(l), [&](int64_t t0, int64_t t1) {
      for (int64_t t = t0; t < t1; ++t) {
        const int64_t o = t / sp.col_parts, c = t % sp.col_parts;
        reduce_columns<Op, A>(l, o, out + o * l.inner, 0, l.n, sp.col_begin(l, c), sp.col_end(l, c),
                              leaf);
      }
    });
    return;
  }
  const int64_t p = sp.threads;
  merge_thread_parts<Op>(p, l.outer * l.inner, out, [&](int64_t q, A* part) {
    for (int64_t o = 0; o < l.outer; ++o) {
      reduce_columns<Op, A>(l, o, part + o * l.inner, l.n * q / p, l.n * (q + 1) / p, 0, l.inner,
                            leaf);
    }
  });
}

}  // namespace graft::cpu::reduce_detail
