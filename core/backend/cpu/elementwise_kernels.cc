// CPU kernels of the elementwise family. Float math goes through Eigen's vectorized array
// expressions in parallel chunks; f16/bf16 are widened to f32 block by block and rounded back.
// Integer semantics follow XLA: division by zero gives -1 (x % 0 gives x) instead of trapping,
// shifts by >= the bit width give 0, float -> int conversion saturates and maps NaN to 0.
#include <Eigen/Core>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>
#include <unsupported/Eigen/SpecialFunctions>

#include "core/backend/cpu/elementwise_math.h"
#include "core/backend/cpu/exp_f32.h"
#include "core/backend/cpu/ieee_math.h"
#include "core/backend/cpu/kernel.h"
#include "core/backend/cpu/parallel.h"
#include "core/backend/cpu/xla_math.h"
#include "core/primitives/elementwise.h"

namespace graft::cpu {
namespace {

using P = PrimitiveId;
constexpr int64_t kGrain = 1 << 15;
constexpr int64_t kAlign = 64;    // chunk starts (see parallel_for_aligned)
constexpr int64_t kBlock = 1024;  // f16/bf16 widening block

template <typename T>
using Vec = Eigen::Array<T, Eigen::Dynamic, 1>;
template <typename T>
using Map = Eigen::Map<Vec<T>>;
template <typename T>
using CMap = Eigen::Map<const Vec<T>>;

template <typename T>
constexpr bool is_half_v = std::is_same_v<T, f16> || std::is_same_v<T, bf16>;

// Applies the Eigen expression `f` (of a CMap<U>) to [begin, end) of in -> out, for float
// types U = T, or through f32 blocks for f16/bf16.
template <typename T, typename F>
void map_float(const T* in, T* out, int64_t n, F f) {
  parallel_for_aligned(n, kGrain, kAlign, [&](int64_t b, int64_t e) {
    if constexpr (is_half_v<T>) {
      float tin[kBlock], tout[kBlock];
      for (int64_t s = b; s < e; s += kBlock) {
        int64_t len = std::min(kBlock, e - s);
        for (int64_t i = 0; i < len; ++i) tin[i] = static_cast<float>(in[s + i]);
        Map<float>(tout, len) = f(CMap<float>(tin, len));
        for (int64_t i = 0; i < len; ++i) out[s + i] = T(tout[i]);
      }
    } else {
      Map<T>(out + b, e - b) = f(CMap<T>(in + b, e - b));
    }
  });
}

// Scalar loop for ops that Eigen does not cover (or for integer types).
template <typename T, typename R, typename F>
void map_scalar(const T* in, R* out, int64_t n, F f) {
  parallel_for_aligned(n, kGrain, kAlign, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) out[i] = f(in[i]);
  });
}

template <typename T>
using Compute = std::conditional_t<is_half_v<T>, float, T>;  // type arithmetic happens in

template <typename T>
Compute<T> widen(T v) {
  if constexpr (is_half_v<T>) {
    return static_cast<float>(v);
  } else {
    return v;
  }
}
template <typename T>
T narrow(Compute<T> v) {
  if constexpr (is_half_v<T>) {
    return T(v);
  } else {
    return static_cast<T>(v);
  }
}

// Applies an array function on Compute<T> (f32 for f16 / bf16, widened block by block).
template <typename T>
void map_values(const T* in, T* out, int64_t n,
                void (*fn)(const Compute<T>*, Compute<T>*, int64_t)) {
  parallel_for_aligned(n, kGrain, kAlign, [&](int64_t b, int64_t e) {
    if constexpr (is_half_v<T>) {
      float tmp[kBlock];
      for (int64_t s = b; s < e; s += kBlock) {
        int64_t len = std::min(kBlock, e - s);
        for (int64_t i = 0; i < len; ++i) tmp[i] = static_cast<float>(in[s + i]);
        fn(tmp, tmp, len);
        for (int64_t i = 0; i < len; ++i) out[s + i] = T(tmp[i]);
      }
    } else {
      fn(in + b, out + b, e - b);
    }
  });
}

// Applies an f32 array function (core/backend/cpu/xla_math.h) to f32, f16 or bf16 data;
// for f64, the Eigen expression `f` instead.
template <typename T, typename F>
void map_xla_f32(const T* in, T* out, int64_t n, void (*fn)(const float*, float*, int64_t), F f) {
  if constexpr (std::is_same_v<T, double>) {
    map_float(in, out, n, f);
  } else {
    map_values<T>(in, out, n, fn);
  }
}

