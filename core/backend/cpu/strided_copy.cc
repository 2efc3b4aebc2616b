#include "core/backend/cpu/strided_copy.h"

#include <algorithm>
#include <cstring>

#include "core/backend/cpu/parallel.h"

#if defined(__AVX__)
#include <immintrin.h>
#endif

namespace graft::cpu {
namespace {

struct Dim {
  int64_t n, s, d;  // size, source stride, destination stride (elements)
};

constexpr int64_t kTile = 64;        // transpose tile edge: measured best of 16/32/64 (f32)
constexpr int64_t kPiece = 1 << 15;  // longest row piece one work item copies
constexpr int64_t kGrain = 1 << 15;  // elements per parallel chunk, at least

// Calls item(src_off, dst_off, last_counter) for every position of `outer` (row-major), on
// the thread pool in chunks of about kGrain elements (`per_item` elements per call).
template <typename Item>
void for_each_outer(const std::vector<Dim>& outer, int64_t per_item, const Item& item) {
  int64_t total = 1;
  for (const Dim& o : outer) total *= o.n;
  int64_t grain = std::max<int64_t>(1, kGrain / std::max<int64_t>(1, per_item));
  int r = static_cast<int>(outer.size());
  parallel_for(total, grain, [&](int64_t b, int64_t e) {
    std::vector<int64_t> c(r);
    int64_t so = 0, dof = 0, rest = b;
    for (int t = r - 1; t >= 0; --t) {
      c[t] = rest % outer[t].n;
      rest /= outer[t].n;
      so += c[t] * outer[t].s;
      dof += c[t] * outer[t].d;
    }
    for (int64_t i = b; i < e; ++i) {
      item(so, dof, r ? c[r - 1] : 0);
      for (int t = r - 1; t >= 0; --t) {
        so += outer[t].s;
        dof += outer[t].d;
        if (++c[t] < outer[t].n) break;
        so -= outer[t].s * outer[t].n;
        dof -= outer[t].d * outer[t].n;
        c[t] = 0;
      }
    }
  });
}

// Transposes a kB x kB block: d[m * ds + i] = s[i * ss + m]. Register transposes for 4- and
// 2-byte elements (f32/i32, bf16/f16), a scalar loop for the rest.
template <typename U>
struct Micro {
  static constexpr int64_t kB = 8;
  static void run(const U* s, int64_t ss, U* d, int64_t ds) {
    for (int64_t m = 0; m < kB; ++m) {
      for (int64_t i = 0; i < kB; ++i) d[m * ds + i] = s[i * ss + m];
    }
  }
};

#if defined(__AVX__)
template <>
struct Micro<uint32_t> {
  static constexpr int64_t kB = 8;
  static void run(const uint32_t* s, int64_t ss, uint32_t* d, int64_t ds) {
    auto ld = [&](int i) { return _mm256_loadu_ps(reinterpret_cast<const float*>(s + i * ss)); };
    __m256 r0 = ld(0), r1 = ld(1), r2 = ld(2), r3 = ld(3), r4 = ld(4), r5 = ld(5), r6 = ld(6),
           r7 = ld(7);
    __m256 t0 = _mm256_unpacklo_ps(r0, r1), t1 = _mm256_unpackhi_ps(r0, r1);
    __m256 t2 = _mm256_unpacklo_ps(r2, r3), t3 = _mm256_unpackhi_ps(r2, r3);
    __m256 t4 = _mm256_unpacklo_ps(r4, r5), t5 = _mm256_unpackhi_ps(r4, r5);
    __m256 t6 = _mm256_unpacklo_ps(r6, r7), t7 = _mm256_unpackhi_ps(r6, r7);
    __m256 u0 = _mm256_shuffle_ps(t0, t2, 0x44), u1 = _mm256_shuffle_ps(t0, t2, 0xEE);
    __m256 u2 = _mm256_shuffle_ps(t1, t3, 0x44), u3 = _mm256_shuffle_ps(t1, t3, 0xEE);
    __m256 u4 = _mm256_shuffle_ps(t4, t6, 0x44), u5 = _mm256_shuffle_ps(t4, t6, 0xEE);
    __m256 u6 = _mm256_shuffle_ps(t5, t7, 0x44), u7 = _mm256_shuffle_ps(t5, t7, 0xEE);
    auto st = [&](int m, __m256 v) { _mm256_storeu_ps(reinterpret_cast<float*>(d + m * ds), v); };
    st(0, _mm256_permute2f128_ps(u0, u4, 0x20));
    st(1, _mm256_permute2f128_ps(u1, u5, 0x20));
    st(2, _mm256_permute2f128_ps(u2, u6, 0x20));
    st(3, _mm256_permute2f128_ps(u3, u7, 0x20));
    st(4, _mm256_permute2f128_ps(u0, u4, 0x31));
    st(5, _mm256_permute2f128_ps(u1, u5, 0x31));
    st(6, _mm256_permute2f128_ps(u2, u6, 0x31));
    st(7, _mm256_permute2f128_ps(u3, u7, 0x31));
  }
};

template <>
struct Micro<uint16_t> {
  static constexpr int64_t kB = 8;
  static void run(const uint16_t* s, int64_t ss, uint16_t* d, int64_t ds) {
    auto ld = [&](int i) { return _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i * ss)); };
    __m128i r0 = ld(0), r1 = ld(1), r2 = ld(2), r3 = ld(3), r4 = ld(4), r5 = ld(5), r6 = ld(6),
            r7 = ld(7);
    __m128i a0 = _mm_unpacklo_epi16(r0, r1), a1 = _mm_unpackhi_epi16(r0, r1);
    __m128i a2 = _mm_unpacklo_epi16(r2, r3), a3 = _mm_unpackhi_epi16(r2, r3);
    __m128i a4 = _mm_unpacklo_epi16(r4, r5), a5 = _mm_unpackhi_epi16(r4, r5);
    __m128i a6 = _mm_unpacklo_epi16(r6, r7), a7 = _mm_unpackhi_epi16(r6, r7);
    __m128i b0 = _mm_unpacklo_epi32(a0, a2), b1 = _mm_unpackhi_epi32(a0, a2);
    __m128i b2 = _mm_unpacklo_epi32(a1, a3), b3 = _mm_unpackhi_epi32(a1, a3);
    __m128i b4 = _mm_unpacklo_epi32(a4, a6), b5 = _mm_unpackhi_epi32(a4, a6);
    __m128i b6 = _mm_unpacklo_epi32(a5, a7), b7 = _mm_unpackhi_epi32(a5, a7);
    auto st = [&](int m, __m128i v) {
      _mm_storeu_si128(reinterpret_cast<__m128i*>(d + m * ds), v);
    };
    st(0, _mm_unpacklo_epi64(b0, b4));
    st(1, _mm_unpackhi_epi64(b0, b4));
    st(2, _mm_unpacklo_epi64(b1, b5));
    st(3, _mm_unpackhi_epi64(b1, b5));
    st(4, _mm_unpacklo_epi64(b2, b6));
    st(5, _mm_unpackhi_epi64(b2, b6));
    st(6, _mm_unpacklo_epi64(b3, b7));
    st(7, _mm_unpackhi_epi64(b3, b7));
  }
};
#endif

