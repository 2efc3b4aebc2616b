// flash_attention / flash_attention_grad tiles for bf16 q, k, v on CPUs with AVX512-BF16
// (attention_bf16_tiles.h). The tiling is attention_kernels.cc's; what differs is the tile
// products, which run on vdpbf16ps: pairs of bf16 multiplied exactly and summed into f32 lanes,
// two multiply-adds per lane where an FMA does one.
//
// Every product's right-hand operand is packed as k-pairs, the layout vdpbf16ps reads: a
// [K / 2][N] array of 32-bit words (B[2i][n], B[2i + 1][n]) (Pairs). The left-hand operand is
// addressed by (row, pair) with two strides, so the same kernel reads a row-major bf16 matrix
// (pairs along its rows) and a pair-packed one read transposed (dV^T += dO^T p, dK^T += q^T ds:
// no transposed copies). Operands are bf16: q, k, v, do as given; the probabilities p and ds
// are rounded to bf16 before their products, as FlashAttention does on GPUs. Scores, softmax
// statistics, delta and every accumulator stay f32, and the scale is applied to the f32 scores
// (q is not rounded after scaling).
#pragma GCC diagnostic ignored "-Wpsabi"  // 64-byte vectors passed by value: no ABI crossing
#include "core/backend/cpu/attention_bf16_tiles.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "core/backend/cpu/bf16_convert.h"

#if defined(__x86_64__) && !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
#include <immintrin.h>
#define GRAFT_HAVE_BF16_TILES 1
// GCC 12's AVX-512 intrinsics start from _mm512_undefined_*(), which it then reports.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

namespace graft::cpu::flash {

#ifndef GRAFT_HAVE_BF16_TILES

bool bf16_tiles_available(const Geometry&) { return false; }
void forward_bf16_tiles(const Geometry&, const bf16*, const bf16*, const bf16*, bf16*, float*,
                        int64_t, int64_t) {}
void backward_bf16_tiles(const Geometry&, const GradArgs&, int64_t, int64_t) {}

#else

namespace {

#define GRAFT_BF16 __attribute__((target("avx512f,avx512bw,avx512bf16"), always_inline)) inline
#define GRAFT_BF16_ENTRY __attribute__((target("avx512f,avx512bw,avx512bf16")))

using Pair = uint32_t;     // two bf16: the low half holds the even element
constexpr int64_t L = 16;  // f32 lanes

// C[r, :NV*16] (+)= sum_p A(r, p) . B[p, :NV*16] for R rows, A(r, p) = A[r * ar + p * ap].
template <int R, int NV>
GRAFT_BF16 void bf16_micro(int64_t P, const Pair* A, int64_t ar, int64_t ap, const Pair* B,
                           int64_t ldb, float* C, int64_t ldc, bool acc) {
  __m512 c[R][NV];
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 8
    for (int v = 0; v < NV; ++v)
      c[r][v] = acc ? _mm512_loadu_ps(C + r * ldc + v * L) : _mm512_setzero_ps();
  for (int64_t p = 0; p < P; ++p) {
    __m512bh b[NV];
#pragma GCC unroll 8
    for (int v = 0; v < NV; ++v) b[v] = (__m512bh)_mm512_loadu_si512(B + p * ldb + v * L);
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      const __m512bh a = (__m512bh)_mm512_set1_epi32(static_cast<int>(A[r * ar + p * ap]));
#pragma GCC unroll 8
      for (int v = 0; v < NV; ++v) c[r][v] = _mm512_dpbf16_ps(c[r][v], a, b[v]);
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 8
    for (int v = 0; v < NV; ++v) _mm512_storeu_ps(C + r * ldc + v * L, c[r][v]);
}

template <int NV>
GRAFT_BF16 void bf16_row_blocks(int64_t M, int64_t P, const Pair* A, int64_t ar, int64_t ap,
                                const Pair* B, int64_t ldb, float* C, int64_t ldc, bool acc) {
  int64_t m = 0;
  for (; m + 4 <= M; m += 4)
    bf16_micro<4, NV>(P, A + m * ar, ar, ap, B, ldb, C + m * ldc, ldc, acc);
  switch (M - m) {
    case 3:
      bf16_micro<3, NV>(P, A + m * ar, ar, ap, B, ldb, C + m * ldc, ldc, acc);
      break;
    case 2:
      bf16_micro<2, NV>(P, A + m * ar, ar, ap, B, ldb, C + m * ldc, ldc, acc);
      break;
    case 1:
      bf16_micro<1, NV>(P, A + m * ar, ar, ap, B, ldb, C + m * ldc, ldc, acc);
      break;
    default:
      break;
  }
}

// C [M, N] (+)= A [M, P pairs] . B [P, N] (pairs); N a multiple of 16.
GRAFT_BF16 void bf16_gemm(int64_t M, int64_t N, int64_t P, const Pair* A, int64_t ar, int64_t ap,
                          const Pair* B, int64_t ldb, float* C, int64_t ldc, bool acc) {
  for (int64_t n = 0; n < N; n += 4 * L) {
    switch (std::min<int64_t>(4, (N - n) / L)) {
      case 4:
        bf16_row_blocks<4>(M, P, A, ar, ap, B + n, ldb, C + n, ldc, acc);
        break;
      case 3:
        bf16_row_blocks<3>(M, P, A, ar, ap, B + n, ldb, C + n, ldc, acc);
        break;
      case 2:
        bf16_row_blocks<2>(M, P, A, ar, ap, B + n, ldb, C + n, ldc, acc);
        break;
      default:
        bf16_row_blocks<1>(M, P, A, ar, ap, B + n, ldb, C + n, ldc, acc);
        break;
    }
  }
}

// 16 f32 -> 16 bf16 (nearest even), as 16-bit lanes.
GRAFT_BF16 __m256i to_bf16(__m512 x) { return (__m256i)_mm512_cvtneps_pbh(x); }

// dst[c] = bf16(src[c]) for a row of n (a multiple of 16) values.
GRAFT_BF16 void round_row(const float* src, int64_t n, uint16_t* dst) {
  for (int64_t c = 0; c < n; c += L) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + c), to_bf16(_mm512_loadu_ps(src + c)));
  }
}