template <typename T>
void float_unary(Call& c, const T* x, T* y, int64_t n) {
  switch (c.prim.id()) {
    case P::kExp:
      // Through exp_f32 (exact where the result is subnormal; see exp_f32.h).
      if constexpr (std::is_same_v<T, double>) {
        return map_float(x, y, n, [](const auto& a) { return a.exp(); });
      } else {
        return parallel_for_aligned(n, kGrain, kAlign, [&](int64_t b, int64_t e) {
          if constexpr (std::is_same_v<T, float>) {
            exp_f32(x + b, y + b, e - b);
          } else {
            float tin[kBlock], tout[kBlock];
            for (int64_t s = b; s < e; s += kBlock) {
              int64_t len = std::min(kBlock, e - s);
              for (int64_t i = 0; i < len; ++i) tin[i] = static_cast<float>(x[s + i]);
              exp_f32(tin, tout, len);
              for (int64_t i = 0; i < len; ++i) y[s + i] = T(tout[i]);
            }
          }
        });
      }
    case P::kExpm1:
      return map_float(x, y, n, [](const auto& a) { return a.expm1(); });
    // log, log1p, erf and erf_inv: XLA's own f32 algorithms (f16 / bf16 go through f32, as
    // in XLA), so jax.random's normal / gumbel / truncated_normal match JAX bit for bit.
    case P::kLog:
      return map_xla_f32(x, y, n, xla_log_f32, [](const auto& a) { return a.log(); });
    case P::kLog1p:
      return map_xla_f32(x, y, n, xla_log1p_f32, [](const auto& a) { return a.log1p(); });
    // Correctly rounded, not Eigen's fast-math packet sqrt (see ieee_math.h).
    case P::kSqrt:
      return map_values(x, y, n, &sqrt_values<Compute<T>>);
    case P::kRsqrt:
      return map_values(x, y, n, &rsqrt_values<Compute<T>>);
    case P::kSin:
      return map_float(x, y, n, [](const auto& a) { return a.sin(); });
    case P::kCos:
      return map_float(x, y, n, [](const auto& a) { return a.cos(); });
    case P::kTanh:
      return map_float(x, y, n, [](const auto& a) { return a.tanh(); });
    case P::kLogistic:
      return map_float(x, y, n, [](const auto& a) { return a.logistic(); });
    case P::kErf:
      return map_xla_f32(x, y, n, xla_erf_f32, [](const auto& a) { return a.erf(); });
    case P::kFloor:
      return map_float(x, y, n, [](const auto& a) { return a.floor(); });
    case P::kCeil:
      return map_float(x, y, n, [](const auto& a) { return a.ceil(); });
    case P::kRound:
      return map_float(x, y, n, [](const auto& a) { return a.rint(); });
    case P::kErfInv:
      if constexpr (std::is_same_v<T, double>) {
        return map_scalar(x, y, n, [](T v) { return erf_inv_value(v); });
      } else {
        return map_xla_f32(x, y, n, xla_erf_inv_f32, [](const auto& a) { return a; });
      }
    default:
      break;
  }
  fail(c.prim.name(), "no float kernel");
}

template <typename T>
void unary_kernel_typed(Call& c) {
  const T* x = c.in<T>(0);
  int64_t n = numel(c.out_aval().shape);
  P id = c.prim.id();
  if (id == P::kIsFinite) {
    bool* y = c.out<bool>();
    if constexpr (std::is_floating_point_v<Compute<T>>) {
      return map_scalar(x, y, n, [](T v) { return std::isfinite(widen(v)); });
    }
    return;
  }
  T* y = c.out<T>();
  switch (id) {
    case P::kNeg:
      if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
        using U = std::make_unsigned_t<T>;  // wraps: -INT_MIN == INT_MIN
        return map_scalar(x, y, n, [](T v) { return static_cast<T>(U(0) - U(v)); });
      } else {
        return map_scalar(x, y, n, [](T v) { return narrow<T>(-widen(v)); });
      }
    case P::kAbs:
      return map_scalar(x, y, n, [](T v) {
        auto w = widen(v);
        if constexpr (std::is_unsigned_v<T>) {
          return v;
        } else if constexpr (std::is_integral_v<T>) {
          using U = std::make_unsigned_t<T>;  // wraps: abs(INT_MIN) == INT_MIN
          return w < 0 ? static_cast<T>(U(0) - U(w)) : w;
        } else {
          return narrow<T>(w < 0 ? -w : (w == 0 ? Compute<T>(0) : w));
        }
      });
    case P::kSign:  // floats: sign(+-0) = +-0, sign(NaN) = NaN (ieee_math.h)
      return map_scalar(x, y, n, [](T v) {
        if constexpr (std::is_floating_point_v<Compute<T>>) {
          return narrow<T>(sign_value(widen(v)));
        } else if constexpr (std::is_same_v<T, bool>) {
          return v;
        } else {
          return v > 0 ? T(1) : (v < 0 ? static_cast<T>(-1) : T(0));
        }
      });
    case P::kSquare:
      if constexpr (std::is_same_v<T, bool>) {
        return map_scalar(x, y, n, [](bool v) { return v; });  // v * v
      } else if constexpr (std::is_integral_v<T>) {
        using U = std::make_unsigned_t<T>;
        return map_scalar(x, y, n, [](T v) { return static_cast<T>(U(v) * U(v)); });
      } else {
        return map_scalar(x, y, n, [](T v) { return narrow<T>(widen(v) * widen(v)); });
      }
    case P::kNot:
      if constexpr (std::is_same_v<T, bool>) {
        return map_scalar(x, y, n, [](bool v) { return !v; });
      } else if constexpr (std::is_integral_v<T>) {
        return map_scalar(x, y, n, [](T v) { return static_cast<T>(~v); });
      }
      break;
    default:
      if constexpr (std::is_floating_point_v<Compute<T>>) return float_unary(c, x, y, n);
  }
  fail(c.prim.name(), "no kernel for ", c.in_aval(0).str());
}

