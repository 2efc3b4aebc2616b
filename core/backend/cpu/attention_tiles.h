// The pieces of the CPU flash-attention kernels that every tile variant shares
// (attention_kernels.cc, attention_bf16_tiles.cc): 64-byte vectors, exp, the f32 / f64 tile
// product, row max / exp, and the geometry of a call. Everything is inline: each variant is
// compiled for its own instruction set. Includers silence -Wpsabi before their includes (the
// 64-byte vectors passed by value here never cross an ABI boundary).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "core/backend/cpu/compute_type.h"
#include "core/backend/cpu/kernel.h"
#include "core/dtype/half.h"
#include "core/primitives/attention.h"

#define GRAFT_INLINE inline __attribute__((always_inline))

namespace graft::cpu::flash {

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
GRAFT_INLINE void store(T* p, const Vec<T>& v) {
  std::memcpy(p, &v, sizeof v);
}

// Operands and results are of type In (f64, f32, bf16, f16); tiles are computed in
// widen_t<In> (f64 for f64, else f32). widen / narrow convert one element (rounding to nearest
// even on the way down).
template <typename T, typename In>
GRAFT_INLINE T widen(In x) {
  return static_cast<T>(x);
}
template <typename In, typename T>
GRAFT_INLINE In narrow(T x) {
  return static_cast<In>(x);
}
template <>
GRAFT_INLINE bf16 narrow<bf16, float>(float x) {
  return bf16(x);
}
template <>
GRAFT_INLINE f16 narrow<f16, float>(float x) {
  return f16(x);
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

// C[r, :NV*L] (+)= A[r, :K] @ B[:K, :NV*L] for R rows; A's element (r, k) at A[r * ar + k * ak]
// (ak = 1: row-major; ar = 1: A read transposed), B and C row-major with the given strides.
template <typename T, int R, int NV>
GRAFT_INLINE void micro(int64_t K, const T* A, int64_t ar, int64_t ak, const T* B, int64_t ldb,
                        T* C, int64_t ldc, bool acc) {
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
      const T a = A[r * ar + k * ak];
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
GRAFT_INLINE void row_blocks(int64_t M, int64_t K, const T* A, int64_t ar, int64_t ak, const T* B,
                             int64_t ldb, T* C, int64_t ldc, bool acc) {
  int64_t m = 0;
  for (; m + 4 <= M; m += 4) micro<T, 4, NV>(K, A + m * ar, ar, ak, B, ldb, C + m * ldc, ldc, acc);
  switch (M - m) {
    case 3:
      micro<T, 3, NV>(K, A + m * ar, ar, ak, B, ldb, C + m * ldc, ldc, acc);
      break;
    case 2:
      micro<T, 2, NV>(K, A + m * ar, ar, ak, B, ldb, C + m * ldc, ldc, acc);
      break;
    case 1:
      micro<T, 1, NV>(K, A + m * ar, ar, ak, B, ldb, C + m * ldc, ldc, acc);
      break;
    default:
      break;
  }
}

// C [M, N] (+)= A [M, K] @ B [K, N], N a multiple of the vector width; A's element (m, k) at
// A[m * ar + k * ak], so a transposed A needs no copy.
template <typename T>
GRAFT_INLINE void gemm(int64_t M, int64_t N, int64_t K, const T* A, int64_t ar, int64_t ak,
                       const T* B, int64_t ldb, T* C, int64_t ldc, bool acc) {
  constexpr int64_t L = kLanes<T>;
  for (int64_t n = 0; n < N; n += 4 * L) {
    switch (std::min<int64_t>(4, (N - n) / L)) {
      case 4:
        row_blocks<T, 4>(M, K, A, ar, ak, B + n, ldb, C + n, ldc, acc);
        break;
      case 3:
        row_blocks<T, 3>(M, K, A, ar, ak, B + n, ldb, C + n, ldc, acc);
        break;
      case 2:
        row_blocks<T, 2>(M, K, A, ar, ak, B + n, ldb, C + n, ldc, acc);
        break;
      default:
        row_blocks<T, 1>(M, K, A, ar, ak, B + n, ldb, C + n, ldc, acc);
        break;
    }
  }
}

// Row loops on whole vectors where the operand is already of the tile's type (the scalar
// statement on the rest, and on f16 / bf16 operands; a lane is the same IEEE operation).
// dst[d] = widen(src[d]) * s for d < n.
template <typename T, typename In>
GRAFT_INLINE void widen_scaled(T* dst, const In* src, int64_t n, T s) {
  int64_t d = 0;
  if constexpr (std::is_same_v<In, T>) {
    for (; d + kLanes<T> <= n; d += kLanes<T>) store(dst + d, load(src + d) * s);
  }
  for (; d < n; ++d) dst[d] = widen<T>(src[d]) * s;
}
// dst[d] = src[d] as To (widened, or narrowed to nearest even) for d < n.
template <typename To, typename From>
GRAFT_INLINE void copy_as(To* dst, const From* src, int64_t n) {
  if constexpr (std::is_same_v<To, From>) {
    std::memcpy(dst, src, n * sizeof(To));
  } else {
    for (int64_t d = 0; d < n; ++d) dst[d] = static_cast<To>(src[d]);
  }
}
// dst[d] = narrow(src[d] * s) for d < n.
template <typename In, typename T>
GRAFT_INLINE void narrow_scaled(In* dst, const T* src, int64_t n, T s) {
  int64_t d = 0;
  if constexpr (std::is_same_v<In, T>) {
    for (; d + kLanes<T> <= n; d += kLanes<T>) store(dst + d, load(src + d) * s);
  }
  for (; d < n; ++d) dst[d] = narrow<In>(src[d] * s);
}
// The sum of x[d] * widen(y[d]) for d < n (per-lane partial sums, then across the lanes).
template <typename T, typename In>
GRAFT_INLINE T dot_row(const T* x, const In* y, int64_t n) {
  int64_t d = 0;
  T out = 0;
  if constexpr (std::is_same_v<In, T>) {
    Vec<T> acc{};
    for (; d + kLanes<T> <= n; d += kLanes<T>) acc += load(x + d) * load(y + d);
    for (int i = 0; i < kLanes<T>; ++i) out += acc[i];
  }
  for (; d < n; ++d) out += x[d] * widen<T>(y[d]);
  return out;
}
// x[d] *= s for d < n, n a multiple of the vector width.
template <typename T>
GRAFT_INLINE void scale_row(T* x, int64_t n, T s) {
  for (int64_t d = 0; d < n; d += kLanes<T>) store(x + d, load(x + d) * s);
}

// Lane l of a vector holds l.
template <typename T>
GRAFT_INLINE Vec<T> lane_index() {
  Vec<T> i;
  for (int l = 0; l < kLanes<T>; ++l) i[l] = static_cast<T>(l);
  return i;
}

// v's lanes below `count`, `otherwise`'s from there: the compare's mask applied bitwise, so the
// lanes past a row's end are masked in registers (storing single lanes, then loading the vector
// back, stalls: the stores can not be forwarded; and GCC compiles a ?: on this constant compare
// lane by lane).
template <typename T>
GRAFT_INLINE Vec<T> first_lanes(const Vec<T>& v, int64_t count, const Vec<T>& otherwise) {
  const auto keep = lane_index<T>() < (Vec<T>{} + static_cast<T>(count));
  using Mask = decltype(keep);
  return reinterpret_cast<Vec<T>>((reinterpret_cast<Mask>(v) & keep) |
                                  (reinterpret_cast<Mask>(otherwise) & ~keep));
}

// The max of x[c] for c < visible (1 <= visible <= n, n a multiple of the vector width).
template <typename T>
GRAFT_INLINE T row_max(const T* x, int64_t n, int64_t visible) {
  constexpr int64_t L = kLanes<T>;
  const Vec<T> none = Vec<T>{} - std::numeric_limits<T>::infinity();
  Vec<T> m = first_lanes<T>(load(x), visible, none);
  for (int64_t c = L; c < n; c += L) {
    Vec<T> v = first_lanes<T>(load(x + c), visible - c, none);
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
    Vec<T> v = first_lanes<T>(vexp(load(x + c) - shift), visible - c, Vec<T>{});
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
  Geometry g{q[0], q[1], q[2], q[3], k[1], k[2], q[2] / k[2], p.block_q, p.block_k, 0, 0, p.scale};
  constexpr int64_t L = kLanes<T>;
  g.Dp = std::max<int64_t>(L, (g.D + L - 1) / L * L);
  g.bk = std::min(g.bk, g.S);
  g.bq = std::min(g.bq, g.T);
  g.Np = (g.bk + L - 1) / L * L;
  return g;
}

struct GradArgs {
  const void *q, *k, *v, *o, *lse, *d_o, *d_lse;
  void *dq, *dk, *dv;
};

}  // namespace graft::cpu::flash