// Pairs along rows: dst[i, c] = (bf16(lo[c]), bf16(hi[c])) for n (a multiple of 16) columns;
// hi may be null (a zero row).
GRAFT_BF16 void pair_rows(const float* lo, const float* hi, int64_t n, Pair* dst) {
  for (int64_t c = 0; c < n; c += L) {
    __m512i a = _mm512_maskz_cvtepu16_epi32(__mmask16(0xFFFF), to_bf16(_mm512_loadu_ps(lo + c)));
    __m512i b = hi == nullptr ? _mm512_setzero_si512()
                              : _mm512_maskz_cvtepu16_epi32(__mmask16(0xFFFF),
                                                            to_bf16(_mm512_loadu_ps(hi + c)));
    _mm512_storeu_si512(dst + c, _mm512_or_si512(a, _mm512_slli_epi32(b, 16)));
  }
}

// Pairs along rows of 16 bf16 each: (lo[c], hi[c]) as 32-bit words.
GRAFT_BF16 __m512i pair16(const uint16_t* lo, const uint16_t* hi) {
  const __mmask16 all = 0xFFFF;
  __m512i a = _mm512_maskz_cvtepu16_epi32(all, _mm256_loadu_si256((const __m256i*)lo));
  __m512i b = _mm512_maskz_cvtepu16_epi32(all, _mm256_loadu_si256((const __m256i*)hi));
  return _mm512_or_si512(a, _mm512_slli_epi32(b, 16));
}

