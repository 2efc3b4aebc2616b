// Scalar and packet helpers of the elementwise functors (elementwise_unary_ops.h,
// elementwise_binary_ops.h): float ops whose edge cases JAX pins down exactly, written once so
// every path (eager kernel, fused tile, compiled loop) gives the same bits:
//  - sqrt is correctly rounded (the IEEE sqrt instruction, in every lane). Eigen's AVX packet
//    sqrt under EIGEN_FAST_MATH is rsqrt plus one Newton step: 1 ulp off for 10 of sqrt(1..31)
//    and NaN at +inf. rsqrt is 1 / sqrt(x) (two IEEE operations, the same on every CPU; XLA's
//    approximation is not correctly rounded either, and rsqrtps differs between vendors):
//    rsqrt(+inf) = 0, rsqrt(+-0) = +-inf, negative -> NaN, as JAX.
//  - max / min propagate a NaN (the first operand's if both are) and order -0 below +0:
//    max(0, -0) = max(-0, 0) = +0, min(0, -0) = min(-0, 0) = -0, as lax.max / lax.min.
//  - sign(+-0) is +-0 and sign(NaN) is NaN (the operand itself), as jnp.sign.
//  - f32 exp is Eigen's, except where the result is subnormal (x < -87: Eigen 3.4 clamps its
//    input at about -88.4, so exp(-inf) would be 2.9e-39 instead of 0, breaking masked
//    softmax): there it is recomputed in f64.
#pragma once

#include <immintrin.h>

#include <Eigen/Core>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

// Eigen's packet types carry vector attributes that template arguments drop (harmlessly:
// Eigen's own headers silence the same warning).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wignored-attributes"

