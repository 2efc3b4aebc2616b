#include "core/backend/cpu/bf16_convert.h"

#include <immintrin.h>

namespace graft::cpu {
namespace {

// Eight f32 bit patterns rounded to bf16 in the low 16 bits of each 32-bit lane.
inline __m256i round8(__m256i x) {
  const __m256i lsb = _mm256_and_si256(_mm256_srli_epi32(x, 16), _mm256_set1_epi32(1));
  const __m256i rounded =
      _mm256_srli_epi32(_mm256_add_epi32(_mm256_add_epi32(x, _mm256_set1_epi32(0x7fff)), lsb), 16);
  const __m256i quiet = _mm256_or_si256(_mm256_srli_epi32(x, 16), _mm256_set1_epi32(0x40));
  const __m256i nan = _mm256_cmpgt_epi32(_mm256_and_si256(x, _mm256_set1_epi32(0x7fffffff)),
                                         _mm256_set1_epi32(0x7f800000));
  return _mm256_blendv_epi8(rounded, quiet, nan);
}

inline __m256i load8(const float* p) {
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
}

}  // namespace

void round_to_bf16(const float* x, bf16* y, int64_t n) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    // packus interleaves the two 128-bit halves; the permute puts them back in order.
    const __m256i packed = _mm256_packus_epi32(round8(load8(x + i)), round8(load8(x + i + 8)));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(y + i), _mm256_permute4x64_epi64(packed, 0xd8));
  }
  for (; i < n; ++i) y[i] = bf16(x[i]);
}

void widen_bf16(const bf16* x, float* y, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256i h =
        _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(x + i)));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(y + i), _mm256_slli_epi32(h, 16));
  }
  for (; i < n; ++i) y[i] = static_cast<float>(x[i]);
}

void round_through_bf16(float* v, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256i r = _mm256_slli_epi32(round8(load8(v + i)), 16);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(v + i), r);
  }
  for (; i < n; ++i) v[i] = static_cast<float>(bf16(v[i]));
}

}  // namespace graft::cpu