// One kTile x kTile tile of the transpose case: dst row jj (stride dd) gets source column jj
// (source rows have stride ss). Full kB blocks go through Micro, edges through a scalar loop.
template <typename U>
void copy_tile(const U* s, int64_t ss, U* d, int64_t dd, int64_t rows, int64_t cols) {
  constexpr int64_t B = Micro<U>::kB;
  int64_t rf = rows / B * B, cf = cols / B * B;
  for (int64_t kk = 0; kk < cf; kk += B) {
    for (int64_t jj = 0; jj < rf; jj += B)
      Micro<U>::run(s + jj + kk * ss, ss, d + jj * dd + kk, dd);
  }
  for (int64_t jj = 0; jj < rows; ++jj) {
    int64_t k0 = jj < rf ? cf : 0;  // the full blocks already covered [0, cf) of rows < rf
    for (int64_t kk = k0; kk < cols; ++kk) d[jj * dd + kk] = s[jj + kk * ss];
  }
}

template <typename U>
void copy_dims(const std::vector<Dim>& dims, const U* src, U* dst) {
  if (dims.empty()) {
    *dst = *src;
    return;
  }
  int k = static_cast<int>(dims.size()) - 1;
  const Dim in = dims[k];

  // Transpose-like: the destination's unit-stride dim is not the source's. Copy tiles of
  // kTile rows of source dim j (unit stride) by kTile columns of k, so both sides stay in L1.
  int j = -1;
  if (in.d == 1 && in.s != 1 && in.s != 0) {
    for (int t = k - 1; t >= 0; --t) {
      if (dims[t].s == 1) {
        j = t;
        break;
      }
    }
  }
  if (j >= 0) {
    const Dim dj = dims[j];
    std::vector<Dim> outer;
    for (int t = 0; t < k; ++t) {
      if (t != j) outer.push_back(dims[t]);
    }
    outer.push_back({(dj.n + kTile - 1) / kTile, dj.s * kTile, dj.d * kTile});
    for_each_outer(outer, kTile * in.n, [&](int64_t so, int64_t dof, int64_t jb) {
      const U* s = src + so;
      U* d = dst + dof;
      int64_t rows = std::min(kTile, dj.n - jb * kTile);
      for (int64_t kb = 0; kb < in.n; kb += kTile) {
        int64_t cols = std::min(kTile, in.n - kb);
        copy_tile(s + kb * in.s, in.s, d + kb, dj.d, rows, cols);
      }
    });
    return;
  }

  // Rows along the innermost dim, split into pieces so long rows still use all threads.
  std::vector<Dim> outer(dims.begin(), dims.begin() + k);
  int64_t piece = in.n;
  if (in.n > kPiece) {
    piece = kPiece;
    outer.push_back({(in.n + kPiece - 1) / kPiece, in.s * kPiece, in.d * kPiece});
  }
  const bool split = piece != in.n;
  for_each_outer(outer, piece, [&](int64_t so, int64_t dof, int64_t p) {
    const U* s = src + so;
    U* d = dst + dof;
    int64_t len = split ? std::min(piece, in.n - p * piece) : in.n;
    if (in.s == 1 && in.d == 1) {
      std::memcpy(d, s, static_cast<size_t>(len) * sizeof(U));
    } else if (in.s == 0) {
      const U v = *s;
      if (in.d == 1) {
        std::fill(d, d + len, v);
      } else {
        for (int64_t i = 0; i < len; ++i) d[i * in.d] = v;
      }
    } else if (in.d == 1) {
      for (int64_t i = 0; i < len; ++i) d[i] = s[i * in.s];
    } else {
      for (int64_t i = 0; i < len; ++i) d[i * in.d] = s[i * in.s];
    }
  });
}

