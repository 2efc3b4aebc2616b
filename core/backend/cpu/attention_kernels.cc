// CPU kernels of flash_attention and flash_attention_grad (core/primitives/attention.h).
//
// One task computes a whole (batch, kv head, query tile) in the forward pass and a whole
// (batch, kv head) in the backward pass, with every tile in L1 / L2: the G query heads of a kv
// head share its key / value tiles (rows r = (t - t0) * G + g of a query tile), scores and
// probabilities never leave the task, and the causal mask is a per-row count of visible keys
// (tiles past the diagonal are skipped). The tile products go through one register-blocked
// micro-kernel on 64-byte vectors; the task functions are compiled twice (AVX-512 and the
// build's AVX2) and picked at load time, so the default build runs AVX-512 where the CPU has
// it. Tiles are zero-padded to whole vectors (head_dim to Dp, block_k to Np).
//
// Forward: online softmax (running max m, denominator l, unnormalized output), as in
// FlashAttention-2. Backward: p = exp(s - lse) recomputed per tile; dv += p^T do,
// ds = p (do v^T - delta) with delta = rowsum(do o) - dlse, dq += ds k, dk += ds^T q.
//
// Dtypes: f64 and f32 are computed as they are; f16 and bf16 operands are widened to f32 as
// their tiles are packed and the results rounded as they are stored (lse is f32 for them),
// except that bf16 on a CPU with AVX512-BF16 runs attention_bf16_tiles.cc's bf16 products.
#pragma GCC diagnostic ignored "-Wpsabi"  // 64-byte vectors passed by value: no ABI crossing
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#include "core/backend/cpu/attention_bf16_tiles.h"
#include "core/backend/cpu/attention_tiles.h"
#include "core/backend/cpu/kernel.h"
#include "core/backend/cpu/parallel.h"
#include "core/backend/cpu/strided_copy.h"
#include "core/error.h"
#include "core/dtype/half.h"
#include "core/primitives/attention.h"

#if defined(__x86_64__) && !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
#define GRAFT_CLONES __attribute__((target_clones("avx512f", "default")))
#else
#define GRAFT_CLONES
#endif