void unary_kernel(Call& c) {
  dispatch_dtype(c.in_aval(0).dtype, [&]<typename T>() { unary_kernel_typed<T>(c); });
}

template <typename T, typename R, typename F>
void zip(const T* a, const T* b, R* out, int64_t n, F f) {
  parallel_for_aligned(n, kGrain, kAlign, [&](int64_t s, int64_t e) {
    for (int64_t i = s; i < e; ++i) out[i] = f(a[i], b[i]);
  });
}

template <typename T>
void binary_kernel_typed(Call& c) {
  const T* a = c.in<T>(0);
  const T* b = c.in<T>(1);
  int64_t n = numel(c.out_aval().shape);
  using C = Compute<T>;
  P id = c.prim.id();
  auto cmp = [&](auto f) {
    zip(a, b, c.out<bool>(), n, [&](T x, T y) { return f(widen(x), widen(y)); });
  };
  switch (id) {
    case P::kEq:
      return cmp([](C x, C y) { return x == y; });
    case P::kNe:
      return cmp([](C x, C y) { return x != y; });
    case P::kLt:
      return cmp([](C x, C y) { return x < y; });
    case P::kLe:
      return cmp([](C x, C y) { return x <= y; });
    case P::kGt:
      return cmp([](C x, C y) { return x > y; });
    case P::kGe:
      return cmp([](C x, C y) { return x >= y; });
    default:
      break;
  }
  T* out = c.out<T>();
  auto arith = [&](auto f) {
    zip(a, b, out, n, [&](T x, T y) { return narrow<T>(f(widen(x), widen(y))); });
  };
  if constexpr (std::is_same_v<T, bool>) {
    switch (id) {
      case P::kAnd:
        return zip(a, b, out, n, [](bool x, bool y) { return x && y; });
      case P::kOr:
        return zip(a, b, out, n, [](bool x, bool y) { return x || y; });
      case P::kXor:
        return zip(a, b, out, n, [](bool x, bool y) { return x != y; });
      case P::kMax:
        return zip(a, b, out, n, [](bool x, bool y) { return x || y; });
      case P::kMin:
        return zip(a, b, out, n, [](bool x, bool y) { return x && y; });
      default:
        break;
    }
  } else if constexpr (std::is_floating_point_v<C>) {
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
      // Vectorized paths for the hot arithmetic.
      auto vec = [&](auto f) {
        parallel_for_aligned(n, kGrain, kAlign, [&](int64_t s, int64_t e) {
          Map<T>(out + s, e - s) = f(CMap<T>(a + s, e - s), CMap<T>(b + s, e - s));
        });
      };
      switch (id) {
        case P::kAdd:
          return vec([](const auto& x, const auto& y) { return x + y; });
        case P::kSub:
          return vec([](const auto& x, const auto& y) { return x - y; });
        case P::kMul:
          return vec([](const auto& x, const auto& y) { return x * y; });
        case P::kDiv:
          return vec([](const auto& x, const auto& y) { return x / y; });
        default:
          break;
      }
    }
    switch (id) {
      case P::kAdd:
        return arith([](C x, C y) { return x + y; });
      case P::kSub:
        return arith([](C x, C y) { return x - y; });
      case P::kMul:
        return arith([](C x, C y) { return x * y; });
      case P::kDiv:
        return arith([](C x, C y) { return x / y; });
      case P::kRem:
        return arith([](C x, C y) { return std::fmod(x, y); });
      case P::kPow:
        return arith([](C x, C y) { return std::pow(x, y); });
      // lax.max / lax.min propagate NaN and order -0 below +0 (ieee_math.h).
      case P::kMax:
        return arith([](C x, C y) { return max_value(x, y); });
      case P::kMin:
        return arith([](C x, C y) { return min_value(x, y); });
      default:
        break;
    }
  } else {
    using U = std::make_unsigned_t<T>;
    constexpr int kBits = sizeof(T) * 8;
    switch (id) {
      // Two's-complement wraparound, computed unsigned (signed overflow is UB in C++).
      case P::kAdd:
        return arith([](T x, T y) { return static_cast<T>(U(x) + U(y)); });
      case P::kSub:
        return arith([](T x, T y) { return static_cast<T>(U(x) - U(y)); });
      case P::kMul:
        return arith([](T x, T y) { return static_cast<T>(U(x) * U(y)); });
      case P::kDiv:
        return arith([](T x, T y) -> T {
          if (y == 0) return static_cast<T>(-1);
          if constexpr (std::is_signed_v<T>) {
            if (y == -1) return static_cast<T>(U(0) - U(x));  // MIN / -1 wraps to MIN
          }
          return x / y;
        });
      case P::kRem:
        return arith([](T x, T y) -> T {
          if (y == 0) return x;
          if constexpr (std::is_signed_v<T>) {
            if (y == -1) return 0;
          }
          return x % y;
        });
      case P::kPow:
        return arith([](T x, T y) { return int_pow(x, y); });
      case P::kMax:
        return arith([](T x, T y) { return x > y ? x : y; });
      case P::kMin:
        return arith([](T x, T y) { return x < y ? x : y; });
      case P::kAnd:
        return arith([](T x, T y) { return static_cast<T>(x & y); });
      case P::kOr:
        return arith([](T x, T y) { return static_cast<T>(x | y); });
      case P::kXor:
        return arith([](T x, T y) { return static_cast<T>(x ^ y); });
      case P::kShiftLeft:
        return arith([](T x, T y) -> T {
          if (static_cast<U>(y) >= kBits) return 0;
          return static_cast<T>(static_cast<U>(x) << y);
        });
      case P::kShiftRightLogical:
        return arith([](T x, T y) -> T {
          if (static_cast<U>(y) >= kBits) return 0;
          return static_cast<T>(static_cast<U>(x) >> y);
        });
      default:
        break;
    }
  }
  fail(c.prim.name(), "no kernel for ", c.in_aval(0).str());
}

