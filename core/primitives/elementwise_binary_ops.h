// The binary elementwise ops, each defined once as a functor (the Binary rows of
// core/primitives/list.h name them), as the unary ones (elementwise_unary_ops.h):
//   scalar(a, b)         the op on two values of one type (bool, integers, float, double);
//   vec<C>, packet(p, q) the op on Eigen packets, where it exists;
//   d(i, g, x, y, out)   for kDiff rows, g * d(out)/d(operand i) for float operands x, y.
// Integer semantics follow XLA: add / sub / mul wrap (computed unsigned), division by zero
// gives -1 (x % 0 gives x) instead of trapping, MIN / -1 wraps to MIN, shifts by >= the bit
// width give 0.
#pragma once

#include <cmath>
#include <type_traits>

#include "core/lax/lax.h"
#include "core/primitives/elementwise_unary_ops.h"

// Eigen's packet types carry vector attributes that template arguments drop (harmlessly:
// Eigen's own headers silence the same warning).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wignored-attributes"

namespace graft::ew {

template <typename T>
using Unsigned = std::make_unsigned_t<T>;
// Wrapping arithmetic on T's bits: unsigned, and at least unsigned int, because narrower
// unsigned types promote to (signed) int, where u16 * u16 overflows.
template <typename T>
using Wrapping = std::common_type_t<Unsigned<T>, unsigned>;

// A lazy zero array (a broadcast scalar: nothing materialized while tracing).
inline Array zeros_of(const Shape& shape, DType dtype) {
  return broadcast_in_dim(scalar(0.0, dtype), shape, {});
}

// JAX's _balanced_eq: where both operands equal the max (min), each gets half the gradient.
inline Array balanced(const Array& g, const Array& self, const Array& other, const Array& out) {
  return where(self == out, where(other == out, g * k(0.5, g), g), zeros_of(g.shape(), g.dtype()));
}

struct Add : Op {
  template <typename T>
  static T scalar(T a, T b) {
    if constexpr (std::is_integral_v<T>) {
      return static_cast<T>(Wrapping<T>(a) + Wrapping<T>(b));
    } else {
      return a + b;
    }
  }
  template <typename C>
  static constexpr bool vec = kVectorizable<C>;
  template <typename P>
  static P packet(const P& a, const P& b) {
    return ei::padd(a, b);
  }
  static Array d(int, const Array& g, const Array&, const Array&, const Array&) { return g; }
};

struct Sub : Op {
  template <typename T>
  static T scalar(T a, T b) {
    if constexpr (std::is_integral_v<T>) {
      return static_cast<T>(Wrapping<T>(a) - Wrapping<T>(b));
    } else {
      return a - b;
    }
  }
  template <typename C>
  static constexpr bool vec = kVectorizable<C>;
  template <typename P>
  static P packet(const P& a, const P& b) {
    return ei::psub(a, b);
  }
  static Array d(int i, const Array& g, const Array&, const Array&, const Array&) {
    return i == 0 ? g : neg(g);
  }
};

struct Mul : Op {
  template <typename T>
  static T scalar(T a, T b) {
    if constexpr (std::is_integral_v<T>) {
      return static_cast<T>(Wrapping<T>(a) * Wrapping<T>(b));
    } else {
      return a * b;
    }
  }
  template <typename C>
  static constexpr bool vec = kVectorizable<C>;
  template <typename P>
  static P packet(const P& a, const P& b) {
    return ei::pmul(a, b);
  }
  static Array d(int i, const Array& g, const Array& x, const Array& y, const Array&) {
    return g * (i == 0 ? y : x);
  }
};

struct Div : Op {
  template <typename T>
  static T scalar(T a, T b) {
    if constexpr (std::is_integral_v<T>) {
      if (b == 0) return static_cast<T>(-1);
      if constexpr (std::is_signed_v<T>) {
        if (b == -1) return wrap_neg(a);  // MIN / -1 wraps to MIN
      }
      return a / b;
    } else {
      return a / b;
    }
  }
  template <typename C>
  static constexpr bool vec = kVectorizable<C>;
  template <typename P>
  static P packet(const P& a, const P& b) {
    return ei::pdiv(a, b);
  }
  static Array d(int i, const Array& g, const Array& x, const Array& y, const Array&) {
    return i == 0 ? g / y : neg(g) * x / square(y);
  }
};

struct Rem : Op {  // the dividend's sign (C's fmod), as lax.rem
  template <typename T>
  static T scalar(T a, T b) {
    if constexpr (std::is_integral_v<T>) {
      if (b == 0) return a;
      if constexpr (std::is_signed_v<T>) {
        if (b == -1) return 0;
      }
      return a % b;
    } else {
      return std::fmod(a, b);
    }
  }
  static Array d(int i, const Array& g, const Array& x, const Array& y, const Array&) {
    if (i == 0) return g;
    Array q = x / y;  // -round_toward_zero(x / y)
    return neg(g) * (sign(q) * floor(abs(q)));
  }
};

struct Pow : Op {
  template <typename T>
  static T scalar(T a, T b) {
    if constexpr (std::is_integral_v<T>) {
      return int_pow(a, b);
    } else {
      return std::pow(a, b);
    }
  }
  static Array d(int i, const Array& g, const Array& x, const Array& y, const Array& out) {
    if (i == 0) return g * (y * power(x, y - k(1, y)));
    // log(x) * x^y, with x == 0 giving 0 (JAX's _replace_zero) rather than -inf * 0.
    Array safe = where(x == k(0, x), k(1, x), x);
    return g * (log(safe) * out);
  }
};

// lax.max / lax.min: NaN-propagating, -0 < +0 (elementwise_math.h); or / and on bool.
struct Max : Op {
  template <typename T>
  static T scalar(T a, T b) {
    if constexpr (std::is_same_v<T, bool>) {
      return a || b;
    } else if constexpr (std::is_integral_v<T>) {
      return a > b ? a : b;
    } else {
      return max_value(a, b);
    }
  }
  template <typename C>
  static constexpr bool vec = kVectorizable<C>;
  template <typename P>
  static P packet(const P& a, const P& b) {
    return pmax_value(a, b);
  }
  static Array d(int i, const Array& g, const Array& x, const Array& y, const Array& out) {
    return i == 0 ? balanced(g, x, y, out) : balanced(g, y, x, out);
  }
};

struct Min : Op {
  template <typename T>
  static T scalar(T a, T b) {
    if constexpr (std::is_same_v<T, bool>) {
      return a && b;
    } else if constexpr (std::is_integral_v<T>) {
      return a < b ? a : b;
    } else {
      return min_value(a, b);
    }
  }
  template <typename C>
  static constexpr bool vec = kVectorizable<C>;
  template <typename P>
  static P packet(const P& a, const P& b) {
    return pmin_value(a, b);
  }
  static Array d(int i, const Array& g, const Array& x, const Array& y, const Array& out) {
    return i == 0 ? balanced(g, x, y, out) : balanced(g, y, x, out);
  }
};

// Comparisons: IEEE (ne is true on NaN), bool results, derivative zero.
struct Eq : Op {
  template <typename T>
  static bool scalar(T a, T b) {
    return a == b;
  }
};
struct Ne : Op {
  template <typename T>
  static bool scalar(T a, T b) {
    return a != b;
  }
};
struct Lt : Op {
  template <typename T>
  static bool scalar(T a, T b) {
    return a < b;
  }
};
struct Le : Op {
  template <typename T>
  static bool scalar(T a, T b) {
    return a <= b;
  }
};
struct Gt : Op {
  template <typename T>
  static bool scalar(T a, T b) {
    return a > b;
  }
};
struct Ge : Op {
  template <typename T>
  static bool scalar(T a, T b) {
    return a >= b;
  }
};

// Logical on bool, bitwise on integers.
struct And : Op {
  template <typename T>
  static T scalar(T a, T b) {
    if constexpr (std::is_same_v<T, bool>) {
      return a && b;
    } else {
      return static_cast<T>(a & b);
    }
  }
};
struct Or : Op {
  template <typename T>
  static T scalar(T a, T b) {
    if constexpr (std::is_same_v<T, bool>) {
      return a || b;
    } else {
      return static_cast<T>(a | b);
    }
  }
};
struct Xor : Op {
  template <typename T>
  static T scalar(T a, T b) {
    if constexpr (std::is_same_v<T, bool>) {
      return a != b;
    } else {
      return static_cast<T>(a ^ b);
    }
  }
};

struct ShiftLeft : Op {
  template <typename T>
  static T scalar(T a, T b) {
    if (static_cast<Unsigned<T>>(b) >= sizeof(T) * 8) return 0;
    return static_cast<T>(static_cast<Wrapping<T>>(static_cast<Unsigned<T>>(a)) << b);
  }
};
struct ShiftRightLogical : Op {
  template <typename T>
  static T scalar(T a, T b) {
    if (static_cast<Unsigned<T>>(b) >= sizeof(T) * 8) return 0;
    return static_cast<T>(static_cast<Unsigned<T>>(a) >> b);
  }
};

}  // namespace graft::ew

#pragma GCC diagnostic pop
