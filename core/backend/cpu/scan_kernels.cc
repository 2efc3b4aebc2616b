// CPU kernels of the reduce family that walk one axis in order: argmax/argmin and cumsum.
// Both view the operand as [outer, n, inner] around the axis. Contiguous rows (inner == 1)
// keep kLanes interleaved candidates (argmax) or one running sum (cumsum); inner > 1 streams
// rows through per-column state, kTile columns at a time, vectorized across columns. Long
// single rows are split across threads (argmax: per-piece winners merged in order; cumsum:
// a two-phase scan).
#include <memory>
#include <vector>

#include "core/backend/cpu/parallel.h"
#include "core/backend/cpu/reduce_util.h"
#include "core/primitives/reduce.h"

namespace graft::cpu::reduce_detail {
namespace {

// ---- argmax / argmin ----

// Whether v replaces the current best. Strict, so the first occurrence wins ties; a NaN
// beats everything but an earlier NaN (numpy / jax semantics for both argmax and argmin).
// Branch-free so the lane loops vectorize.
template <bool kMax, typename V>
inline bool better(V v, V best) {
  bool beats = kMax ? v > best : v < best;
  if constexpr (std::is_floating_point_v<V>) {
    return (best == best) & ((v != v) | beats);
  } else {
    return beats;
  }
}

// Whether (v, i) should be chosen over (best, bi) when either may come first.
template <bool kMax, typename V>
inline bool preferred(V v, int64_t i, V best, int64_t bi) {
  if (better<kMax>(v, best)) return true;
  return !better<kMax>(best, v) && i < bi;  // equal (or both NaN): the earlier one
}

// Rows [r0, r1) of a contiguous run: kLanes interleaved candidates, then merged.
template <bool kMax, typename T>
void arg_contiguous(const T* x, int64_t r0, int64_t r1, widen_t<T>* best_out, int64_t* idx_out) {
  using V = widen_t<T>;
  const int64_t n = r1 - r0, blocks = n / kLanes;
  x += r0;
  V best = static_cast<V>(x[0]);
  int64_t idx = 0, tail = 1;
  if (blocks >= 2) {
    V lane[kLanes];
    int32_t blk[kLanes] = {};  // lane k's best is at blk[k] * kLanes + k
    for (int k = 0; k < kLanes; ++k) lane[k] = static_cast<V>(x[k]);
    for (int64_t b = 1; b < blocks; ++b) {
      const T* xb = x + b * kLanes;
      for (int k = 0; k < kLanes; ++k) {
        V v = static_cast<V>(xb[k]);
        bool take = better<kMax>(v, lane[k]);
        lane[k] = take ? v : lane[k];
        blk[k] = take ? static_cast<int32_t>(b) : blk[k];
      }
    }
    best = lane[0];
    idx = int64_t{blk[0]} * kLanes;
    for (int k = 1; k < kLanes; ++k) {
      int64_t i = int64_t{blk[k]} * kLanes + k;
      if (preferred<kMax>(lane[k], i, best, idx)) {
        best = lane[k];
        idx = i;
      }
    }
    tail = blocks * kLanes;
  }
  for (int64_t r = tail; r < n; ++r) {
    V v = static_cast<V>(x[r]);
    if (better<kMax>(v, best)) {
      best = v;
      idx = r;
    }
  }
  *best_out = best;
  *idx_out = r0 + idx;
}

// Columns [c0, c1) of one [n, inner] slice, in tiles of kTile columns.
template <bool kMax, typename T, typename I>
void arg_columns(const T* x, I* out, int64_t n, int64_t inner, int64_t c0, int64_t c1) {
  using V = widen_t<T>;
  const int64_t tile = std::min(kTile, c1 - c0);
  std::unique_ptr<V[]> best(new V[tile]);
  std::unique_ptr<I[]> idx(new I[tile]);
  for (int64_t b = c0; b < c1; b += kTile) {
    const int64_t w = std::min(kTile, c1 - b);
    V* __restrict bv = best.get();
    I* __restrict bi = idx.get();
    for (int64_t j = 0; j < w; ++j) {
      bv[j] = static_cast<V>(x[b + j]);
      bi[j] = 0;
    }
    for (int64_t r = 1; r < n; ++r) {
      const T* __restrict row = x + r * inner + b;
      const I ri = static_cast<I>(r);
      for (int64_t j = 0; j < w; ++j) {
        V v = static_cast<V>(row[j]);
        bool take = better<kMax>(v, bv[j]);
        bv[j] = take ? v : bv[j];
        bi[j] = take ? ri : bi[j];
      }
    }
    std::copy(bi, bi + w, out + b);
  }
}

template <bool kMax, typename T, typename I>
void arg_kernel(Call& call) {
  const auto& p = call.params<ArgReduce>();
  const Layout l = layout_around(call.in_aval(0).shape, p.axis());
  const T* x = call.in<T>(0);
  I* out = call.out<I>();
  if (l.outer * l.inner == 0) return;  // n >= 1: the shape rule rejects an empty axis
  const Split sp = plan_split(l, /*can_split_rows=*/l.inner == 1);
  if (sp.split_rows) {
    // One or a few long rows: split each, then merge the pieces.
    const int q_n = sp.threads;
    std::unique_ptr<widen_t<T>[]> best(new widen_t<T>[q_n]);  // not vector<bool>
    std::vector<int64_t> idx(q_n);
    for (int64_t o = 0; o < l.outer; ++o) {
      const T* row = x + o * l.n;
      parallel_for(q_n, 1, [&](int64_t q0, int64_t q1) {
        for (int64_t q = q0; q < q1; ++q) {
          arg_contiguous<kMax>(row, l.n * q / q_n, l.n * (q + 1) / q_n, &best[q], &idx[q]);
        }
      });
      int b = 0;
      for (int q = 1; q < q_n; ++q) {
        if (better<kMax>(best[q], best[b])) b = q;  // pieces are in order: strict keeps first
      }
      out[o] = static_cast<I>(idx[b]);
    }
    return;
  }
  parallel_for(sp.tasks(l), sp.grain(l), [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t o = t / sp.col_parts, c = t % sp.col_parts;
      const T* slice = x + o * l.n * l.inner;
      if (l.inner == 1) {
        widen_t<T> best;
        int64_t idx;
        arg_contiguous<kMax>(slice, 0, l.n, &best, &idx);
        out[o] = static_cast<I>(idx);
      } else {
        arg_columns<kMax, T, I>(slice, out + o * l.inner, l.n, l.inner, sp.col_begin(l, c),
                                sp.col_end(l, c));
      }
    }
  });
}

template <bool kMax>
void run_arg(Call& call) {
  const bool i64 = call.out_aval().dtype == DType::kI64;
  dispatch_dtype(call.in_aval(0).dtype, [&]<typename T>() {
    if (i64) {
      arg_kernel<kMax, T, int64_t>(call);
    } else {
      arg_kernel<kMax, T, int32_t>(call);
    }
  });
}

// ---- cumsum ----

// Scans rows [r0, r1) of one [n, inner] slice (in reverse order if asked), columns [c0, c1),
// continuing from carry[c - c0]. Writes y unless kTotalsOnly (then only carry is updated).
template <bool kTotalsOnly, typename T, typename A>
void scan_rows(const T* x, T* y, int64_t inner, int64_t r0, int64_t r1, bool reverse, int64_t c0,
               int64_t c1, A* carry) {
  const int64_t rows = r1 - r0, step = reverse ? -1 : 1, first = reverse ? r1 - 1 : r0;
  if (inner == 1) {  // one running sum: keep it in a register
    A acc = carry[0];
    for (int64_t s = 0, r = first; s < rows; ++s, r += step) {
      acc = static_cast<A>(acc + static_cast<A>(x[r]));
      if constexpr (!kTotalsOnly) y[r] = static_cast<T>(acc);
    }
    carry[0] = acc;
    return;
  }
  const int64_t w = c1 - c0;
  A* __restrict acc = carry;
  for (int64_t s = 0, r = first; s < rows; ++s, r += step) {
    const T* __restrict xr = x + r * inner + c0;
    T* __restrict yr = y + r * inner + c0;
    for (int64_t j = 0; j < w; ++j) {
      acc[j] = static_cast<A>(acc[j] + static_cast<A>(xr[j]));
      if constexpr (!kTotalsOnly) yr[j] = static_cast<T>(acc[j]);
    }
  }
}

template <typename T>
void cumsum_kernel(Call& call) {
  using A = sum_acc_t<T>;
  const auto& p = call.params<Cumsum>();
  const Layout l = layout_around(call.in_aval(0).shape, p.axis());
  const T* x = call.in<T>(0);
  T* y = call.out<T>();
  const bool rev = p.reverse();
  if (l.outer * l.n * l.inner == 0) return;
  const int64_t slice = l.n * l.inner;
  const Split sp = plan_split(l, /*can_split_rows=*/true);
  if (!sp.split_rows) {
    parallel_for(sp.tasks(l), sp.grain(l), [&](int64_t t0, int64_t t1) {
      std::unique_ptr<A[]> carry;
      for (int64_t t = t0; t < t1; ++t) {
        const int64_t o = t / sp.col_parts, c = t % sp.col_parts;
        for (int64_t b = sp.col_begin(l, c); b < sp.col_end(l, c); b += kTile) {
          const int64_t e = std::min(sp.col_end(l, c), b + kTile);
          if (!carry) carry.reset(new A[kTile]);
          std::fill(carry.get(), carry.get() + (e - b), A(0));
          scan_rows<false>(x + o * slice, y + o * slice, l.inner, 0, l.n, rev, b, e, carry.get());
        }
      }
    });
    return;
  }
  // Few long scans: each thread sums its range of rows, the ranges' starting carries are
  // prefix sums of those totals, then each thread scans its range from its carry.
  const int q_n = sp.threads;
  const int64_t width = l.outer * l.inner;
  std::unique_ptr<A[]> carry(new A[q_n * width]);
  std::fill(carry.get(), carry.get() + q_n * width, A(0));
  auto rows_of = [&](int64_t q) {
    return std::pair<int64_t, int64_t>{l.n * q / q_n, l.n * (q + 1) / q_n};
  };
  auto scan_pieces = [&](auto totals_only) {
    parallel_for(q_n, 1, [&](int64_t q0, int64_t q1) {
      for (int64_t q = q0; q < q1; ++q) {
        auto [r0, r1] = rows_of(q);
        for (int64_t o = 0; o < l.outer; ++o) {
          scan_rows<decltype(totals_only)::value>(x + o * slice, y + o * slice, l.inner, r0, r1,
                                                  rev, 0, l.inner,
                                                  carry.get() + q * width + o * l.inner);
        }
      }
    });
  };
  scan_pieces(std::true_type{});
  // Exclusive prefix over the ranges, in scan order.
  std::vector<A> run(width, A(0));
  for (int s = 0; s < q_n; ++s) {
    A* c = carry.get() + (rev ? q_n - 1 - s : s) * width;
    for (int64_t j = 0; j < width; ++j) {
      A total = c[j];
      c[j] = run[j];
      run[j] = static_cast<A>(run[j] + total);
    }
  }
  scan_pieces(std::false_type{});
}

void run_cumsum(Call& call) {
  dispatch_dtype(call.in_aval(0).dtype, [&]<typename T>() {
    if constexpr (std::is_same_v<T, bool>) {
      fail(call.prim.name(), "has no CPU kernel for ", call.in_aval(0).str());
    } else {
      cumsum_kernel<T>(call);
    }
  });
}

}  // namespace

void register_scan_kernels(KernelTable& table) {
  table[int(PrimitiveId::kArgmax)] = &run_arg<true>;
  table[int(PrimitiveId::kArgmin)] = &run_arg<false>;
  table[int(PrimitiveId::kCumsum)] = &run_cumsum;
}

}  // namespace graft::cpu::reduce_detail