// Packs rows [s0, s0 + ns) of a k-like array (kv head j) for the products that read them:
//   cols [Dp / 2][Np]: pairs along head_dim, transposed (q k^T, do v^T);
//   rows [Np / 2][Dp]: pairs along the keys (p v, ds k).
// Either may be null; padding is zero. An even head_dim copies 32-bit words (a key row's pairs
// are already adjacent), a multiple of 16 interleaves key rows 16 lanes at a time.
GRAFT_BF16 void pack_kv(const Geometry& g, const bf16* x, int64_t b, int64_t j, int64_t s0,
                        int64_t ns, Pair* cols, Pair* rows) {
  const int64_t dpairs = g.Dp / 2, kpairs = g.Np / 2;
  auto row = [&](int64_t c) { return reinterpret_cast<const uint16_t*>(x + g.k_at(b, s0 + c, j)); };
  if (cols != nullptr) {
    std::fill(cols, cols + dpairs * g.Np, Pair(0));
    for (int64_t c = 0; c < ns; ++c) {
      const uint16_t* src = row(c);
      if (g.D % 2 == 0) {
        Pair words[256];  // D <= 512 here: larger head_dims take the element loop
        if (g.D <= 512) {
          std::memcpy(words, src, g.D * sizeof(uint16_t));
          for (int64_t p = 0; p < g.D / 2; ++p) cols[p * g.Np + c] = words[p];
          continue;
        }
      }
      for (int64_t d = 0; d < g.D; ++d) cols[(d / 2) * g.Np + c] |= Pair(src[d]) << ((d % 2) * 16);
    }
  }
  if (rows != nullptr) {
    const uint16_t zeros[16] = {};
    if (g.D % 16 == 0) {
      for (int64_t i = 0; i < kpairs; ++i) {
        const int64_t c = 2 * i;
        Pair* dst = rows + i * g.Dp;
        if (c >= ns) {
          std::fill(dst, dst + g.Dp, Pair(0));
          continue;
        }
        const uint16_t *lo = row(c), *hi = c + 1 < ns ? row(c + 1) : nullptr;
        for (int64_t d = 0; d < g.D; d += L) {
          _mm512_storeu_si512(dst + d, pair16(lo + d, hi ? hi + d : zeros));
        }
        std::fill(dst + g.D, dst + g.Dp, Pair(0));
      }
    } else {
      std::fill(rows, rows + kpairs * g.Dp, Pair(0));
      for (int64_t c = 0; c < ns; ++c) {
        const uint16_t* src = row(c);
        for (int64_t d = 0; d < g.D; ++d)
          rows[(c / 2) * g.Dp + d] |= Pair(src[d]) << ((c % 2) * 16);
      }
    }
  }
}

// Row r of a q-like array for (b, kv head j): the G heads of each position, rows t * G + g.
const bf16* q_row(const Geometry& g, const bf16* x, int64_t b, int64_t j, int64_t r) {
  return x + g.q_at(b, r / g.G, j, r % g.G);
}

// Copies row-major bf16 rows [r0, r1) (zero-padded to Dp) into dst [r1 - r0][Dp].
void copy_rows(const Geometry& g, const bf16* x, int64_t b, int64_t j, int64_t r0, int64_t r1,
               uint16_t* dst) {
  for (int64_t r = r0; r < r1; ++r) {
    uint16_t* out = dst + (r - r0) * g.Dp;
    std::memcpy(out, q_row(g, x, b, j, r), g.D * sizeof(uint16_t));
    std::fill(out + g.D, out + g.Dp, uint16_t(0));
  }
}

// A task's buffers. The packed key / value tiles of one (b, kv head) are kept for all its
// query tiles (consecutive tasks of a thread share them), packed as far as a query tile needs.
struct ForwardScratch {
  std::vector<uint16_t> q, p;  // [bq G][Dp], [bq G][Np] (bf16 bits)
  std::vector<Pair> kt, v;     // per key tile: [Dp / 2][Np], [Np / 2][Dp]
  std::vector<float> s, o, m, l;
  int64_t packed_pair = -1, packed_tiles = 0;  // (b * KV + j) whose first tiles are packed
  explicit ForwardScratch(const Geometry& g)
      : q(g.bq * g.G * g.Dp),
        p(g.bq * g.G * g.Np),
        kt(key_tiles(g) * (g.Dp / 2 * g.Np)),
        v(key_tiles(g) * (g.Np / 2 * g.Dp)),
        s(g.bq * g.G * g.Np),
        o(g.bq * g.G * g.Dp),
        m(g.bq * g.G),
        l(g.bq * g.G) {}
  static int64_t key_tiles(const Geometry& g) { return (g.S + g.bk - 1) / g.bk; }

