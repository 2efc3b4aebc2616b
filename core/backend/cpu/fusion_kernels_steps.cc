// The steps of fused_elementwise's CPU kernel: each primitive on a tile of values. f32 unary
// and binary arithmetic, max/min, exp and tanh run as Eigen packets (AVX2: 8 lanes) with the
// same packet functions as the unfused kernels (exp: exp_f32's algorithm, tanh: Eigen's
// rational approximation), so fused and unfused results agree bit for bit on those elements;
// log, log1p, erf and erf_inv use XLA's exact f32 ports (random numbers depend on them).
#include <Eigen/Core>
#include <cmath>
#include <cstring>
#include <unsupported/Eigen/SpecialFunctions>

#include "core/backend/cpu/elementwise_math.h"
#include "core/backend/cpu/exp_f32.h"
#include "core/backend/cpu/fusion_kernels.h"
#include "core/backend/cpu/ieee_math.h"
#include "core/backend/cpu/xla_math.h"
#include "core/error.h"
#include "core/primitives/elementwise.h"

namespace graft::cpu::fusion {
namespace {

using P = PrimitiveId;
namespace ei = Eigen::internal;
using Pk = ei::packet_traits<float>::type;
constexpr int64_t kLanes = sizeof(Pk) / sizeof(float);

template <typename C>
using CMap = Eigen::Map<const Eigen::Array<C, Eigen::Dynamic, 1>>;
template <typename C>
using Map = Eigen::Map<Eigen::Array<C, Eigen::Dynamic, 1>>;

template <typename F>
int64_t map_packets(const float* x, float* y, int64_t n, F f) {
  int64_t i = 0;
  for (; i + 4 * kLanes <= n; i += 4 * kLanes) {
    Pk v0 = f(ei::ploadu<Pk>(x + i)), v1 = f(ei::ploadu<Pk>(x + i + kLanes));
    Pk v2 = f(ei::ploadu<Pk>(x + i + 2 * kLanes)), v3 = f(ei::ploadu<Pk>(x + i + 3 * kLanes));
    ei::pstoreu(y + i, v0);
    ei::pstoreu(y + i + kLanes, v1);
    ei::pstoreu(y + i + 2 * kLanes, v2);
    ei::pstoreu(y + i + 3 * kLanes, v3);
  }
  for (; i + kLanes <= n; i += kLanes) ei::pstoreu(y + i, f(ei::ploadu<Pk>(x + i)));
  return i;
}

template <typename F>
int64_t zip_packets(const float* a, const float* b, float* y, int64_t n, F f) {
  int64_t i = 0;
  for (; i + 4 * kLanes <= n; i += 4 * kLanes) {
    Pk v0 = f(ei::ploadu<Pk>(a + i), ei::ploadu<Pk>(b + i));
    Pk v1 = f(ei::ploadu<Pk>(a + i + kLanes), ei::ploadu<Pk>(b + i + kLanes));
    Pk v2 = f(ei::ploadu<Pk>(a + i + 2 * kLanes), ei::ploadu<Pk>(b + i + 2 * kLanes));
    Pk v3 = f(ei::ploadu<Pk>(a + i + 3 * kLanes), ei::ploadu<Pk>(b + i + 3 * kLanes));
    ei::pstoreu(y + i, v0);
    ei::pstoreu(y + i + kLanes, v1);
    ei::pstoreu(y + i + 2 * kLanes, v2);
    ei::pstoreu(y + i + 3 * kLanes, v3);
  }
  for (; i + kLanes <= n; i += kLanes) {
    ei::pstoreu(y + i, f(ei::ploadu<Pk>(a + i), ei::ploadu<Pk>(b + i)));
  }
  return i;
}

Pk is_nan(const Pk& x) { return ei::pandnot(ei::ptrue(x), ei::pcmp_eq(x, x)); }

// exp as exp_f32: Eigen's packet exp, with lanes whose result is subnormal (x < -87)
// recomputed in f64.
int64_t exp_packets(const float* x, float* y, int64_t n) {
  const Pk lo = ei::pset1<Pk>(-87.0f);
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    Pk v = ei::ploadu<Pk>(x + i);
    ei::pstoreu(y + i, ei::pexp(v));
    if (ei::predux_any(ei::pcmp_lt(v, lo))) {
      float in[kLanes];
      ei::pstoreu(in, v);
      for (int64_t k = 0; k < kLanes; ++k) {
        if (in[k] < -87.0f) y[i + k] = static_cast<float>(std::exp(static_cast<double>(in[k])));
      }
    }
  }
  return i;
}

// How many leading elements (whole packets) of a unary f32 step were computed; 0 when the
// op has no packet path here.
int64_t unary_f32_packets(P id, const float* x, float* y, int64_t n) {
  switch (id) {
    case P::kNeg:  // flips the sign bit (Eigen's AVX pnegate is 0 - v: +0 for +0)
      return map_packets(x, y, n, [](const Pk& v) { return ei::pxor(v, ei::pset1<Pk>(-0.0f)); });
    case P::kSquare:
      return map_packets(x, y, n, [](const Pk& v) { return ei::pmul(v, v); });
    case P::kExp:
      return exp_packets(x, y, n);
    case P::kTanh:
      return map_packets(x, y, n, [](const Pk& v) { return ei::ptanh(v); });
    default:
      return 0;
  }
}

int64_t binary_f32_packets(P id, const float* a, const float* b, float* y, int64_t n) {
  switch (id) {
    case P::kAdd:
      return zip_packets(a, b, y, n, [](const Pk& u, const Pk& v) { return ei::padd(u, v); });
    case P::kSub:
      return zip_packets(a, b, y, n, [](const Pk& u, const Pk& v) { return ei::psub(u, v); });
    case P::kMul:
      return zip_packets(a, b, y, n, [](const Pk& u, const Pk& v) { return ei::pmul(u, v); });
    case P::kDiv:
      return zip_packets(a, b, y, n, [](const Pk& u, const Pk& v) { return ei::pdiv(u, v); });
    case P::kMax:  // u == v ? u & v : isnan(u) || u > v ? u : v, as max_value
      return zip_packets(a, b, y, n, [](const Pk& u, const Pk& v) {
        Pk r = ei::pselect(ei::por(ei::pcmp_lt(v, u), is_nan(u)), u, v);
        return ei::pselect(ei::pcmp_eq(u, v), ei::pand(u, v), r);
      });
    case P::kMin:  // u == v ? u | v : isnan(u) || u < v ? u : v, as min_value
      return zip_packets(a, b, y, n, [](const Pk& u, const Pk& v) {
        Pk r = ei::pselect(ei::por(ei::pcmp_lt(u, v), is_nan(u)), u, v);
        return ei::pselect(ei::pcmp_eq(u, v), ei::por(u, v), r);
      });
    default:
      return 0;
  }
}

template <typename C>
void unary_float(P id, const C* x, C* y, int64_t n) {
  CMap<C> a(x, n);
  Map<C> o(y, n);
  constexpr bool f32 = std::is_same_v<C, float>;
  switch (id) {
    case P::kNeg:
      o = -a;
      return;
    case P::kAbs:
      o = a.abs();
      return;
    case P::kSign:
      for (int64_t i = 0; i < n; ++i) y[i] = sign_value(x[i]);
      return;
    case P::kSquare:
      o = a * a;
      return;
    case P::kExp:
      if constexpr (f32) {  // the unfused kernel's exp, bit for bit
        exp_f32(x, y, n);
      } else {
        o = a.exp();
      }
      return;
    case P::kExpm1:
      o = a.expm1();
      return;
    case P::kSqrt:  // correctly rounded, as the unfused kernel (ieee_math.h)
      sqrt_values(x, y, n);
      return;
    case P::kRsqrt:
      rsqrt_values(x, y, n);
      return;
    case P::kSin:
      o = a.sin();
      return;
    case P::kCos:
      o = a.cos();
      return;
    case P::kTanh:
      o = a.tanh();
      return;
    case P::kLogistic:
      o = a.logistic();
      return;
    case P::kFloor:
      o = a.floor();
      return;
    case P::kCeil:
      o = a.ceil();
      return;
    case P::kRound:
      o = a.rint();
      return;
    default:
      break;
  }
  // XLA's f32 algorithms, as the unfused kernels use them.
  if constexpr (f32) {
    switch (id) {
      case P::kLog:
        return xla_log_f32(x, y, n);
      case P::kLog1p:
        return xla_log1p_f32(x, y, n);
      case P::kErf:
        return xla_erf_f32(x, y, n);
      case P::kErfInv:
        return xla_erf_inv_f32(x, y, n);
      default:
        break;
    }
  } else {
    switch (id) {
      case P::kLog:
        o = a.log();
        return;
      case P::kLog1p:
        o = a.log1p();
        return;
      case P::kErf:
        o = a.erf();
        return;
      case P::kErfInv:
        for (int64_t i = 0; i < n; ++i) y[i] = erf_inv_value(x[i]);
        return;
      default:
        break;
    }
  }
  fail("fused_elementwise", "no fused kernel for ", kPrimitiveNames[static_cast<int>(id)]);
}

template <typename C>
void compare(P id, const C* a, const C* b, bool* y, int64_t n) {
  switch (id) {
    case P::kEq:
      for (int64_t i = 0; i < n; ++i) y[i] = a[i] == b[i];
      return;
    case P::kNe:
      for (int64_t i = 0; i < n; ++i) y[i] = a[i] != b[i];
      return;
    case P::kLt:
      for (int64_t i = 0; i < n; ++i) y[i] = a[i] < b[i];
      return;
    case P::kLe:
      for (int64_t i = 0; i < n; ++i) y[i] = a[i] <= b[i];
      return;
    case P::kGt:
      for (int64_t i = 0; i < n; ++i) y[i] = a[i] > b[i];
      return;
    case P::kGe:
      for (int64_t i = 0; i < n; ++i) y[i] = a[i] >= b[i];
      return;
    default:
      fail("fused_elementwise", "not a comparison");
  }
}

template <typename C>
void binary_float(P id, const C* x, const C* z, C* y, int64_t n) {
  CMap<C> a(x, n), b(z, n);
  Map<C> o(y, n);
  switch (id) {
    case P::kAdd:
      o = a + b;
      return;
    case P::kSub:
      o = a - b;
      return;
    case P::kMul:
      o = a * b;
      return;
    case P::kDiv:
      o = a / b;
      return;
    case P::kRem:
      for (int64_t i = 0; i < n; ++i) y[i] = std::fmod(x[i], z[i]);
      return;
    case P::kPow:
      for (int64_t i = 0; i < n; ++i) y[i] = std::pow(x[i], z[i]);
      return;
    case P::kMax:  // NaN-propagating, -0 < +0, as lax.max (ieee_math.h)
      for (int64_t i = 0; i < n; ++i) y[i] = max_value(x[i], z[i]);
      return;
    case P::kMin:
      for (int64_t i = 0; i < n; ++i) y[i] = min_value(x[i], z[i]);
      return;
    default:
      fail("fused_elementwise", "no fused kernel for ", kPrimitiveNames[static_cast<int>(id)]);
  }
}

void binary_bool(P id, const bool* a, const bool* b, bool* y, int64_t n) {
  switch (id) {
    case P::kAnd:
    case P::kMin:
      for (int64_t i = 0; i < n; ++i) y[i] = a[i] && b[i];
      return;
    case P::kOr:
    case P::kMax:
      for (int64_t i = 0; i < n; ++i) y[i] = a[i] || b[i];
      return;
    case P::kXor:
      for (int64_t i = 0; i < n; ++i) y[i] = a[i] != b[i];
      return;
    default:
      fail("fused_elementwise", "no fused kernel for bool ", kPrimitiveNames[static_cast<int>(id)]);
  }
}

template <typename S, typename D>
void convert(const S* x, D* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    if constexpr (std::is_same_v<D, bool>) {
      y[i] = x[i] != S(0);
    } else {
      y[i] = static_cast<D>(x[i]);
    }
  }
}

