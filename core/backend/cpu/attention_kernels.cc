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
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "core/backend/cpu/kernel.h"
#include "core/backend/cpu/parallel.h"
#include "core/error.h"
#include "core/primitives/attention.h"

#pragma GCC diagnostic ignored "-Wpsabi"  // 64-byte vectors in the AVX2 clone: no ABI crossing

#define GRAFT_INLINE inline __attribute__((always_inline))
#if defined(__x86_64__) && !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
#define GRAFT_CLONES __attribute__((target_clones("avx512f", "default")))
#else
#define GRAFT_CLONES
#endif

namespace graft::cpu {
namespace {

typedef float VF __attribute__((vector_size(64)));
typedef double VD __attribute__((vector_size(64)));
typedef int32_t VI __attribute__((vector_size(64)));

template <typename T>
struct VecOf;
template <>
struct VecOf<float> {
  using type = VF;
};
template <>
struct VecOf<double> {
  using type = VD;
};
template <typename T>
using Vec = typename VecOf<T>::type;
template <typename T>
constexpr int64_t kLanes = 64 / sizeof(T);

template <typename T>
GRAFT_INLINE Vec<T> load(const T* p) {
  Vec<T> v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
template <typename T>
GRAFT_INLINE void store(T* p, Vec<T> v) {
  std::memcpy(p, &v, sizeof v);
}

// exp on a vector: 2^n * exp(r), n = round(x / ln 2), |r| <= ln 2 / 2, Cephes' degree-6
// polynomial (about 1 ulp); below the smallest normal result (and -inf) it gives 0.
GRAFT_INLINE VF vexp(const VF& x) {
  const VF lo = VF{} - 87.3365447505531f;
  VF xc = x < lo ? lo : x;
  xc = xc > 88.3762626647949f ? VF{} + 88.3762626647949f : xc;
  const float magic = 12582912.0f;  // 1.5 * 2^23: adding it rounds to an integer
  VF t = xc * 1.44269504088896341f + magic;
  VF n = t - magic;
  VF r = xc - n * 0.693359375f;
  r = r - n * -2.12194440e-4f;
  VF y = VF{} + 1.9875691500e-4f;
  y = y * r + 1.3981999507e-3f;
  y = y * r + 8.3334519073e-3f;
  y = y * r + 4.1665795894e-2f;
  y = y * r + 1.6666665459e-1f;
  y = y * r + 5.0000001201e-1f;
  y = y * r * r + r + 1.0f;
  VI bits;
  std::memcpy(&bits, &t, sizeof bits);
  VI pow2 = (bits - 0x4B400000 + 127) << 23;
  VF scale;
  std::memcpy(&scale, &pow2, sizeof scale);
  VF out = y * scale;
  return x < lo ? VF{} : out;
}
GRAFT_INLINE VD vexp(const VD& x) {  // f64: exact, lane by lane (tests and f64 models only)
  VD y;
  for (int i = 0; i < 8; ++i) y[i] = std::exp(x[i]);
  return y;
}

// C[r, :NV*L] (+)= A[r, :K] @ B[:K, :NV*L] for R rows; A, B, C row-major with the given strides.
template <typename T, int R, int NV>
GRAFT_INLINE void micro(int64_t K, const T* A, int64_t lda, const T* B, int64_t ldb, T* C,
                        int64_t ldc, bool acc) {
  constexpr int64_t L = kLanes<T>;
  // Fully unrolled, so that the R x NV accumulators live in registers.
  Vec<T> c[R][NV];
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 8
    for (int v = 0; v < NV; ++v) c[r][v] = acc ? load(C + r * ldc + v * L) : Vec<T>{};
  for (int64_t k = 0; k < K; ++k) {
    Vec<T> b[NV];
#pragma GCC unroll 8
    for (int v = 0; v < NV; ++v) b[v] = load(B + k * ldb + v * L);
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      const T a = A[r * lda + k];
#pragma GCC unroll 8
      for (int v = 0; v < NV; ++v) c[r][v] += b[v] * a;
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 8
    for (int v = 0; v < NV; ++v) store(C + r * ldc + v * L, c[r][v]);
}

template <typename T, int NV>
GRAFT_INLINE void row_blocks(int64_t M, int64_t K, const T* A, int64_t lda, const T* B,
                             int64_t ldb, T* C, int64_t ldc, bool acc) {
  int64_t m = 0;
  for (; m + 4 <= M; m += 4) micro<T, 4, NV>(K, A + m * lda, lda, B, ldb, C + m * ldc, ldc, acc);
  switch (M - m) {
    case 3: micro<T, 3, NV>(K, A + m * lda, lda, B, ldb, C + m * ldc, ldc, acc); break;
    case 2: micro<T, 2, NV>(K, A + m * lda, lda, B, ldb, C + m * ldc, ldc, acc); break;
    case 1: micro<T, 1, NV>(K, A + m * lda, lda, B, ldb, C + m * ldc, ldc, acc); break;
    default: break;
  }
}

// C [M, N] (+)= A [M, K] @ B [K, N], N a multiple of the vector width.
template <typename T>
GRAFT_INLINE void gemm(int64_t M, int64_t N, int64_t K, const T* A, int64_t lda, const T* B,
                       int64_t ldb, T* C, int64_t ldc, bool acc) {
  constexpr int64_t L = kLanes<T>;
  for (int64_t n = 0; n < N; n += 4 * L) {
    switch (std::min<int64_t>(4, (N - n) / L)) {
      case 4: row_blocks<T, 4>(M, K, A, lda, B + n, ldb, C + n, ldc, acc); break;
      case 3: row_blocks<T, 3>(M, K, A, lda, B + n, ldb, C + n, ldc, acc); break;
      case 2: row_blocks<T, 2>(M, K, A, lda, B + n, ldb, C + n, ldc, acc); break;
      default: row_blocks<T, 1>(M, K, A, lda, B + n, ldb, C + n, ldc, acc); break;
    }
  }
}

// dst [cols, rows] = src [rows, cols]^T (dst row stride ldd).
template <typename T>
GRAFT_INLINE void transpose_tile(int64_t rows, int64_t cols, const T* src, int64_t lds, T* dst,
                                 int64_t ldd) {
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) dst[c * ldd + r] = src[r * lds + c];
}

template <typename T>
GRAFT_INLINE T row_max(const T* x, int64_t n) {
  constexpr int64_t L = kLanes<T>;
  Vec<T> m = load(x);
  for (int64_t c = L; c < n; c += L) {
    Vec<T> v = load(x + c);
    m = v > m ? v : m;
  }
  T out = m[0];
  for (int i = 1; i < L; ++i) out = std::max(out, T(m[i]));
  return out;
}

// x[c] = exp(x[c] - shift) for c < visible, 0 after (up to n); returns the sum.
template <typename T>
GRAFT_INLINE T exp_row(T* x, int64_t n, int64_t visible, T shift) {
  constexpr int64_t L = kLanes<T>;
  Vec<T> s{};
  for (int64_t c = 0; c < n; c += L) {
    Vec<T> v = vexp(load(x + c) - shift);
    for (int64_t i = std::max<int64_t>(visible - c, 0); i < L; ++i) v[i] = 0;
    store(x + c, v);
    s += v;
  }
  T out = 0;
  for (int i = 0; i < L; ++i) out += s[i];
  return out;
}

struct Geometry {
  int64_t B, T, H, D, S, KV, G, bq, bk;
  int64_t Dp, Np;  // D and bk rounded up to whole vectors
  double scale;

  // Query t's position: it sees keys 0 .. pos(t).
  int64_t pos(int64_t t) const { return S - T + t; }
  // Offsets of (b, t, kv head j, group member g) in q-like and (b, s, j) in k-like arrays.
  int64_t q_at(int64_t b, int64_t t, int64_t j, int64_t g) const {
    return ((b * T + t) * H + j * G + g) * D;
  }
  int64_t k_at(int64_t b, int64_t s, int64_t j) const { return ((b * S + s) * KV + j) * D; }
  int64_t lse_at(int64_t b, int64_t t, int64_t j, int64_t g) const {
    return (b * T + t) * H + j * G + g;
  }
};

template <typename T>
Geometry geometry(const Call& call, const FlashParams& p) {
  const Shape &q = call.in_aval(0).shape, &k = call.in_aval(1).shape;
  Geometry g{q[0], q[1], q[2], q[3], k[1], k[2], q[2] / k[2], p.block_q, p.block_k, 0, 0,
             p.scale};
  constexpr int64_t L = kLanes<T>;
  g.Dp = std::max<int64_t>(L, (g.D + L - 1) / L * L);
  g.bk = std::min(g.bk, g.S);
  g.bq = std::min(g.bq, g.T);
  g.Np = (g.bk + L - 1) / L * L;
  return g;
}

// Packs keys [s0, s0 + ns) of kv head j: rows [ns, Np) x Dp (row-major, zero-padded) into
// `rows` (may be null) and transposed Dp x Np into `cols`.
template <typename T>
GRAFT_INLINE void pack_keys(const Geometry& g, const T* k, int64_t b, int64_t j, int64_t s0,
                            int64_t ns, T* rows, T* cols) {
  if (cols != nullptr) std::fill(cols, cols + g.Dp * g.Np, T(0));
  if (rows != nullptr) std::fill(rows, rows + g.Np * g.Dp, T(0));
  for (int64_t c = 0; c < ns; ++c) {
    const T* src = k + g.k_at(b, s0 + c, j);
    for (int64_t d = 0; d < g.D; ++d) {
      if (cols != nullptr) cols[d * g.Np + c] = src[d];
      if (rows != nullptr) rows[c * g.Dp + d] = src[d];
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
template <typename T>
GRAFT_INLINE void forward_tile(const Geometry& g, const T* q, const T* k, const T* v, T* o,
                               T* lse, int64_t b, int64_t j, int64_t t0, ForwardScratch<T>& w) {
  const int64_t t1 = std::min(g.T, t0 + g.bq), M = (t1 - t0) * g.G;
  const T scale = static_cast<T>(g.scale);
  for (int64_t r = 0; r < M; ++r) {
    const T* src = q + g.q_at(b, t0 + r / g.G, j, r % g.G);
    T* dst = w.q.data() + r * g.Dp;
    for (int64_t d = 0; d < g.D; ++d) dst[d] = src[d] * scale;
    std::fill(dst + g.D, dst + g.Dp, T(0));
  }
  std::fill(w.o.begin(), w.o.begin() + M * g.Dp, T(0));
  std::fill(w.m.begin(), w.m.begin() + M, -std::numeric_limits<T>::infinity());
  std::fill(w.l.begin(), w.l.begin() + M, T(0));
  const int64_t last = g.pos(t1 - 1);
  for (int64_t s0 = 0; s0 <= last && s0 < g.S; s0 += g.bk) {
    const int64_t ns = std::min(g.S, s0 + g.bk) - s0;
    pack_keys(g, k, b, j, s0, ns, static_cast<T*>(nullptr), w.kt.data());
    gemm<T>(M, g.Np, g.D, w.q.data(), g.Dp, w.kt.data(), g.Np, w.s.data(), g.Np, false);
    for (int64_t r = 0; r < M; ++r) {
      T* row = w.s.data() + r * g.Np;
      const int64_t visible = std::min(ns, g.pos(t0 + r / g.G) - s0 + 1);
      for (int64_t c = std::max<int64_t>(visible, 0); c < g.Np; ++c) {
        row[c] = -std::numeric_limits<T>::infinity();
      }
      if (visible <= 0) {  // this row sees no key of the tile (it saw key 0 before)
        std::fill(row, row + g.Np, T(0));
        continue;
      }
      const T m_new = std::max(w.m[r], row_max(row, g.Np));
      const T alpha = std::exp(w.m[r] - m_new);  // 0 on the first tile (m = -inf)
      const T sum = exp_row(row, g.Np, visible, m_new);
      w.l[r] = w.l[r] * alpha + sum;
      if (alpha != T(1)) {
        T* orow = w.o.data() + r * g.Dp;
        for (int64_t d = 0; d < g.Dp; ++d) orow[d] *= alpha;
      }
      w.m[r] = m_new;
    }
    pack_keys(g, v, b, j, s0, ns, w.v.data(), static_cast<T*>(nullptr));
    gemm<T>(M, g.Dp, ns, w.s.data(), g.Np, w.v.data(), g.Dp, w.o.data(), g.Dp, true);
  }
  for (int64_t r = 0; r < M; ++r) {
    const int64_t t = t0 + r / g.G, gi = r % g.G;
    const T inv = T(1) / w.l[r];
    T* dst = o + g.q_at(b, t, j, gi);
    const T* src = w.o.data() + r * g.Dp;
    for (int64_t d = 0; d < g.D; ++d) dst[d] = src[d] * inv;
    lse[g.lse_at(b, t, j, gi)] = w.m[r] + std::log(w.l[r]);
  }
}

// Tasks [i0, i1) of the forward pass: task = (b * KV + j) * n_qtiles + qtile.
template <typename T>
GRAFT_INLINE void forward_tasks(const Geometry& g, const T* q, const T* k, const T* v, T* o,
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
GRAFT_CLONES void forward_f64(const Geometry& g, const double* q, const double* k,
                              const double* v, double* o, double* lse, int64_t i0, int64_t i1) {
  forward_tasks(g, q, k, v, o, lse, i0, i1);
}

struct GradArgs {
  const void *q, *k, *v, *o, *lse, *d_o, *d_lse;
  void *dq, *dk, *dv;
};

template <typename T>
struct BackwardScratch {
  std::vector<T> q, d_o, dq, lse, delta;  // all T * G rows of the (b, j) pair
  std::vector<T> k, kt, vt, s, dp, t, dk, dv;
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
        t(g.Np * g.bq * g.G),
        dk(g.Np * g.Dp),
        dv(g.Np * g.Dp) {}
};

// The whole backward pass of (b, kv head j).
template <typename T>
GRAFT_INLINE void backward_pair(const Geometry& g, const GradArgs& a, int64_t b, int64_t j,
                                BackwardScratch<T>& w) {
  const T *q = static_cast<const T*>(a.q), *k = static_cast<const T*>(a.k),
          *v = static_cast<const T*>(a.v), *o = static_cast<const T*>(a.o),
          *lse = static_cast<const T*>(a.lse), *d_o = static_cast<const T*>(a.d_o),
          *d_lse = static_cast<const T*>(a.d_lse);
  const T scale = static_cast<T>(g.scale);
  const int64_t R = g.T * g.G;
  for (int64_t r = 0; r < R; ++r) {
    const int64_t t = r / g.G, gi = r % g.G, at = g.q_at(b, t, j, gi);
    T *qd = w.q.data() + r * g.Dp, *dod = w.d_o.data() + r * g.Dp;
    T delta = 0;
    for (int64_t d = 0; d < g.D; ++d) {
      qd[d] = q[at + d] * scale;
      dod[d] = d_o[at + d];
      delta += d_o[at + d] * o[at + d];
    }
    std::fill(qd + g.D, qd + g.Dp, T(0));
    std::fill(dod + g.D, dod + g.Dp, T(0));
    w.lse[r] = lse[g.lse_at(b, t, j, gi)];
    w.delta[r] = delta - d_lse[g.lse_at(b, t, j, gi)];
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
      gemm<T>(M, g.Np, g.D, qt, g.Dp, w.kt.data(), g.Np, w.s.data(), g.Np, false);
      gemm<T>(M, g.Np, g.D, dot, g.Dp, w.vt.data(), g.Np, w.dp.data(), g.Np, false);
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
        for (int64_t c = 0; c < g.Np; ++c) ds[c] = p[c] * (ds[c] - delta);
      }
      // dv += p^T do, dk += ds^T q (over the tile's M rows: the G heads' sum too).
      transpose_tile(M, ns, w.s.data(), g.Np, w.t.data(), M);
      gemm<T>(ns, g.Dp, M, w.t.data(), M, dot, g.Dp, w.dv.data(), g.Dp, true);
      transpose_tile(M, ns, w.dp.data(), g.Np, w.t.data(), M);
      gemm<T>(ns, g.Dp, M, w.t.data(), M, qt, g.Dp, w.dk.data(), g.Dp, true);
      // dq += ds k (scaled once at the end).
      gemm<T>(M, g.Dp, ns, w.dp.data(), g.Np, w.k.data(), g.Dp, w.dq.data() + r0 * g.Dp, g.Dp,
              true);
    }
    T *dk = static_cast<T*>(a.dk), *dv = static_cast<T*>(a.dv);
    for (int64_t c = 0; c < ns; ++c) {
      std::memcpy(dk + g.k_at(b, s0 + c, j), w.dk.data() + c * g.Dp, g.D * sizeof(T));
      std::memcpy(dv + g.k_at(b, s0 + c, j), w.dv.data() + c * g.Dp, g.D * sizeof(T));
    }
  }
  T* dq = static_cast<T*>(a.dq);
  for (int64_t r = 0; r < R; ++r) {
    T* dst = dq + g.q_at(b, r / g.G, j, r % g.G);
    const T* src = w.dq.data() + r * g.Dp;
    for (int64_t d = 0; d < g.D; ++d) dst[d] = src[d] * scale;
  }
}

template <typename T>
GRAFT_INLINE void backward_tasks(const Geometry& g, const GradArgs& a, int64_t i0, int64_t i1) {
  BackwardScratch<T> w(g);
  for (int64_t i = i0; i < i1; ++i) backward_pair<T>(g, a, i / g.KV, i % g.KV, w);
}

GRAFT_CLONES void backward_f32(const Geometry& g, const GradArgs& a, int64_t i0, int64_t i1) {
  backward_tasks<float>(g, a, i0, i1);
}
GRAFT_CLONES void backward_f64(const Geometry& g, const GradArgs& a, int64_t i0, int64_t i1) {
  backward_tasks<double>(g, a, i0, i1);
}

void flash_attention_kernel(Call& call) {
  const FlashParams& p = call.params<FlashAttention>().flash();
  const bool f64 = call.in_aval(0).dtype == DType::kF64;
  const Geometry g = f64 ? geometry<double>(call, p) : geometry<float>(call, p);
  void* o = call.out_raw(0);
  void* lse = call.out_raw(1);
  if (g.B * g.T * g.H == 0) return;
  const int64_t tasks = g.B * g.KV * ((g.T + g.bq - 1) / g.bq);
  parallel_for(tasks, 1, [&](int64_t i0, int64_t i1) {
    if (f64) {
      forward_f64(g, call.in<double>(0), call.in<double>(1), call.in<double>(2),
                  static_cast<double*>(o), static_cast<double*>(lse), i0, i1);
    } else {
      forward_f32(g, call.in<float>(0), call.in<float>(1), call.in<float>(2),
                  static_cast<float*>(o), static_cast<float*>(lse), i0, i1);
    }
  });
}

void flash_attention_grad_kernel(Call& call) {
  const FlashParams& p = call.params<FlashAttentionGrad>().flash();
  const bool f64 = call.in_aval(0).dtype == DType::kF64;
  const Geometry g = f64 ? geometry<double>(call, p) : geometry<float>(call, p);
  GradArgs a{call.in_raw(0), call.in_raw(1), call.in_raw(2),  call.in_raw(3),
             call.in_raw(4), call.in_raw(5), call.in_raw(6),  call.out_raw(0),
             call.out_raw(1), call.out_raw(2)};
  const size_t kv_bytes = numel(call.out_aval(1).shape) * (f64 ? 8 : 4);
  if (g.B * g.T * g.H == 0) {  // no queries: no key gets a gradient
    std::memset(a.dk, 0, kv_bytes);
    std::memset(a.dv, 0, kv_bytes);
    return;
  }
  parallel_for(g.B * g.KV, 1, [&](int64_t i0, int64_t i1) {
    if (f64) {
      backward_f64(g, a, i0, i1);
    } else {
      backward_f32(g, a, i0, i1);
    }
  });
}

}  // namespace

void register_attention_kernels(KernelTable& table) {
  table[static_cast<int>(PrimitiveId::kFlashAttention)] = &flash_attention_kernel;
  table[static_cast<int>(PrimitiveId::kFlashAttentionGrad)] = &flash_attention_grad_kernel;
}

}  // namespace graft::cpu