  // Key tile `t` (keys t * bk ...) of (b, j): transposed key pairs and value row pairs.
  GRAFT_BF16 std::pair<const Pair*, const Pair*> tile(const Geometry& g, const bf16* k,
                                                      const bf16* v_in, int64_t b, int64_t j,
                                                      int64_t t) {
    const int64_t pair = b * g.KV + j, ksz = g.Dp / 2 * g.Np, vsz = g.Np / 2 * g.Dp;
    if (packed_pair != pair) packed_pair = pair, packed_tiles = 0;
    for (; packed_tiles <= t; ++packed_tiles) {
      const int64_t s0 = packed_tiles * g.bk, ns = std::min(g.S, s0 + g.bk) - s0;
      pack_kv(g, k, b, j, s0, ns, kt.data() + packed_tiles * ksz, nullptr);
      pack_kv(g, v_in, b, j, s0, ns, nullptr, v.data() + packed_tiles * vsz);
    }
    return {kt.data() + t * ksz, v.data() + t * vsz};
  }
};

GRAFT_BF16 void scale_row(float* row, int64_t n, float scale) {
  const __m512 s = _mm512_set1_ps(scale);
  for (int64_t c = 0; c < n; c += L)
    _mm512_storeu_ps(row + c, _mm512_mul_ps(_mm512_loadu_ps(row + c), s));
}

// dst[d] = bf16(src[d] * scale) for d < n (any n), with bf16's rounding bit for bit
// (bf16_convert.h; vcvtneps2bf16 would flush subnormals). The loops below were scalar code
// (GCC's -O2 cost model leaves them unvectorized) and cost a tenth of the kernels' time.
GRAFT_BF16 void scaled_to_bf16(const float* src, int64_t n, float scale, bf16* dst) {
  float row[512];
  for (int64_t d0 = 0; d0 < n; d0 += 512) {
    const int64_t len = std::min<int64_t>(512, n - d0);
    int64_t d = 0;
    const __m512 s = _mm512_set1_ps(scale);
    for (; d + L <= len; d += L)
      _mm512_storeu_ps(row + d, _mm512_mul_ps(_mm512_loadu_ps(src + d0 + d), s));
    for (; d < len; ++d) row[d] = src[d0 + d] * scale;
    round_to_bf16(row, dst + d0, len);
  }
}

// 16 bf16 widened (exactly) to f32 lanes.
GRAFT_BF16 __m512 widen16(const bf16* p) {
  return _mm512_castsi512_ps(_mm512_slli_epi32(
      _mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p))), 16));
}

// sum over d < n of x[d] * y[d], bf16 values widened exactly, accumulated in f32 lanes.
GRAFT_BF16 float dot_bf16(const bf16* x, const bf16* y, int64_t n) {
  __m512 acc = _mm512_setzero_ps();
  int64_t d = 0;
  for (; d + L <= n; d += L) acc = _mm512_fmadd_ps(widen16(x + d), widen16(y + d), acc);
  float sum = _mm512_reduce_add_ps(acc);
  for (; d < n; ++d) sum += float(x[d]) * float(y[d]);
  return sum;
}

// ds[c] = p[c] * (ds[c] - delta) for c < n (a multiple of 16): the scalar expression's bits.
GRAFT_BF16 void softmax_grad_row(const float* p, float* ds, int64_t n, float delta) {
  const __m512 dl = _mm512_set1_ps(delta);
  for (int64_t c = 0; c < n; c += L) {
    _mm512_storeu_ps(
        ds + c, _mm512_mul_ps(_mm512_loadu_ps(p + c), _mm512_sub_ps(_mm512_loadu_ps(ds + c), dl)));
  }
}