template <typename D>
void convert_from(Kind from, const void* x, D* y, int64_t n) {
  switch (from) {
    case Kind::kF32:
      return convert(static_cast<const float*>(x), y, n);
    case Kind::kF64:
      return convert(static_cast<const double*>(x), y, n);
    case Kind::kBool:
      return convert(static_cast<const bool*>(x), y, n);
  }
}

}  // namespace

bool f32_step_supported(P id, int num_args) {
  if (num_args == 1) {
    switch (id) {  // unary_float's cases
      case P::kNeg:
      case P::kAbs:
      case P::kSign:
      case P::kSquare:
      case P::kExp:
      case P::kExpm1:
      case P::kSqrt:
      case P::kRsqrt:
      case P::kSin:
      case P::kCos:
      case P::kTanh:
      case P::kLogistic:
      case P::kFloor:
      case P::kCeil:
      case P::kRound:
      case P::kLog:
      case P::kLog1p:
      case P::kErf:
      case P::kErfInv:
        return true;
      default:
        return false;
    }
  }
  if (num_args == 2) {
    switch (id) {  // binary_float's cases
      case P::kAdd:
      case P::kSub:
      case P::kMul:
      case P::kDiv:
      case P::kRem:
      case P::kPow:
      case P::kMax:
      case P::kMin:
        return true;
      default:
        return false;
    }
  }
  return false;
}

