// Ports of XLA:CPU's f32 log (Cephes polynomial, xla/service/cpu/llvm_ir_runtime.cc), log1p
// (xla/codegen/intrinsic/log1p.cc), erf (xla/codegen/intrinsic/erf.cc) and erf_inv (the
// CHLO decomposition: Giles' single-precision approximation). std::fmaf marks exactly the
// multiply-adds XLA fuses; no other contraction is allowed, so results are bit-exact.
// Everything is branch-free so the loops vectorize (8 lanes with AVX2).
// Vectorize these loops (set before any include, so inline helpers share the options) at -O2 and
// let if-conversion turn the selects into blends (it needs no-trapping-math, and sqrt needs
// no-math-errno); fp-contract=off keeps every unfused multiply-add unfused. None of these changes a
// result.
#pragma GCC optimize("tree-vectorize", "vect-cost-model=dynamic", "no-trapping-math", \
                     "no-math-errno", "fp-contract=off")

#include "core/primitives/xla_math.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

// The loops only vectorize if the whole computation is inlined into them.
#define GRAFT_ALWAYS_INLINE inline __attribute__((always_inline))

namespace graft::ew {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

inline uint32_t bits_of(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
inline float from_bits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

GRAFT_ALWAYS_INLINE float log_f32(float x) {
  constexpr float kMinNormal = 1.17549435e-38f;
  // XLA clamps at the smallest normal; subnormals are scaled by 2^25 first instead, which
  // leaves normal inputs untouched and keeps log accurate below FLT_MIN.
  bool sub = x < kMinNormal;
  float t = sub ? x * 33554432.0f : x;
  t = t > kMinNormal ? t : kMinNormal;
  float e = 1.0f + static_cast<float>(static_cast<int32_t>(bits_of(t) >> 23) - 127);
  e = sub ? e - 25.0f : e;
  t = from_bits((bits_of(t) & 0x807FFFFFu) | 0x3F000000u);  // mantissa in [0.5, 1)
  bool m = t < 0.707106781186547524f;
  float t1 = m ? t : 0.0f;
  t = t - 1.0f;
  e = e - (m ? 1.0f : 0.0f);
  t = t + t1;
  float x2 = t * t;
  float x3 = x2 * t;
  float y = std::fmaf(t, 7.0376836292E-2f, -1.1514610310E-1f);
  float y1 = std::fmaf(t, -1.2420140846E-1f, 1.4249322787E-1f);
  float y2 = std::fmaf(t, 2.0000714765E-1f, -2.4999993993E-1f);
  y = std::fmaf(y, t, 1.1676998740E-1f);
  y1 = std::fmaf(y1, t, -1.6668057665E-1f);
  y2 = std::fmaf(y2, t, 3.3333331174E-1f);
  y = std::fmaf(y, x3, y1);
  y = std::fmaf(y, x3, y2);
  y = std::fmaf(y, x3, -2.12194440e-4f * e);
  t = t - 0.5f * x2;
  t = t + y;
  t = t + 0.693359375f * e;
  t = x == 0.0f ? -kInf : t;
  t = x == kInf ? kInf : t;
  return x >= 0.0f ? t : kNaN;  // negative or NaN
}

GRAFT_ALWAYS_INLINE float log1p_f32(float x) {
  constexpr float kNum[] = {4.5270000862445199635215E-5f, 4.9854102823193375972212E-1f,
                            6.5787325942061044846969E0f,  2.9911919328553073277375E1f,
                            6.0949667980987787057556E1f,  5.7112963590585538103336E1f,
                            2.0039553499201281259648E1f};
  constexpr float kDen[] = {1.0f,
                            1.5062909083469192043167E1f,
                            8.3047565967967209469434E1f,
                            2.2176239823732856465394E2f,
                            3.0909872225312059774938E2f,
                            2.1642788614495947685003E2f,
                            6.0118660497603843919306E1f};
  // Horner from p = 0, written out so the loop body stays straight-line code.
  float num = kNum[0];
  num = std::fmaf(num, x, kNum[1]);
  num = std::fmaf(num, x, kNum[2]);
  num = std::fmaf(num, x, kNum[3]);
  num = std::fmaf(num, x, kNum[4]);
  num = std::fmaf(num, x, kNum[5]);
  num = std::fmaf(num, x, kNum[6]);
  float den = kDen[0];
  den = std::fmaf(den, x, kDen[1]);
  den = std::fmaf(den, x, kDen[2]);
  den = std::fmaf(den, x, kDen[3]);
  den = std::fmaf(den, x, kDen[4]);
  den = std::fmaf(den, x, kDen[5]);
  den = std::fmaf(den, x, kDen[6]);
  float x2 = x * x;
  float s = (x * x2) * (num / den);
  s = std::fmaf(-0.5f, x2, s);
  s = x + s;
  float large = log_f32(x + 1.0f);
  return std::fabs(x) < 0.41421356237309504880f ? s : large;
}

GRAFT_ALWAYS_INLINE float erf_f32(float x) {
  float x2 = x * x;
  float p = std::fmaf(x2, 0.00022905065861350646f, 0.0034082910107109506f);
  p = std::fmaf(x2, p, 0.050955695062380861f);
  p = std::fmaf(x2, p, 0.18520832239976145f);
  p = std::fmaf(x2, p, 1.128379143519084f);
  p = x * p;
  float q = std::fmaf(x2, -1.1791602954361697e-7f, 0.000023547966471313185f);
  q = std::fmaf(x2, q, 0.0010179625278914885f);
  q = std::fmaf(x2, q, 0.014070470171167667f);
  q = std::fmaf(x2, q, 0.11098505178285362f);
  q = std::fmaf(x2, q, 0.49746925110067538f);
  q = std::fmaf(x2, q, 1.0f);
  float r = p / q;
  return std::fabs(x) >= 3.832506856900711f ? std::copysign(1.0f, x) : r;
}

// erf_inv given w = -log1p(-x * x) and its square root (computed by the caller: a sqrt
// call inside the loop would keep it from vectorizing, because of errno handling).
GRAFT_ALWAYS_INLINE float erf_inv_f32(float x, float w, float sqrt_w) {
  static constexpr float kSmall[] = {2.81022636e-08f,  3.43273939e-07f, -3.5233877e-06f,
                                     -4.39150654e-06f, 0.00021858087f,  -0.00125372503f,
                                     -0.00417768164f,  0.246640727f,    1.50140941f};
  static constexpr float kLarge[] = {-0.000200214257f, 0.000100950558f, 0.00134934322f,
                                     -0.00367342844f,  0.00573950773f,  -0.0076224613f,
                                     0.00943887047f,   1.00167406f,     2.83297682f};
  bool small = w < 5.0f;
  // Both branches are evaluated, as XLA's select does (w >= 0, or NaN when |x| > 1).
  float t = small ? w - 2.5f : sqrt_w - 3.0f;
  auto c = [small](int k) { return small ? kSmall[k] : kLarge[k]; };
  float p = c(0);
  p = std::fmaf(p, t, c(1));
  p = std::fmaf(p, t, c(2));
  p = std::fmaf(p, t, c(3));
  p = std::fmaf(p, t, c(4));
  p = std::fmaf(p, t, c(5));
  p = std::fmaf(p, t, c(6));
  p = std::fmaf(p, t, c(7));
  p = std::fmaf(p, t, c(8));
  float r = p * x;
  return std::fabs(x) == 1.0f ? x * kInf : r;
}

}  // namespace

void xla_log_f32(const float* in, float* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = log_f32(in[i]);
}
void xla_log1p_f32(const float* in, float* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = log1p_f32(in[i]);
}
void xla_erf_f32(const float* in, float* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = erf_f32(in[i]);
}
void xla_erf_inv_f32(const float* in, float* out, int64_t n) {
  constexpr int64_t kBlock = 512;
  alignas(64) float w[kBlock], sqrt_w[kBlock];
  for (int64_t b = 0; b < n; b += kBlock) {
    int64_t len = std::min(kBlock, n - b);
    for (int64_t i = 0; i < len; ++i) w[i] = -log1p_f32(in[b + i] * -in[b + i]);
    // Scalar sqrtss, correctly rounded (Eigen's fast-math packet sqrt is not).
    for (int64_t i = 0; i < len; ++i) sqrt_w[i] = std::sqrt(w[i]);
    for (int64_t i = 0; i < len; ++i) out[b + i] = erf_inv_f32(in[b + i], w[i], sqrt_w[i]);
  }
}

}  // namespace graft::ew