namespace graft::cpu {
namespace {

using namespace flash;

// Packs keys [s0, s0 + ns) of kv head j: rows [ns, Np) x Dp (row-major, zero-padded) into
// `rows` (may be null) and transposed Dp x Np into `cols`.
template <typename In, typename T>
GRAFT_INLINE void pack_keys(const Geometry& g, const In* k, int64_t b, int64_t j, int64_t s0,
                            int64_t ns, T* rows, T* cols) {
  const bool padded = ns < g.Np || g.D < g.Dp;  // zeros around the copied keys
  if (rows != nullptr) {
    if (padded) std::fill(rows, rows + g.Np * g.Dp, T(0));
    for (int64_t c = 0; c < ns; ++c) copy_as(rows + c * g.Dp, k + g.k_at(b, s0 + c, j), g.D);
  }
  if (cols == nullptr) return;
  if (padded) std::fill(cols, cols + g.Dp * g.Np, T(0));
  if constexpr (std::is_same_v<In, T>) {  // the shape kernels' tiled transpose
    strided_copy(sizeof(T), Shape{ns, g.D}, k + g.k_at(b, s0, j), {g.KV * g.D, 1}, cols, {1, g.Np});
  } else {
    for (int64_t c = 0; c < ns; ++c) {
      const In* src = k + g.k_at(b, s0 + c, j);
      for (int64_t d = 0; d < g.D; ++d) cols[d * g.Np + c] = widen<T>(src[d]);
    }
  }
}

template <typename T>
struct ForwardScratch {
  std::vector<T> q, s, kt, v, o, m, l;
  explicit ForwardScratch(const Geometry& g)
      : q(g.bq * g.G * g.Dp),
        s(g.bq * g.G * g.Np),
        kt(g.Dp * g.Np),
        v(g.Np * g.Dp),
        o(g.bq * g.G * g.Dp),
        m(g.bq * g.G),
        l(g.bq * g.G) {}
};

// One (b, kv head j, query tile starting at t0) of the forward pass.
template <typename In, typename T>
GRAFT_INLINE void forward_tile(const Geometry& g, const In* q, const In* k, const In* v, In* o,
                               T* lse, int64_t b, int64_t j, int64_t t0, ForwardScratch<T>& w) {
  const int64_t t1 = std::min(g.T, t0 + g.bq), M = (t1 - t0) * g.G;
  const T scale = static_cast<T>(g.scale);
  for (int64_t r = 0; r < M; ++r) {
    T* dst = w.q.data() + r * g.Dp;
    widen_scaled(dst, q + g.q_at(b, t0 + r / g.G, j, r % g.G), g.D, scale);
    std::fill(dst + g.D, dst + g.Dp, T(0));
  }
  std::fill(w.o.begin(), w.o.begin() + M * g.Dp, T(0));
  std::fill(w.m.begin(), w.m.begin() + M, -std::numeric_limits<T>::infinity());
  std::fill(w.l.begin(), w.l.begin() + M, T(0));
  const int64_t last = g.pos(t1 - 1);
  for (int64_t s0 = 0; s0 <= last && s0 < g.S; s0 += g.bk) {
    const int64_t ns = std::min(g.S, s0 + g.bk) - s0;
    pack_keys(g, k, b, j, s0, ns, static_cast<T*>(nullptr), w.kt.data());
    gemm<T>(M, g.Np, g.D, w.q.data(), g.Dp, 1, w.kt.data(), g.Np, w.s.data(), g.Np, false);
    for (int64_t r = 0; r < M; ++r) {
      T* row = w.s.data() + r * g.Np;
      const int64_t visible = std::min(ns, g.pos(t0 + r / g.G) - s0 + 1);
      if (visible <= 0) {  // this row sees no key of the tile (it saw key 0 before)
        std::fill(row, row + g.Np, T(0));
        continue;
      }
      const T m_new = std::max(w.m[r], row_max(row, g.Np, visible));
      const T alpha = std::exp(w.m[r] - m_new);  // 0 on the first tile (m = -inf)
      const T sum = exp_row(row, g.Np, visible, m_new);
      w.l[r] = w.l[r] * alpha + sum;
      if (alpha != T(1)) scale_row(w.o.data() + r * g.Dp, g.Dp, alpha);
      w.m[r] = m_new;
    }
    pack_keys(g, v, b, j, s0, ns, w.v.data(), static_cast<T*>(nullptr));
    gemm<T>(M, g.Dp, ns, w.s.data(), g.Np, 1, w.v.data(), g.Dp, w.o.data(), g.Dp, true);
  }
  for (int64_t r = 0; r < M; ++r) {
    const int64_t t = t0 + r / g.G, gi = r % g.G;
    narrow_scaled(o + g.q_at(b, t, j, gi), w.o.data() + r * g.Dp, g.D, T(1) / w.l[r]);
    lse[g.lse_at(b, t, j, gi)] = w.m[r] + std::log(w.l[r]);
  }
}

// Tasks [i0, i1) of the forward pass: task = (b * KV + j) * n_qtiles + qtile.
template <typename In, typename T = widen_t<In>>
GRAFT_INLINE void forward_tasks(const Geometry& g, const In* q, const In* k, const In* v, In* o,
                                T* lse, int64_t i0, int64_t i1) {
  ForwardScratch<T> w(g);
  const int64_t nq = (g.T + g.bq - 1) / g.bq;
  for (int64_t i = i0; i < i1; ++i) {
    const int64_t bj = i / nq, qt = i % nq;
    forward_tile(g, q, k, v, o, lse, bj / g.KV, bj % g.KV, qt * g.bq, w);
  }
}

GRAFT_CLONES void forward_f32(const Geometry& g, const float* q, const float* k, const float* v,
                              float* o, float* lse, int64_t i0, int64_t i1) {
  forward_tasks(g, q, k, v, o, lse, i0, i1);
}
GRAFT_CLONES void forward_f64(const Geometry& g, const double* q, const double* k, const double* v,
                              double* o, double* lse, int64_t i0, int64_t i1) {
  forward_tasks(g, q, k, v, o, lse, i0, i1);
}
GRAFT_CLONES void forward_bf16(const Geometry& g, const bf16* q, const bf16* k, const bf16* v,
                               bf16* o, float* lse, int64_t i0, int64_t i1) {
  forward_tasks(g, q, k, v, o, lse, i0, i1);
}
GRAFT_CLONES void forward_f16(const Geometry& g, const f16* q, const f16* k, const f16* v, f16* o,
                              float* lse, int64_t i0, int64_t i1) {
  forward_tasks(g, q, k, v, o, lse, i0, i1);
}

template <typename T>
struct BackwardScratch {
  std::vector<T> q, d_o, dq, lse, delta;  // all T * G rows of the (b, j) pair
  std::vector<T> k, kt, vt, s, dp, dk, dv;
  explicit BackwardScratch(const Geometry& g)
      : q(g.T * g.G * g.Dp),
        d_o(g.T * g.G * g.Dp),
        dq(g.T * g.G * g.Dp),
        lse(g.T * g.G),
        delta(g.T * g.G),
        k(g.Np * g.Dp),
        kt(g.Dp * g.Np),
        vt(g.Dp * g.Np),
        s(g.bq * g.G * g.Np),
        dp(g.bq * g.G * g.Np),
        dk(g.Np * g.Dp),
        dv(g.Np * g.Dp) {}
};

// The whole backward pass of (b, kv head j).
template <typename In, typename T>
GRAFT_INLINE void backward_pair(const Geometry& g, const GradArgs& a, int64_t b, int64_t j,
                                BackwardScratch<T>& w) {
  const In *q = static_cast<const In*>(a.q), *k = static_cast<const In*>(a.k),
           *v = static_cast<const In*>(a.v), *o = static_cast<const In*>(a.o),
           *d_o = static_cast<const In*>(a.d_o);
  const T *lse = static_cast<const T*>(a.lse), *d_lse = static_cast<const T*>(a.d_lse);
  const T scale = static_cast<T>(g.scale);
  const int64_t R = g.T * g.G;
  for (int64_t r = 0; r < R; ++r) {
    const int64_t t = r / g.G, gi = r % g.G, at = g.q_at(b, t, j, gi);
    T *qd = w.q.data() + r * g.Dp, *dod = w.d_o.data() + r * g.Dp;
    widen_scaled(qd, q + at, g.D, scale);
    copy_as(dod, d_o + at, g.D);
    std::fill(qd + g.D, qd + g.Dp, T(0));
    std::fill(dod + g.D, dod + g.Dp, T(0));
    w.lse[r] = lse[g.lse_at(b, t, j, gi)];
    w.delta[r] = dot_row(dod, o + at, g.D) - d_lse[g.lse_at(b, t, j, gi)];
  }
  std::fill(w.dq.begin(), w.dq.end(), T(0));
  for (int64_t s0 = 0; s0 < g.S; s0 += g.bk) {
    const int64_t ns = std::min(g.S, s0 + g.bk) - s0;
    pack_keys(g, k, b, j, s0, ns, w.k.data(), w.kt.data());
    pack_keys(g, v, b, j, s0, ns, static_cast<T*>(nullptr), w.vt.data());
    std::fill(w.dk.begin(), w.dk.end(), T(0));
    std::fill(w.dv.begin(), w.dv.end(), T(0));
    const int64_t first_t = std::max<int64_t>(0, s0 - (g.S - g.T));  // first query seeing s0
    for (int64_t t0 = first_t / g.bq * g.bq; t0 < g.T; t0 += g.bq) {
      const int64_t t1 = std::min(g.T, t0 + g.bq), M = (t1 - t0) * g.G, r0 = t0 * g.G;
      const T* qt = w.q.data() + r0 * g.Dp;
      const T* dot = w.d_o.data() + r0 * g.Dp;
      gemm<T>(M, g.Np, g.D, qt, g.Dp, 1, w.kt.data(), g.Np, w.s.data(), g.Np, false);
      gemm<T>(M, g.Np, g.D, dot, g.Dp, 1, w.vt.data(), g.Np, w.dp.data(), g.Np, false);
      for (int64_t r = 0; r < M; ++r) {
        T *p = w.s.data() + r * g.Np, *ds = w.dp.data() + r * g.Np;
        const int64_t visible = std::min(ns, g.pos(t0 + r / g.G) - s0 + 1);
        if (visible <= 0) {
          std::fill(p, p + g.Np, T(0));
          std::fill(ds, ds + g.Np, T(0));
          continue;
        }
        exp_row(p, g.Np, visible, w.lse[r0 + r]);
        const T delta = w.delta[r0 + r];
        for (int64_t c = 0; c < g.Np; c += kLanes<T>)
          store(ds + c, load(p + c) * (load(ds + c) - delta));
      }
      // dv += p^T do, dk += ds^T q (over the tile's M rows: the G heads' sum too), p and ds
      // read transposed in place.
      gemm<T>(ns, g.Dp, M, w.s.data(), 1, g.Np, dot, g.Dp, w.dv.data(), g.Dp, true);
      gemm<T>(ns, g.Dp, M, w.dp.data(), 1, g.Np, qt, g.Dp, w.dk.data(), g.Dp, true);
      // dq += ds k (scaled once at the end).
      gemm<T>(M, g.Dp, ns, w.dp.data(), g.Np, 1, w.k.data(), g.Dp, w.dq.data() + r0 * g.Dp, g.Dp,
              true);
    }
    In *dk = static_cast<In*>(a.dk), *dv = static_cast<In*>(a.dv);
    for (int64_t c = 0; c < ns; ++c) {
      copy_as(dk + g.k_at(b, s0 + c, j), w.dk.data() + c * g.Dp, g.D);
      copy_as(dv + g.k_at(b, s0 + c, j), w.dv.data() + c * g.Dp, g.D);
    }
  }
  In* dq = static_cast<In*>(a.dq);
  for (int64_t r = 0; r < R; ++r) {
    narrow_scaled(dq + g.q_at(b, r / g.G, j, r % g.G), w.dq.data() + r * g.Dp, g.D, scale);
  }
}

template <typename In, typename T = widen_t<In>>
GRAFT_INLINE void backward_tasks(const Geometry& g, const GradArgs& a, int64_t i0, int64_t i1) {
  BackwardScratch<T> w(g);
  for (int64_t i = i0; i < i1; ++i) backward_pair<In, T>(g, a, i / g.KV, i % g.KV, w);
}

GRAFT_CLONES void backward_f32(const Geometry& g, const GradArgs& a, int64_t i0, int64_t i1) {
  backward_tasks<float>(g, a, i0, i1);
}
GRAFT_CLONES void backward_f64(const Geometry& g, const GradArgs& a, int64_t i0, int64_t i1) {
  backward_tasks<double>(g, a, i0, i1);
}
GRAFT_CLONES void backward_bf16(const Geometry& g, const GradArgs& a, int64_t i0, int64_t i1) {
  backward_tasks<bf16>(g, a, i0, i1);
}
GRAFT_CLONES void backward_f16(const Geometry& g, const GradArgs& a, int64_t i0, int64_t i1) {
  backward_tasks<f16>(g, a, i0, i1);
}

void flash_attention_kernel(Call& call) {
  const FlashParams& p = call.params<FlashAttention>().flash();
  const DType dt = call.in_aval(0).dtype;
  const Geometry g = dt == DType::kF64 ? geometry<double>(call, p) : geometry<float>(call, p);
  void* o = call.out_raw(0);
  void* lse = call.out_raw(1);
  if (g.B * g.T * g.H == 0) return;
  const int64_t tasks = g.B * g.KV * ((g.T + g.bq - 1) / g.bq);
  auto run = [&](auto fn, auto* elem) {
    using In = std::remove_const_t<std::remove_pointer_t<decltype(elem)>>;
    using T = widen_t<In>;
    parallel_for(tasks, 1, [&](int64_t i0, int64_t i1) {
      fn(g, call.in<In>(0), call.in<In>(1), call.in<In>(2), static_cast<In*>(o),
         static_cast<T*>(lse), i0, i1);
    });
  };
  switch (dt) {
    case DType::kF64:
      return run(&forward_f64, static_cast<double*>(nullptr));
    case DType::kF32:
      return run(&forward_f32, static_cast<float*>(nullptr));
    case DType::kBF16:
      if (bf16_tiles_available(g)) return run(&forward_bf16_tiles, static_cast<bf16*>(nullptr));
      return run(&forward_bf16, static_cast<bf16*>(nullptr));
    case DType::kF16:
      return run(&forward_f16, static_cast<f16*>(nullptr));
    default:
      fail("flash_attention", "no CPU kernel for ", dtype_name(dt));
  }
}

void flash_attention_grad_kernel(Call& call) {
  const FlashParams& p = call.params<FlashAttentionGrad>().flash();
  const DType dt = call.in_aval(0).dtype;
  const Geometry g = dt == DType::kF64 ? geometry<double>(call, p) : geometry<float>(call, p);
  GradArgs a{call.in_raw(0), call.in_raw(1), call.in_raw(2),  call.in_raw(3),  call.in_raw(4),
             call.in_raw(5), call.in_raw(6), call.out_raw(0), call.out_raw(1), call.out_raw(2)};
  const size_t kv_bytes = numel(call.out_aval(1).shape) * dtype_size(dt);
  if (g.B * g.T * g.H == 0) {  // no queries: no key gets a gradient
    std::memset(a.dk, 0, kv_bytes);
    std::memset(a.dv, 0, kv_bytes);
    return;
  }
  auto* fn = dt == DType::kF64   ? &backward_f64
             : dt == DType::kF32 ? &backward_f32
             : dt == DType::kBF16
                 ? (bf16_tiles_available(g) ? &backward_bf16_tiles : &backward_bf16)
             : dt == DType::kF16 ? &backward_f16
                                 : nullptr;
  if (fn == nullptr) fail("flash_attention_grad", "no CPU kernel for ", dtype_name(dt));
  parallel_for(g.B * g.KV, 1, [&](int64_t i0, int64_t i1) { fn(g, a, i0, i1); });
}

}  // namespace

void register_attention_kernels(KernelTable& table) {
  table[static_cast<int>(PrimitiveId::kFlashAttention)] = &flash_attention_kernel;
  table[static_cast<int>(PrimitiveId::kFlashAttentionGrad)] = &flash_attention_grad_kernel;
}

}  // namespace graft::cpu
