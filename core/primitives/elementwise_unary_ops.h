// The unary elementwise ops, each defined once as a functor (the Unary rows of
// core/primitives/list.h name them). A functor holds
//   scalar(x)     the op on one value: bool, integers, float, double (f16 / bf16 arrive widened
//                 to float and are rounded after: the dtype class in list.h says which apply);
//   vec<C>        whether packet(p) exists for float / double C: the op on an Eigen packet,
//                 with the same bits as scalar() where the unfused kernels always used the
//                 packet (every path runs whole packets from a packet-aligned start, and
//                 scalar() on the last few elements);
//   run(x, y, n)  optionally, the op on an f32 array (XLA's f32 algorithms, which the compiler
//                 vectorizes);
//   d(g, x, out)  for kDiff rows, g * d(out)/dx written with public ops (JAX's rules,
//                 jax/_src/lax/lax.py); x is the operand and out the result.
// The eager kernel, the fused tile interpreter and the compiled loop's calls all apply these
// (core/backend/cpu/elementwise_loops.h), so every path gives the same bits.
#pragma once

#include <cmath>
#include <cstdint>
#include <type_traits>
#include <unsupported/Eigen/SpecialFunctions>

#include "core/lax/lax.h"
#include "core/primitives/elementwise_math.h"
#include "core/primitives/xla_math.h"

// Eigen's packet types carry vector attributes that template arguments drop (harmlessly:
// Eigen's own headers silence the same warning).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wignored-attributes"

