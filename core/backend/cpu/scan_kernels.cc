// CPU kernels of the reduce family that walk one axis in order: argmax/argmin and cumsum.
// Both view the operand as [outer, n, inner] around the axis; inner > 1 is handled a block of
// columns at a time so the inner loop runs across contiguous columns.
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
template <bool kMax, typename V>
inline bool better(V v, V best) {
  if constexpr (std::is_floating_point_v<V>) {
    if (best != best) return false;
    if (v != v) return true;
  }
  if constexpr (kMax) {
    return v > best;
  } else {
    return v < best;
  }
}

template <bool kMax, typename T, typename I>
void arg_contiguous(const T* x, int64_t r0, int64_t r1, widen_t<T>* best_out, I* idx_out) {
  using V = widen_t<T>;
  V best = static_cast<V>(x[r0]);
  int64_t idx = r0;
  for (int64_t r = r0 + 1; r < r1; ++r) {
    V v = static_cast<V>(x[r]);
    if (better<kMax>(v, best)) {
      best = v;
      idx = r;
    }
  }
  *best_out = best;
  *idx_out = static_cast<I>(idx);
}

template <bool kMax, typename T, typename I>
void arg_columns(const T* x, I* out, int64_t n, int64_t inner, int64_t c0, int64_t c1) {
  using V = widen_t<T>;
  V best[kColChunk];
  I idx[kColChunk];
  const int64_t w = c1 - c0;
  for (int64_t j = 0; j < w; ++j) {
    best[j] = static_cast<V>(x[c0 + j]);
    idx[j] = 0;
  }
  for (int64_t r = 1; r < n; ++r) {
    const T* row = x + r * inner + c0;
    for (int64_t j = 0; j < w; ++j) {
      V v = static_cast<V>(row[j]);
      bool take = better<kMax>(v, best[j]);
      best[j] = take ? v : best[j];
      idx[j] = take ? static_cast<I>(r) : idx[j];
    }
  }
  for (int64_t j = 0; j < w; ++j) out[c0 + j] = idx[j];
}

template <bool kMax, typename T, typename I>
void arg_kernel(Call& call) {
  const auto& p = call.params<ArgReduce>();
  const Layout l = layout_around(call.in_aval(0).shape, p.axis());
  const T* x = call.in<T>(0);
  I* out = call.out<I>();
  const int64_t n_out = l.outer * l.inner;
  if (n_out == 0) return;  // n >= 1: the shape rule rejects an empty axis
  const int threads = threads_for(n_out * l.n);
  const int64_t col_chunks = l.inner == 1 ? 1 : ceil_div(l.inner, kColChunk);
  const int64_t tasks = l.outer * col_chunks;
  if (l.inner == 1 && tasks < threads && l.n >= 2 * threads) {
    // One or a few long rows: split each, then merge the pieces in order.
    std::unique_ptr<widen_t<T>[]> best(new widen_t<T>[threads]);  // not vector<bool>
    std::unique_ptr<I[]> idx(new I[threads]);
    for (int64_t o = 0; o < l.outer; ++o) {
      const T* row = x + o * l.n;
      parallel_for(threads, 1, [&](int64_t p0, int64_t p1) {
        for (int64_t q = p0; q < p1; ++q) {
          arg_contiguous<kMax>(row, l.n * q / threads, l.n * (q + 1) / threads, &best[q], &idx[q]);
        }
      });
      int b = 0;
      for (int q = 1; q < threads; ++q) {
        if (better<kMax>(best[q], best[b])) b = q;
      }
      out[o] = idx[b];
    }
    return;
  }
  const int64_t per_task = l.n * std::min(l.inner, kColChunk);
  parallel_for(tasks, std::max<int64_t>(1, kGrain / per_task), [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t o = t / col_chunks, c = t % col_chunks;
      const T* slice = x + o * l.n * l.inner;
      if (l.inner == 1) {
        widen_t<T> best;
        arg_contiguous<kMax>(slice, 0, l.n, &best, out + o);
      } else {
        arg_columns<kMax, T, I>(slice, out + o * l.inner, l.n, l.inner, c * kColChunk,
                                std::min(l.inner, (c + 1) * kColChunk));
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
  const int64_t w = c1 - c0;
  for (int64_t s = 0; s < r1 - r0; ++s) {
    const int64_t r = reverse ? r1 - 1 - s : r0 + s;
    const T* xr = x + r * inner + c0;
    T* yr = y + r * inner + c0;
    for (int64_t j = 0; j < w; ++j) {
      carry[j] = static_cast<A>(carry[j] + static_cast<A>(xr[j]));
      if constexpr (!kTotalsOnly) yr[j] = static_cast<T>(carry[j]);
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
  const int threads = threads_for(l.outer * l.n * l.inner);
  const int64_t col_chunks = ceil_div(l.inner, kColChunk);
  const int64_t tasks = l.outer * col_chunks;
  const int64_t slice = l.n * l.inner;
  if (tasks >= threads || l.n < 2 * threads) {
    const int64_t per_task = l.n * std::min(l.inner, kColChunk);
    parallel_for(tasks, std::max<int64_t>(1, kGrain / per_task), [&](int64_t t0, int64_t t1) {
      A carry[kColChunk];
      for (int64_t t = t0; t < t1; ++t) {
        const int64_t o = t / col_chunks, c0 = t % col_chunks * kColChunk;
        const int64_t c1 = std::min(l.inner, c0 + kColChunk);
        std::fill(carry, carry + (c1 - c0), A(0));
        scan_rows<false>(x + o * slice, y + o * slice, l.inner, 0, l.n, rev, c0, c1, carry);
      }
    });
    return;
  }
  // Few long scans: each thread sums its range of rows, the ranges' starting carries are
  // prefix sums of those totals, then each thread scans its range from its carry.
  const int64_t width = l.outer * l.inner;
  std::vector<A> carry(static_cast<size_t>(threads) * width, A(0));
  auto range = [&](int64_t q) {
    return std::pair<int64_t, int64_t>{l.n * q / threads, l.n * (q + 1) / threads};
  };
  parallel_for(threads, 1, [&](int64_t q0, int64_t q1) {
    for (int64_t q = q0; q < q1; ++q) {
      auto [r0, r1] = range(q);
      for (int64_t o = 0; o < l.outer; ++o) {
        scan_rows<true>(x + o * slice, y + o * slice, l.inner, r0, r1, rev, 0, l.inner,
                        carry.data() + q * width + o * l.inner);
      }
    }
  });
  // Exclusive prefix over the ranges, in scan order.
  std::vector<A> run(width, A(0));
  for (int s = 0; s < threads; ++s) {
    const int q = rev ? threads - 1 - s : s;
    A* c = carry.data() + q * width;
    for (int64_t j = 0; j < width; ++j) {
      A total = c[j];
      c[j] = run[j];
      run[j] = static_cast<A>(run[j] + total);
    }
  }
  parallel_for(threads, 1, [&](int64_t q0, int64_t q1) {
    for (int64_t q = q0; q < q1; ++q) {
      auto [r0, r1] = range(q);
      for (int64_t o = 0; o < l.outer; ++o) {
        scan_rows<false>(x + o * slice, y + o * slice, l.inner, r0, r1, rev, 0, l.inner,
                         carry.data() + q * width + o * l.inner);
      }
    }
  });
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