// A 16-byte element (c128), copied as a whole.
struct Bytes16 {
  uint64_t lo, hi;
};

// Fills one small block, then memcpy's it across the chunk (std::fill of a 1-8 byte pattern
// measured well below memcpy speed).
template <typename U>
void fill_typed(U* dst, int64_t n, U v) {
  parallel_for(n, kGrain, [&](int64_t b, int64_t e) {
    constexpr int64_t kBlock = 4096 / sizeof(U);
    U* d = dst + b;
    int64_t len = e - b, first = std::min(len, kBlock);
    std::fill(d, d + first, v);
    for (int64_t i = first; i < len; i += kBlock) {
      std::memcpy(d + i, d, static_cast<size_t>(std::min(kBlock, len - i)) * sizeof(U));
    }
  });
}

}  // namespace

void strided_copy(int64_t esize, const Shape& dims, const void* src,
                  const std::vector<int64_t>& src_strides, void* dst,
                  const std::vector<int64_t>& dst_strides) {
  // Drop size-1 dims, then merge neighbours that are contiguous in both layouts.
  std::vector<Dim> merged;
  for (size_t t = 0; t < dims.size(); ++t) {
    if (dims[t] == 0) return;
    if (dims[t] == 1) continue;
    Dim cur{dims[t], src_strides[t], dst_strides[t]};
    if (!merged.empty() && merged.back().s == cur.s * cur.n && merged.back().d == cur.d * cur.n) {
      merged.back() = {merged.back().n * cur.n, cur.s, cur.d};
    } else {
      merged.push_back(cur);
    }
  }
  switch (esize) {
    case 1:
      copy_dims(merged, static_cast<const uint8_t*>(src), static_cast<uint8_t*>(dst));
      break;
    case 2:
      copy_dims(merged, static_cast<const uint16_t*>(src), static_cast<uint16_t*>(dst));
      break;
    case 4:
      copy_dims(merged, static_cast<const uint32_t*>(src), static_cast<uint32_t*>(dst));
      break;
    case 16:
      copy_dims(merged, static_cast<const Bytes16*>(src), static_cast<Bytes16*>(dst));
      break;
    default:
      copy_dims(merged, static_cast<const uint64_t*>(src), static_cast<uint64_t*>(dst));
      break;
  }
}

void fill(int64_t esize, void* dst, int64_t n, const void* value) {
  switch (esize) {
    case 1:
      fill_typed(static_cast<uint8_t*>(dst), n, *static_cast<const uint8_t*>(value));
      break;
    case 2:
      fill_typed(static_cast<uint16_t*>(dst), n, *static_cast<const uint16_t*>(value));
      break;
    case 4:
      fill_typed(static_cast<uint32_t*>(dst), n, *static_cast<const uint32_t*>(value));
      break;
    case 16:
      fill_typed(static_cast<Bytes16*>(dst), n, *static_cast<const Bytes16*>(value));
      break;
    default:
      fill_typed(static_cast<uint64_t*>(dst), n, *static_cast<const uint64_t*>(value));
      break;
  }
}

}  // namespace graft::cpu