GRAFT_BF16 void forward_tile(const Geometry& g, const bf16* q, const bf16* k, const bf16* v,
                             bf16* o, float* lse, int64_t b, int64_t j, int64_t t0,
                             ForwardScratch& w) {
  const int64_t t1 = std::min(g.T, t0 + g.bq), M = (t1 - t0) * g.G;
  const float scale = static_cast<float>(g.scale);
  const Pair* qp = reinterpret_cast<const Pair*>(w.q.data());
  const Pair* pp = reinterpret_cast<const Pair*>(w.p.data());
  copy_rows(g, q, b, j, t0 * g.G, t1 * g.G, w.q.data());
  std::fill(w.o.begin(), w.o.begin() + M * g.Dp, 0.0f);
  std::fill(w.m.begin(), w.m.begin() + M, -std::numeric_limits<float>::infinity());
  std::fill(w.l.begin(), w.l.begin() + M, 0.0f);
  const int64_t last = g.pos(t1 - 1);
  for (int64_t s0 = 0; s0 <= last && s0 < g.S; s0 += g.bk) {
    const int64_t ns = std::min(g.S, s0 + g.bk) - s0;
    const auto [kt, vr] = w.tile(g, k, v, b, j, s0 / g.bk);
    bf16_gemm(M, g.Np, g.Dp / 2, qp, g.Dp / 2, 1, kt, g.Np, w.s.data(), g.Np, false);
    for (int64_t r = 0; r < M; ++r) {
      float* row = w.s.data() + r * g.Np;
      const int64_t visible = std::min(ns, g.pos(t0 + r / g.G) - s0 + 1);
      if (visible <= 0) {  // this row sees no key of the tile (it saw key 0 before)
        std::fill(row, row + g.Np, 0.0f);
        round_row(row, g.Np, w.p.data() + r * g.Np);
        continue;
      }
      scale_row(row, g.Np, scale);
      const float m_new = std::max(w.m[r], row_max(row, g.Np, visible));
      const float alpha = std::exp(w.m[r] - m_new);  // 0 on the first tile (m = -inf)
      const float sum = exp_row(row, g.Np, visible, m_new);
      w.l[r] = w.l[r] * alpha + sum;
      if (alpha != 1.0f) scale_row(w.o.data() + r * g.Dp, g.Dp, alpha);
      w.m[r] = m_new;
      round_row(row, g.Np, w.p.data() + r * g.Np);
    }
    bf16_gemm(M, g.Dp, (ns + 1) / 2, pp, g.Np / 2, 1, vr, g.Dp, w.o.data(), g.Dp, true);
  }
  for (int64_t r = 0; r < M; ++r) {
    const int64_t t = t0 + r / g.G, gi = r % g.G;
    const float inv = 1.0f / w.l[r];
    scaled_to_bf16(w.o.data() + r * g.Dp, g.D, inv, o + g.q_at(b, t, j, gi));
    lse[g.lse_at(b, t, j, gi)] = w.m[r] + std::log(w.l[r]);
  }
}

struct BackwardScratch {
  std::vector<uint16_t> q, d_o;  // all T G rows of the (b, j) pair, row-major [R][Dp]
  std::vector<Pair> qp, dop;     // the same as pairs along rows [R / 2 + 1][Dp]
  std::vector<float> lse, delta, dq;
  std::vector<Pair> kt, vt, kr;  // [Dp / 2][Np], [Dp / 2][Np], [Np / 2][Dp]
  std::vector<float> s, dp;      // [bq G][Np]: p and ds in place
  std::vector<uint16_t> ds;      // ds rounded, row-major [bq G][Np]
  std::vector<Pair> pp, dsp;     // p, ds as pairs along rows [bq G / 2 + 1][Np]
  std::vector<float> dkt, dvt;   // [Dp][Np]: dK^T, dV^T of the key tile
  explicit BackwardScratch(const Geometry& g) {
    const int64_t R = g.T * g.G, M = g.bq * g.G;
    q.resize(R * g.Dp);
    d_o.resize(R * g.Dp);
    qp.resize((R / 2 + 1) * g.Dp);
    dop.resize((R / 2 + 1) * g.Dp);
    lse.resize(R);
    delta.resize(R);
    dq.resize(R * g.Dp);
    kt.resize(g.Dp / 2 * g.Np);
    vt.resize(g.Dp / 2 * g.Np);
    kr.resize(g.Np / 2 * g.Dp);
    s.resize(M * g.Np);
    dp.resize(M * g.Np);
    ds.resize(M * g.Np);
    pp.resize((M / 2 + 1) * g.Np);
    dsp.resize((M / 2 + 1) * g.Np);
    dkt.resize(g.Dp * g.Np);
    dvt.resize(g.Dp * g.Np);
  }
};