namespace graft::ew {

namespace ei = Eigen::internal;

template <typename P>
using scalar_of = typename ei::unpacket_traits<P>::type;

// Lane-wise f(x) for a packet type without an instruction for it.
template <typename P, typename F>
P per_lane(const P& x, F f) {
  constexpr int kN = ei::unpacket_traits<P>::size;
  scalar_of<P> v[kN];
  ei::pstoreu(v, x);
  for (int i = 0; i < kN; ++i) v[i] = f(v[i]);
  return ei::ploadu<P>(v);
}

template <typename P>
P psqrt_exact(const P& x) {
  if constexpr (std::is_same_v<P, __m128>) {
    return _mm_sqrt_ps(x);
  } else if constexpr (std::is_same_v<P, __m128d>) {
    return _mm_sqrt_pd(x);
#ifdef __AVX__
  } else if constexpr (std::is_same_v<P, __m256>) {
    return _mm256_sqrt_ps(x);
  } else if constexpr (std::is_same_v<P, __m256d>) {
    return _mm256_sqrt_pd(x);
#endif
#ifdef __AVX512F__
  } else if constexpr (std::is_same_v<P, __m512>) {
    return _mm512_sqrt_ps(x);
  } else if constexpr (std::is_same_v<P, __m512d>) {
    return _mm512_sqrt_pd(x);
#endif
  } else {
    return per_lane(x, [](auto v) { return std::sqrt(v); });
  }
}

template <typename P>
P pis_nan(const P& x) {
  return ei::pandnot(ei::ptrue(x), ei::pcmp_eq(x, x));
}

// The bits of x & y (max of two equal values: -0 only if both are) or x | y (min).
template <typename C>
C and_bits(C x, C y) {
  using U = std::conditional_t<sizeof(C) == 8, uint64_t, uint32_t>;
  return std::bit_cast<C>(static_cast<U>(std::bit_cast<U>(x) & std::bit_cast<U>(y)));
}
template <typename C>
C or_bits(C x, C y) {
  using U = std::conditional_t<sizeof(C) == 8, uint64_t, uint32_t>;
  return std::bit_cast<C>(static_cast<U>(std::bit_cast<U>(x) | std::bit_cast<U>(y)));
}

template <typename C>
C max_value(C x, C y) {
  if (std::isnan(x)) return x;
  if (x == y) return and_bits(x, y);
  return x > y ? x : y;  // y when y is NaN
}
template <typename C>
C min_value(C x, C y) {
  if (std::isnan(x)) return x;
  if (x == y) return or_bits(x, y);
  return x < y ? x : y;
}
// The same on packets: u == v ? u & v : isnan(u) || u > v ? u : v (min: |, <).
template <typename P>
P pmax_value(const P& u, const P& v) {
  P r = ei::pselect(ei::por(ei::pcmp_lt(v, u), pis_nan(u)), u, v);
  return ei::pselect(ei::pcmp_eq(u, v), ei::pand(u, v), r);
}
template <typename P>
P pmin_value(const P& u, const P& v) {
  P r = ei::pselect(ei::por(ei::pcmp_lt(u, v), pis_nan(u)), u, v);
  return ei::pselect(ei::pcmp_eq(u, v), ei::por(u, v), r);
}

template <typename C>
C sign_value(C x) {
  return x > 0 ? C(1) : (x < 0 ? C(-1) : x);
}

inline float exp_subnormal_f32(float x) {
  return static_cast<float>(std::exp(static_cast<double>(x)));
}
template <typename C>
C exp_value(C x) {
  if constexpr (std::is_same_v<C, float>) {
    if (x < -87.0f) return exp_subnormal_f32(x);
  }
  return ei::scalar_exp_op<C>()(x);
}
template <typename P>
P pexp_value(const P& x) {
  P y = ei::pexp(x);
  if constexpr (std::is_same_v<scalar_of<P>, float>) {
    if (ei::predux_any(ei::pcmp_lt(x, ei::pset1<P>(-87.0f)))) {
      constexpr int kN = ei::unpacket_traits<P>::size;
      float in[kN], out[kN];
      ei::pstoreu(in, x);
      ei::pstoreu(out, y);
      for (int k = 0; k < kN; ++k) {
        if (in[k] < -87.0f) out[k] = exp_subnormal_f32(in[k]);
      }
      y = ei::ploadu<P>(out);
    }
  }
  return y;
}

template <typename T>
T int_pow(T base, T exp) {
  if constexpr (std::is_signed_v<T>) {
    if (exp < 0) return base == 1 ? 1 : (base == -1 ? ((exp & 1) ? -1 : 1) : 0);
  }
  // At least unsigned int: narrower unsigned types would multiply as (overflowing) int.
  using U = std::common_type_t<std::make_unsigned_t<T>, unsigned>;
  U result = 1, b = static_cast<U>(static_cast<std::make_unsigned_t<T>>(base));
  for (auto e = static_cast<std::make_unsigned_t<T>>(exp); e != 0; e >>= 1) {
    if (e & 1) result *= b;
    b *= b;
  }
  return static_cast<T>(result);
}

// erf^-1 for f32: Giles' single-precision approximation ("Approximating the erfinv function",
// GPU Computing Gems).
inline float erf_inv_giles_f32(float x) {
  float w = -std::log1p(-x * x);
  float p;
  if (w < 5.0f) {
    w = w - 2.5f;
    p = 2.81022636e-08f;
    p = 3.43273939e-07f + p * w;
    p = -3.5233877e-06f + p * w;
    p = -4.39150654e-06f + p * w;
    p = 0.00021858087f + p * w;
    p = -0.00125372503f + p * w;
    p = -0.00417768164f + p * w;
    p = 0.246640727f + p * w;
    p = 1.50140941f + p * w;
  } else {
    w = std::sqrt(w) - 3.0f;
    p = -0.000200214257f;
    p = 0.000100950558f + p * w;
    p = 0.00134934322f + p * w;
    p = -0.00367342844f + p * w;
    p = 0.00573950773f + p * w;
    p = -0.0076224613f + p * w;
    p = 0.00943887047f + p * w;
    p = 1.00167406f + p * w;
    p = 2.83297682f + p * w;
  }
  if (std::fabs(x) == 1.0f) return x * std::numeric_limits<float>::infinity();
  return p * x;
}

// erf^-1 for f64: Newton-refined from Giles' f32 estimate (two steps reach full precision).
inline double erf_inv_f64(double x) {
  if (std::fabs(x) >= 1.0) {
    return std::fabs(x) == 1.0 ? x * std::numeric_limits<double>::infinity()
                               : std::numeric_limits<double>::quiet_NaN();
  }
  double y = erf_inv_giles_f32(static_cast<float>(x));
  for (int i = 0; i < 3; ++i) {
    double err = std::erf(y) - x;
    y -= err / (2.0 / std::sqrt(M_PI) * std::exp(-y * y));
  }
  return y;
}

}  // namespace graft::ew

#pragma GCC diagnostic pop