namespace graft::ew {

// The constant v in x's dtype, strongly typed, so a rule's constant never changes the dtype or
// weak flag of what it multiplies.
inline Array k(double v, const Array& x) { return scalar(v, x.dtype()); }

template <typename C>
inline constexpr bool kVectorizable =
    std::is_floating_point_v<C>&& ei::packet_traits<C>::Vectorizable;

struct Op {
  template <typename C>
  static constexpr bool vec = false;
};

// An op Eigen defines (its scalar and packet functor E): the unfused kernels used Eigen's
// array expressions, which call exactly these.
template <template <typename> class E>
struct EigenOp {
  template <typename C>
  static C scalar(C x) {
    return E<C>()(x);
  }
  template <typename C>
  static constexpr bool vec = kVectorizable<C>&& ei::functor_traits<E<C>>::PacketAccess;
  template <typename P>
  static P packet(const P& x) {
    return E<scalar_of<P>>().packetOp(x);
  }
};

// f32 through XLA's algorithm F (core/primitives/xla_math.h; jax.random depends on its bits),
// f64 through Eigen's E.
template <void (*F)(const float*, float*, int64_t), template <typename> class E>
struct XlaOp {
  template <typename C>
  static C scalar(C x) {
    if constexpr (std::is_same_v<C, float>) {
      float y;
      F(&x, &y, 1);
      return y;
    } else {
      return E<C>()(x);
    }
  }
  template <typename C>
  static constexpr bool vec = !std::is_same_v<C, float> && EigenOp<E>::template vec<C>;
  template <typename P>
  static P packet(const P& x) {
    return E<scalar_of<P>>().packetOp(x);
  }
  static void run(const float* x, float* y, int64_t n) { F(x, y, n); }
};

// Integer negation and abs wrap (-INT_MIN == INT_MIN), computed unsigned.
template <typename T>
T wrap_neg(T x) {
  using U = std::make_unsigned_t<T>;
  return static_cast<T>(U(0) - U(x));
}

struct Neg : Op {
  template <typename T>
  static T scalar(T x) {
    if constexpr (std::is_integral_v<T>) {
      return wrap_neg(x);
    } else {
      return -x;
    }
  }
  template <typename C>
  static constexpr bool vec = kVectorizable<C>;
  template <typename P>
  static P packet(const P& x) {  // flips the sign bit (Eigen's AVX pnegate is 0 - v: +0 for +0)
    return ei::pxor(x, ei::pset1<P>(scalar_of<P>(-0.0)));
  }
  static Array d(const Array& g, const Array&, const Array&) { return neg(g); }
};

struct Abs : Op {
  template <typename T>
  static T scalar(T x) {
    if constexpr (std::is_unsigned_v<T>) {
      return x;
    } else if constexpr (std::is_integral_v<T>) {
      return x < 0 ? wrap_neg(x) : x;
    } else {
      return std::fabs(x);
    }
  }
  template <typename C>
  static constexpr bool vec = kVectorizable<C>;
  template <typename P>
  static P packet(const P& x) {
    return ei::pabs(x);
  }
  // abs'(+-0) = 1, as JAX's select(x >= 0, g, -g).
  static Array d(const Array& g, const Array& x, const Array&) {
    return where(x >= k(0, x), g, neg(g));
  }
};

struct Sign : Op {  // floats: sign(+-0) = +-0, sign(NaN) = NaN (elementwise_math.h)
  template <typename T>
  static T scalar(T x) {
    if constexpr (std::is_floating_point_v<T>) {
      return sign_value(x);
    } else {
      return x > 0 ? T(1) : (x < 0 ? static_cast<T>(-1) : T(0));
    }
  }
};

struct Square : Op {
  template <typename T>
  static T scalar(T x) {
    if constexpr (std::is_integral_v<T>) {
      using U = std::make_unsigned_t<T>;
      return static_cast<T>(U(x) * U(x));
    } else {
      return x * x;
    }
  }
  template <typename C>
  static constexpr bool vec = kVectorizable<C>;
  template <typename P>
  static P packet(const P& x) {
    return ei::pmul(x, x);
  }
  static Array d(const Array& g, const Array& x, const Array&) { return g * (k(2, x) * x); }
};

struct Exp {
  template <typename C>
  static C scalar(C x) {
    return exp_value(x);
  }
  template <typename C>
  static constexpr bool vec = kVectorizable<C>;
  template <typename P>
  static P packet(const P& x) {
    return pexp_value(x);
  }
  static Array d(const Array& g, const Array&, const Array& out) { return g * out; }
};

struct Expm1 : EigenOp<ei::scalar_expm1_op> {
  static Array d(const Array& g, const Array&, const Array& out) { return g * (out + k(1, out)); }
};

struct Log : XlaOp<xla_log_f32, ei::scalar_log_op> {
  static Array d(const Array& g, const Array& x, const Array&) { return g / x; }
};

struct Log1p : XlaOp<xla_log1p_f32, ei::scalar_log1p_op> {
  static Array d(const Array& g, const Array& x, const Array&) { return g / (x + k(1, x)); }
};

struct Sqrt {  // correctly rounded in every lane (elementwise_math.h)
  template <typename C>
  static C scalar(C x) {
    return std::sqrt(x);
  }
  template <typename C>
  static constexpr bool vec = kVectorizable<C>;
  template <typename P>
  static P packet(const P& x) {
    return psqrt_exact(x);
  }
  static Array d(const Array& g, const Array&, const Array& out) { return g * (k(0.5, out) / out); }
};

struct Rsqrt {  // 1 / sqrt(x): two IEEE operations
  template <typename C>
  static C scalar(C x) {
    return C(1) / std::sqrt(x);
  }
  template <typename C>
  static constexpr bool vec = kVectorizable<C>;
  template <typename P>
  static P packet(const P& x) {
    return ei::pdiv(ei::pset1<P>(scalar_of<P>(1)), psqrt_exact(x));
  }
  static Array d(const Array& g, const Array& x, const Array& out) {
    return g * (k(-0.5, x) * (out / x));
  }
};

struct Sin : EigenOp<ei::scalar_sin_op> {
  static Array d(const Array& g, const Array& x, const Array&) { return g * cos(x); }
};

struct Cos : EigenOp<ei::scalar_cos_op> {
  static Array d(const Array& g, const Array& x, const Array&) { return neg(g * sin(x)); }
};

// The f64 libm function, rounded once for f32 (within 1 ulp of JAX's f32 results, which are
// within 1 ulp of the correctly rounded value too).
template <double (*F)(double)>
struct ViaF64 : Op {
  template <typename C>
  static C scalar(C x) {
    return static_cast<C>(F(static_cast<double>(x)));
  }
};

struct Tan : ViaF64<std::tan> {
  static Array d(const Array& g, const Array&, const Array& out) {
    return g * (k(1, out) + square(out));  // 1 + tan^2, as JAX writes it
  }
};

struct Atan : ViaF64<std::atan> {
  static Array d(const Array& g, const Array& x, const Array&) { return g / (k(1, x) + square(x)); }
};

struct Asin : ViaF64<std::asin> {
  static Array d(const Array& g, const Array& x, const Array&) {
    return g * rsqrt(k(1, x) - square(x));
  }
};

struct Acos : ViaF64<std::acos> {
  static Array d(const Array& g, const Array& x, const Array&) {
    return neg(g * rsqrt(k(1, x) - square(x)));
  }
};

struct Sinh : ViaF64<std::sinh> {
  static Array d(const Array& g, const Array& x, const Array&) { return g * cosh(x); }
};

struct Cosh : ViaF64<std::cosh> {
  static Array d(const Array& g, const Array& x, const Array&) { return g * sinh(x); }
};

struct Asinh : ViaF64<std::asinh> {
  static Array d(const Array& g, const Array& x, const Array&) {
    return g * rsqrt(square(x) + k(1, x));
  }
};

struct Acosh : ViaF64<std::acosh> {
  static Array d(const Array& g, const Array& x, const Array&) {
    return g * rsqrt((x - k(1, x)) * (x + k(1, x)));
  }
};

struct Atanh : ViaF64<std::atanh> {
  static Array d(const Array& g, const Array& x, const Array&) {
    return reciprocal(k(1, x) + x) * (g / (k(1, x) - x));
  }
};

struct Tanh : EigenOp<ei::scalar_tanh_op> {
  // g * (1 - out^2), as JAX writes it.
  static Array d(const Array& g, const Array&, const Array& out) {
    return (g + g * out) * (k(1, out) - out);
  }
};

// 1 / (1 + e^-x) for x >= 0 and e^x / (1 + e^x) below, with one e = exp(-|x|): a few ulp
// relative everywhere, the small results of negative x included (Eigen's scalar_logistic_op,
// a rational function above -9, is 2e-4 relative off at -8), and e^x's subnormals kept. A NaN
// is passed through as it is (on every path the same bits).
struct Logistic {
  template <typename C>
  static C scalar(C x) {
    if (x != x) return x;
    const C e = exp_value(-std::abs(x));
    return (x >= C(0) ? C(1) : e) / (C(1) + e);
  }
  template <typename C>
  static constexpr bool vec = kVectorizable<C>;
  template <typename P>
  static P packet(const P& x) {
    const P one = ei::pset1<P>(scalar_of<P>(1));
    const P e = pexp_value(ei::pnegate(ei::pabs(x)));
    const P y = ei::pdiv(ei::pselect(ei::pcmp_le(ei::pzero(x), x), one, e), ei::padd(one, e));
    return ei::pselect(ei::pcmp_eq(x, x), y, x);
  }
  static Array d(const Array& g, const Array&, const Array& out) {
    return g * (out * (k(1, out) - out));
  }
};

struct Erf : XlaOp<xla_erf_f32, ei::scalar_erf_op> {
  static Array d(const Array& g, const Array& x, const Array&) {
    return g * (k(2 / std::sqrt(M_PI), x) * exp(neg(square(x))));
  }
};

struct ErfInv : Op {
  template <typename C>
  static C scalar(C x) {
    if constexpr (std::is_same_v<C, float>) {
      float y;
      xla_erf_inv_f32(&x, &y, 1);
      return y;
    } else {
      return erf_inv_f64(x);
    }
  }
  static void run(const float* x, float* y, int64_t n) { xla_erf_inv_f32(x, y, n); }
  static Array d(const Array& g, const Array& x, const Array& out) {
    return k(std::sqrt(M_PI) / 2, x) * (g * exp(square(out)));
  }
};

// floor, ceil and round (half to even) are exact: derivative zero.
struct Floor : EigenOp<ei::scalar_floor_op> {};
struct Ceil : EigenOp<ei::scalar_ceil_op> {};
struct Round : EigenOp<ei::scalar_rint_op> {};

struct IsFinite : Op {
  template <typename C>
  static bool scalar(C x) {
    return std::isfinite(x);
  }
};

struct Not : Op {  // logical on bool, bitwise on integers
  template <typename T>
  static T scalar(T x) {
    if constexpr (std::is_same_v<T, bool>) {
      return !x;
    } else {
      return static_cast<T>(~x);
    }
  }
};

}  // namespace graft::ew

#pragma GCC diagnostic pop
