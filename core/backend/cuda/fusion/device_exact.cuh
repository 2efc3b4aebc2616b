// Device helpers of fused_elementwise's CUDA kernels that must give graft's CPU bits exactly:
// 16-bit float conversions (core/dtype/half.h's algorithms), XLA's integer and convert semantics
// (core/primitives/elementwise_*_ops.h, core/dtype/convert.h), NaN-propagating max / min, sign, and
// the IEEE ops. cuda_source.cc embeds this text in every kernel (a genrule turns it into a
// string literal); host_prelude.h compiles the same text for the host so tests check its bits
// against the CPU's without a GPU.
//
// Plain C++ on built-in types only: it includes nothing. The including text defines
// GRAFT_FN (function specifiers) and the bit casts g_f2u, g_u2f (float <-> unsigned int) and
// g_d2u, g_u2d (double <-> unsigned long long). Each op is g_<lax name>, overloaded on the
// lane type (float for f32 / f16 / bf16, double, bool, the integer types); the generator only
// calls an op on the lanes its dtype class accepts.

// ---- 16-bit floats ----
GRAFT_FN float g_from_f16(unsigned short h) {
  const unsigned int sign = ((unsigned int)h & 0x8000u) << 16;
  const unsigned int e = ((unsigned int)h >> 10) & 0x1fu;
  const unsigned int m = (unsigned int)h & 0x3ffu;
  if (e == 0x1fu) return g_u2f(sign | 0x7f800000u | (m << 13));
  if (e == 0u) {
    const float v = (float)m * (1.0f / 16777216.0f);
    return sign ? -v : v;
  }
  return g_u2f(sign | ((e + 112u) << 23) | (m << 13));
}
// Round to nearest even; subnormals, overflow to inf, NaN to a quiet NaN.
GRAFT_FN unsigned short g_to_f16(float f) {
  const unsigned int x = g_f2u(f);
  const unsigned int sign = (x >> 16) & 0x8000u;
  unsigned int a = x & 0x7fffffffu;
  if (a >= 0x7f800000u) return (unsigned short)(sign | 0x7c00u | (a > 0x7f800000u ? 0x200u : 0u));
  if (a >= 0x477ff000u) return (unsigned short)(sign | 0x7c00u);
  if (a < 0x38800000u) {  // subnormal or zero in f16: 2^-24 scaled to 1, rounded by f32 adds
    const float s = g_u2f(a) * 16777216.0f;
    const float r = (s + 8388608.0f) - 8388608.0f;
    return (unsigned short)(sign | (unsigned int)r);
  }
  a += 0xc8000fffu + ((a >> 13) & 1u);
  return (unsigned short)(sign | (a >> 13));
}
GRAFT_FN float g_from_bf16(unsigned short b) { return g_u2f((unsigned int)b << 16); }
GRAFT_FN unsigned short g_to_bf16(float f) {
  unsigned int x = g_f2u(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return (unsigned short)((x >> 16) | 0x40u);
  x += 0x7fffu + ((x >> 16) & 1u);
  return (unsigned short)(x >> 16);
}
// The bits of a bf16 slot's value (already rounded: its top half).
GRAFT_FN unsigned short g_bf16_bits(float x) { return (unsigned short)(g_f2u(x) >> 16); }
// A step of f16 / bf16 dtype computes in f32 and is rounded as the CPU rounds it.
GRAFT_FN float g_round_f16(float x) { return g_from_f16(g_to_f16(x)); }
GRAFT_FN float g_round_bf16(float x) { return g_from_bf16(g_to_bf16(x)); }

// ---- integer lanes: the unsigned type arithmetic wraps in, and the limits ----
template <typename T>
struct g_int;
template <>
struct g_int<unsigned char> {
  typedef unsigned char U;
  enum { is_signed = 0 };
  GRAFT_FN unsigned char lo() { return 0; }
  GRAFT_FN unsigned char hi() { return 255; }
};
template <>
struct g_int<unsigned int> {
  typedef unsigned int U;
  enum { is_signed = 0 };
  GRAFT_FN unsigned int lo() { return 0u; }
  GRAFT_FN unsigned int hi() { return 4294967295u; }
};
template <>
struct g_int<int> {
  typedef unsigned int U;
  enum { is_signed = 1 };
  GRAFT_FN int lo() { return -2147483647 - 1; }
  GRAFT_FN int hi() { return 2147483647; }
};
template <>
struct g_int<long long> {
  typedef unsigned long long U;
  enum { is_signed = 1 };
  GRAFT_FN long long lo() { return -9223372036854775807LL - 1; }
  GRAFT_FN long long hi() { return 9223372036854775807LL; }
};

// ---- converts (convert_element_type; the result of a f16 / bf16 one is rounded after) ----
template <typename S>
GRAFT_FN bool g_to_bool(S v) {
  return v != (S)0;
}
// Float -> integer saturates, NaN -> 0.
template <typename D, typename S>
GRAFT_FN D g_saturate(S v) {
  if (v != v) return (D)0;
  if (v <= (S)g_int<D>::lo()) return g_int<D>::lo();
  if (v >= (S)g_int<D>::hi()) return g_int<D>::hi();
  return (D)v;
}

// ---- unary ----
GRAFT_FN float g_neg(float x) { return -x; }
GRAFT_FN double g_neg(double x) { return -x; }
template <typename T>
GRAFT_FN T g_neg(T x) {  // wraps: -MIN == MIN
  typedef typename g_int<T>::U U;
  return (T)(U)((U)0 - (U)x);
}
GRAFT_FN float g_abs(float x) { return g_u2f(g_f2u(x) & 0x7fffffffu); }
GRAFT_FN double g_abs(double x) { return g_u2d(g_d2u(x) & 0x7fffffffffffffffULL); }
template <typename T>
GRAFT_FN T g_abs(T x) {
  return g_int<T>::is_signed && x < (T)0 ? g_neg(x) : x;
}
// Floats: sign(+-0) = +-0, sign(NaN) = NaN (the operand).
GRAFT_FN float g_sign(float x) { return x > 0.0f ? 1.0f : (x < 0.0f ? -1.0f : x); }
GRAFT_FN double g_sign(double x) { return x > 0.0 ? 1.0 : (x < 0.0 ? -1.0 : x); }
template <typename T>
GRAFT_FN T g_sign(T x) {
  return x > (T)0 ? (T)1 : (g_int<T>::is_signed && x < (T)0 ? (T)-1 : (T)0);
}
GRAFT_FN float g_square(float x) { return x * x; }
GRAFT_FN double g_square(double x) { return x * x; }
template <typename T>
GRAFT_FN T g_square(T x) {
  typedef typename g_int<T>::U U;
  return (T)(U)((U)x * (U)x);
}
// Correctly rounded (NVRTC's default -prec-sqrt=true, -prec-div=true): rsqrt is two IEEE ops.
GRAFT_FN float g_sqrt(float x) { return sqrtf(x); }
GRAFT_FN double g_sqrt(double x) { return sqrt(x); }
GRAFT_FN float g_rsqrt(float x) { return 1.0f / sqrtf(x); }
GRAFT_FN double g_rsqrt(double x) { return 1.0 / sqrt(x); }
GRAFT_FN float g_floor(float x) { return floorf(x); }
GRAFT_FN double g_floor(double x) { return floor(x); }
GRAFT_FN float g_ceil(float x) { return ceilf(x); }
GRAFT_FN double g_ceil(double x) { return ceil(x); }
GRAFT_FN float g_round(float x) { return rintf(x); }  // half to even
GRAFT_FN double g_round(double x) { return rint(x); }
GRAFT_FN bool g_is_finite(float x) { return (g_f2u(x) & 0x7fffffffu) < 0x7f800000u; }
GRAFT_FN bool g_is_finite(double x) {
  return (g_d2u(x) & 0x7fffffffffffffffULL) < 0x7ff0000000000000ULL;
}
GRAFT_FN bool g_not(bool x) { return !x; }
template <typename T>
GRAFT_FN T g_not(T x) {
  return (T)~x;
}

// ---- binary ----
GRAFT_FN float g_add(float a, float b) { return a + b; }
GRAFT_FN double g_add(double a, double b) { return a + b; }
template <typename T>
GRAFT_FN T g_add(T a, T b) {
  typedef typename g_int<T>::U U;
  return (T)(U)((U)a + (U)b);
}
GRAFT_FN float g_sub(float a, float b) { return a - b; }
GRAFT_FN double g_sub(double a, double b) { return a - b; }
template <typename T>
GRAFT_FN T g_sub(T a, T b) {
  typedef typename g_int<T>::U U;
  return (T)(U)((U)a - (U)b);
}
GRAFT_FN float g_mul(float a, float b) { return a * b; }
GRAFT_FN double g_mul(double a, double b) { return a * b; }
template <typename T>
GRAFT_FN T g_mul(T a, T b) {
  typedef typename g_int<T>::U U;
  return (T)(U)((U)a * (U)b);
}
GRAFT_FN float g_div(float a, float b) { return a / b; }
GRAFT_FN double g_div(double a, double b) { return a / b; }
template <typename T>
GRAFT_FN T g_div(T a, T b) {  // x / 0 = -1, MIN / -1 = MIN
  if (b == (T)0) return (T)-1;
  if (g_int<T>::is_signed && b == (T)-1) return g_neg(a);
  return (T)(a / b);
}
GRAFT_FN float g_rem(float a, float b) { return fmodf(a, b); }  // exact
GRAFT_FN double g_rem(double a, double b) { return fmod(a, b); }
template <typename T>
GRAFT_FN T g_rem(T a, T b) {  // x % 0 = x, x % -1 = 0
  if (b == (T)0) return a;
  if (g_int<T>::is_signed && b == (T)-1) return (T)0;
  return (T)(a % b);
}
template <typename T>
GRAFT_FN T g_pow(T base, T e) {  // integer power, wrapping; negative exponents as XLA
  typedef typename g_int<T>::U U;
  if (g_int<T>::is_signed && e < (T)0) {
    return base == (T)1 ? (T)1 : (base == (T)-1 ? ((e & (T)1) ? (T)-1 : (T)1) : (T)0);
  }
  U result = 1, b = (U)base;
  for (U k = (U)e; k != 0; k >>= 1) {
    if (k & 1) result = (U)(result * b);
    b = (U)(b * b);
  }
  return (T)result;
}
// lax.max / lax.min on floats: a NaN first operand wins, a NaN second one too (the
// comparison fails), and of two equal values max takes the bits' and (+0 over -0), min the or.
GRAFT_FN float g_max(float a, float b) {
  if (a != a) return a;
  if (a == b) return g_u2f(g_f2u(a) & g_f2u(b));
  return a > b ? a : b;
}
GRAFT_FN double g_max(double a, double b) {
  if (a != a) return a;
  if (a == b) return g_u2d(g_d2u(a) & g_d2u(b));
  return a > b ? a : b;
}
GRAFT_FN bool g_max(bool a, bool b) { return a || b; }
template <typename T>
GRAFT_FN T g_max(T a, T b) {
  return a > b ? a : b;
}
GRAFT_FN float g_min(float a, float b) {
  if (a != a) return a;
  if (a == b) return g_u2f(g_f2u(a) | g_f2u(b));
  return a < b ? a : b;
}
GRAFT_FN double g_min(double a, double b) {
  if (a != a) return a;
  if (a == b) return g_u2d(g_d2u(a) | g_d2u(b));
  return a < b ? a : b;
}
GRAFT_FN bool g_min(bool a, bool b) { return a && b; }
template <typename T>
GRAFT_FN T g_min(T a, T b) {
  return a < b ? a : b;
}
// Comparisons: IEEE (ne is true on NaN).
template <typename T>
GRAFT_FN bool g_eq(T a, T b) {
  return a == b;
}
template <typename T>
GRAFT_FN bool g_ne(T a, T b) {
  return a != b;
}
template <typename T>
GRAFT_FN bool g_lt(T a, T b) {
  return a < b;
}
template <typename T>
GRAFT_FN bool g_le(T a, T b) {
  return a <= b;
}
template <typename T>
GRAFT_FN bool g_gt(T a, T b) {
  return a > b;
}
template <typename T>
GRAFT_FN bool g_ge(T a, T b) {
  return a >= b;
}
// Logical on bool, bitwise on integers.
GRAFT_FN bool g_and(bool a, bool b) { return a && b; }
template <typename T>
GRAFT_FN T g_and(T a, T b) {
  return (T)(a & b);
}
GRAFT_FN bool g_or(bool a, bool b) { return a || b; }
template <typename T>
GRAFT_FN T g_or(T a, T b) {
  return (T)(a | b);
}
GRAFT_FN bool g_xor(bool a, bool b) { return a != b; }
template <typename T>
GRAFT_FN T g_xor(T a, T b) {
  return (T)(a ^ b);
}