void binary_kernel(Call& c) {
  dispatch_dtype(c.in_aval(0).dtype, [&]<typename T>() { binary_kernel_typed<T>(c); });
}

void select_kernel(Call& c) {
  const bool* pred = c.in<bool>(0);
  int64_t n = numel(c.out_aval().shape);
  int64_t width = dtype_size(c.out_aval().dtype);
  const char* f = static_cast<const char*>(c.in_raw(1));
  const char* t = static_cast<const char*>(c.in_raw(2));
  char* out = c.out<char>();
  parallel_for_aligned(n, kGrain, kAlign, [&](int64_t s, int64_t e) {
    for (int64_t i = s; i < e; ++i) {
      std::memcpy(out + i * width, (pred[i] ? t : f) + i * width, width);
    }
  });
}

void convert_kernel(Call& c) {
  DType from = c.in_aval(0).dtype, to = c.out_aval().dtype;
  if (from == to) return c.alias(0, 0);
  int64_t n = numel(c.out_aval().shape);
  dispatch_dtype(from, [&]<typename S>() {
    dispatch_dtype(to, [&]<typename D>() {
      map_scalar(c.in<S>(0), c.out<D>(), n, [](S v) { return convert_value<S, D>(v); });
    });
  });
}

void bitcast_kernel(Call& c) { c.alias(0, 0); }

}  // namespace

void register_elementwise_kernels(KernelTable& table) {
  for (P id : {P::kNeg,  P::kAbs,    P::kSign,   P::kExp,  P::kExpm1, P::kLog,      P::kLog1p,
               P::kSqrt, P::kRsqrt,  P::kSquare, P::kSin,  P::kCos,   P::kTanh,     P::kLogistic,
               P::kErf,  P::kErfInv, P::kFloor,  P::kCeil, P::kRound, P::kIsFinite, P::kNot}) {
    table[static_cast<int>(id)] = &unary_kernel;
  }
  for (P id : {P::kAdd, P::kSub, P::kMul, P::kDiv, P::kRem, P::kPow, P::kMax, P::kMin, P::kEq,
               P::kNe, P::kLt, P::kLe, P::kGt, P::kGe, P::kAnd, P::kOr, P::kXor, P::kShiftLeft,
               P::kShiftRightLogical}) {
    table[static_cast<int>(id)] = &binary_kernel;
  }
  table[static_cast<int>(P::kSelectN)] = &select_kernel;
  table[static_cast<int>(P::kConvertElementType)] = &convert_kernel;
  table[static_cast<int>(P::kBitcastConvertType)] = &bitcast_kernel;
  table[static_cast<int>(P::kStopGradient)] = &bitcast_kernel;  // identity: shares the buffer
}

}  // namespace graft::cpu