void run_step_f32(const FusedStep& s, const float* a, const float* b, float* y, int64_t n) {
  // Vectorized f32 paths cover whole packets; the rest (the array's last few elements) goes
  // through the generic code, as the unfused kernels' scalar tails do.
  P id = s.prim->id();
  if (s.args.size() == 1) {
    int64_t done = unary_f32_packets(id, a, y, n);
    if (done < n) unary_float(id, a + done, y + done, n - done);
  } else {
    int64_t done = binary_f32_packets(id, a, b, y, n);
    if (done < n) binary_float(id, a + done, b + done, y + done, n - done);
  }
}

void run_step(const FusedStep& s, const Kind* kinds, void* const* ptr, void* dst, Kind kind,
              int64_t n) {
  P id = s.prim->id();
  auto arg = [&](int i) { return ptr[s.args[i]]; };
  Kind in_kind = kinds[s.args[0]];
  if (kind == Kind::kF32 && in_kind == Kind::kF32) {
    if (s.args.size() == 1 && id != P::kConvertElementType) {
      auto* x = static_cast<const float*>(arg(0));
      return run_step_f32(s, x, nullptr, static_cast<float*>(dst), n);
    }
    if (s.args.size() == 2 && kinds[s.args[1]] == Kind::kF32 &&
        !static_cast<const Binary&>(*s.prim).is_comparison()) {
      return run_step_f32(s, static_cast<const float*>(arg(0)), static_cast<const float*>(arg(1)),
                          static_cast<float*>(dst), n);
    }
  }
  if (id == P::kConvertElementType) {
    switch (kind) {
      case Kind::kF32:
        return convert_from(in_kind, arg(0), static_cast<float*>(dst), n);
      case Kind::kF64:
        return convert_from(in_kind, arg(0), static_cast<double*>(dst), n);
      case Kind::kBool:
        return convert_from(in_kind, arg(0), static_cast<bool*>(dst), n);
    }
  }
  if (id == P::kSelectN) {
    const bool* p = static_cast<const bool*>(arg(0));
    int64_t w = kind == Kind::kF64 ? 8 : (kind == Kind::kF32 ? 4 : 1);
    auto* f = static_cast<const char*>(arg(1));
    auto* t = static_cast<const char*>(arg(2));
    auto* o = static_cast<char*>(dst);
    if (w == 4) {
      auto* fo = reinterpret_cast<float*>(o);
      auto* ff = reinterpret_cast<const float*>(f);
      auto* tt = reinterpret_cast<const float*>(t);
      for (int64_t i = 0; i < n; ++i) fo[i] = p[i] ? tt[i] : ff[i];
    } else {
      for (int64_t i = 0; i < n; ++i) std::memcpy(o + i * w, (p[i] ? t : f) + i * w, w);
    }
    return;
  }
  if (s.args.size() == 1) {
    if (id == P::kIsFinite) {
      auto* y = static_cast<bool*>(dst);
      if (in_kind == Kind::kF64) {
        auto* x = static_cast<const double*>(arg(0));
        for (int64_t i = 0; i < n; ++i) y[i] = std::isfinite(x[i]);
      } else {
        auto* x = static_cast<const float*>(arg(0));
        for (int64_t i = 0; i < n; ++i) y[i] = std::isfinite(x[i]);
      }
      return;
    }
    if (id == P::kNot) {
      auto* x = static_cast<const bool*>(arg(0));
      auto* y = static_cast<bool*>(dst);
      for (int64_t i = 0; i < n; ++i) y[i] = !x[i];
      return;
    }
    if (kind == Kind::kF64) {
      return unary_float(id, static_cast<const double*>(arg(0)), static_cast<double*>(dst), n);
    }
    return unary_float(id, static_cast<const float*>(arg(0)), static_cast<float*>(dst), n);
  }
  if (static_cast<const Binary&>(*s.prim).is_comparison()) {
    auto* y = static_cast<bool*>(dst);
    switch (in_kind) {
      case Kind::kF32:
        return compare(id, static_cast<const float*>(arg(0)), static_cast<const float*>(arg(1)), y,
                       n);
      case Kind::kF64:
        return compare(id, static_cast<const double*>(arg(0)), static_cast<const double*>(arg(1)),
                       y, n);
      case Kind::kBool:
        return compare(id, static_cast<const bool*>(arg(0)), static_cast<const bool*>(arg(1)), y,
                       n);
    }
  }
  switch (kind) {
    case Kind::kF32:
      return binary_float(id, static_cast<const float*>(arg(0)), static_cast<const float*>(arg(1)),
                          static_cast<float*>(dst), n);
    case Kind::kF64:
      return binary_float(id, static_cast<const double*>(arg(0)),
                          static_cast<const double*>(arg(1)), static_cast<double*>(dst), n);
    case Kind::kBool:
      return binary_bool(id, static_cast<const bool*>(arg(0)), static_cast<const bool*>(arg(1)),
                         static_cast<bool*>(dst), n);
  }
}

}  // namespace graft::cpu::fusion