// Pairs along the rows of bf16 rows [R][Dp]: dst[i, d] = (x[2i, d], x[2i + 1, d]).
void pair_bf16_rows(const uint16_t* x, int64_t R, int64_t Dp, Pair* dst) {
  for (int64_t i = 0; 2 * i < R; ++i) {
    const uint16_t* lo = x + 2 * i * Dp;
    const uint16_t* hi = 2 * i + 1 < R ? lo + Dp : nullptr;
    for (int64_t d = 0; d < Dp; ++d) dst[i * Dp + d] = lo[d] | (hi ? Pair(hi[d]) << 16 : 0);
  }
}

GRAFT_BF16 void backward_pair(const Geometry& g, const GradArgs& a, int64_t b, int64_t j,
                              BackwardScratch& w) {
  const bf16 *q = static_cast<const bf16*>(a.q), *k = static_cast<const bf16*>(a.k),
             *v = static_cast<const bf16*>(a.v), *o = static_cast<const bf16*>(a.o),
             *d_o = static_cast<const bf16*>(a.d_o);
  const float *lse = static_cast<const float*>(a.lse), *d_lse = static_cast<const float*>(a.d_lse);
  const float scale = static_cast<float>(g.scale);
  const int64_t R = g.T * g.G;
  copy_rows(g, q, b, j, 0, R, w.q.data());
  copy_rows(g, d_o, b, j, 0, R, w.d_o.data());
  pair_bf16_rows(w.q.data(), R, g.Dp, w.qp.data());
  pair_bf16_rows(w.d_o.data(), R, g.Dp, w.dop.data());
  for (int64_t r = 0; r < R; ++r) {
    const float delta = dot_bf16(q_row(g, d_o, b, j, r), q_row(g, o, b, j, r), g.D);
    const int64_t at = g.lse_at(b, r / g.G, j, r % g.G);
    w.lse[r] = lse[at];
    w.delta[r] = delta - d_lse[at];
  }
  std::fill(w.dq.begin(), w.dq.end(), 0.0f);
  const Pair* qrows = reinterpret_cast<const Pair*>(w.q.data());
  const Pair* dorows = reinterpret_cast<const Pair*>(w.d_o.data());
  const Pair* dsrows = reinterpret_cast<const Pair*>(w.ds.data());
  for (int64_t s0 = 0; s0 < g.S; s0 += g.bk) {
    const int64_t ns = std::min(g.S, s0 + g.bk) - s0;
    pack_kv(g, k, b, j, s0, ns, w.kt.data(), w.kr.data());
    pack_kv(g, v, b, j, s0, ns, w.vt.data(), nullptr);
    std::fill(w.dkt.begin(), w.dkt.end(), 0.0f);
    std::fill(w.dvt.begin(), w.dvt.end(), 0.0f);
    const int64_t first_t = std::max<int64_t>(0, s0 - (g.S - g.T));  // first query seeing s0
    for (int64_t t0 = first_t / g.bq * g.bq; t0 < g.T; t0 += g.bq) {
      const int64_t t1 = std::min(g.T, t0 + g.bq), M = (t1 - t0) * g.G, r0 = t0 * g.G;
      const int64_t mp = (M + 1) / 2;  // row pairs of the tile (r0 is even: bq G is)
      bf16_gemm(M, g.Np, g.Dp / 2, qrows + r0 * g.Dp / 2, g.Dp / 2, 1, w.kt.data(), g.Np,
                w.s.data(), g.Np, false);
      bf16_gemm(M, g.Np, g.Dp / 2, dorows + r0 * g.Dp / 2, g.Dp / 2, 1, w.vt.data(), g.Np,
                w.dp.data(), g.Np, false);
      for (int64_t r = 0; r < M; ++r) {
        float *p = w.s.data() + r * g.Np, *ds = w.dp.data() + r * g.Np;
        const int64_t visible = std::min(ns, g.pos(t0 + r / g.G) - s0 + 1);
        if (visible <= 0) {
          std::fill(p, p + g.Np, 0.0f);
          std::fill(ds, ds + g.Np, 0.0f);
        } else {
          scale_row(p, g.Np, scale);
          exp_row(p, g.Np, visible, w.lse[r0 + r]);
          softmax_grad_row(p, ds, g.Np, w.delta[r0 + r]);
        }
        round_row(ds, g.Np, w.ds.data() + r * g.Np);
      }
      for (int64_t i = 0; i < mp; ++i) {
        const bool pair = 2 * i + 1 < M;
        pair_rows(w.s.data() + 2 * i * g.Np, pair ? w.s.data() + (2 * i + 1) * g.Np : nullptr, g.Np,
                  w.pp.data() + i * g.Np);
        pair_rows(w.dp.data() + 2 * i * g.Np, pair ? w.dp.data() + (2 * i + 1) * g.Np : nullptr,
                  g.Np, w.dsp.data() + i * g.Np);
      }
      // dV^T += do^T p, dK^T += q^T ds (over the tile's rows: the G heads' sum too): the
      // left operands are the row pairs of do and q read transposed.
      const Pair* dop = w.dop.data() + (r0 / 2) * g.Dp;
      const Pair* qp = w.qp.data() + (r0 / 2) * g.Dp;
      bf16_gemm(g.D, g.Np, mp, dop, 1, g.Dp, w.pp.data(), g.Np, w.dvt.data(), g.Np, true);
      bf16_gemm(g.D, g.Np, mp, qp, 1, g.Dp, w.dsp.data(), g.Np, w.dkt.data(), g.Np, true);
      // dq += ds k (scaled once at the end).
      bf16_gemm(M, g.Dp, (ns + 1) / 2, dsrows, g.Np / 2, 1, w.kr.data(), g.Dp,
                w.dq.data() + r0 * g.Dp, g.Dp, true);
    }
    bf16 *dk = static_cast<bf16*>(a.dk), *dv = static_cast<bf16*>(a.dv);
    for (int64_t c = 0; c < ns; ++c) {
      bf16 *dkc = dk + g.k_at(b, s0 + c, j), *dvc = dv + g.k_at(b, s0 + c, j);
      for (int64_t d = 0; d < g.D; ++d) {
        dkc[d] = bf16(w.dkt[d * g.Np + c] * scale);
        dvc[d] = bf16(w.dvt[d * g.Np + c]);
      }
    }
  }
  bf16* dq = static_cast<bf16*>(a.dq);
  for (int64_t r = 0; r < R; ++r) {
    scaled_to_bf16(w.dq.data() + r * g.Dp, g.D, scale, dq + g.q_at(b, r / g.G, j, r % g.G));
  }
}

}  // namespace

bool bf16_tiles_available(const Geometry& g) {
  static const bool cpu = __builtin_cpu_supports("avx512bf16");
  // Row pairs of a query tile start at even rows when bq G is even.
  return cpu && (g.bq * g.G) % 2 == 0;
}

GRAFT_BF16_ENTRY void forward_bf16_tiles(const Geometry& g, const bf16* q, const bf16* k,
                                         const bf16* v, bf16* o, float* lse, int64_t i0,
                                         int64_t i1) {
  ForwardScratch w(g);
  const int64_t nq = (g.T + g.bq - 1) / g.bq;
  for (int64_t i = i0; i < i1; ++i) {
    const int64_t bj = i / nq, qt = i % nq;
    forward_tile(g, q, k, v, o, lse, bj / g.KV, bj % g.KV, qt * g.bq, w);
  }
}

GRAFT_BF16_ENTRY void backward_bf16_tiles(const Geometry& g, const GradArgs& a, int64_t i0,
                                          int64_t i1) {
  BackwardScratch w(g);
  for (int64_t i = i0; i < i1; ++i) backward_pair(g, a, i / g.KV, i % g.KV, w);
}

#endif

}  // namespace graft::cpu::flash
