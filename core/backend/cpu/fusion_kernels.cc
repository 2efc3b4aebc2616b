// CPU kernel of fused_elementwise: the element range is split over the thread pool; each
// chunk walks it in tiles of kTile elements, evaluating every step into small per-thread tile
// buffers (f32 for f16/bf16, rounded after each step as the unfused ops round), and writes
// only the group's outputs. f32/f64/bool inputs are read in place and f32/f64/bool outputs are
// written in place, so a chain of ops costs one read of its inputs and one write of its outputs.
#include <Eigen/Core>
#include <cmath>
#include <cstring>
#include <unsupported/Eigen/SpecialFunctions>
#include <vector>

#include "core/backend/cpu/elementwise_math.h"
#include "core/backend/cpu/exp_f32.h"
#include "core/backend/cpu/kernel.h"
#include "core/backend/cpu/parallel.h"
#include "core/backend/cpu/xla_math.h"
#include "core/error.h"
#include "core/primitives/elementwise.h"
#include "core/primitives/fusion.h"

namespace graft::cpu {
namespace {

using P = PrimitiveId;
constexpr int64_t kTile = 2048;        // elements per tile: all slots of a tile stay in L2
constexpr int64_t kGrain = 8 * kTile;  // elements per parallel chunk, at least

template <typename C>
using CMap = Eigen::Map<const Eigen::Array<C, Eigen::Dynamic, 1>>;
template <typename C>
using Map = Eigen::Map<Eigen::Array<C, Eigen::Dynamic, 1>>;

enum class Kind { kF32, kF64, kBool };  // what a slot holds in a tile
Kind kind_of(DType d) {
  return d == DType::kF64 ? Kind::kF64 : (d == DType::kBool ? Kind::kBool : Kind::kF32);
}
bool is_half(DType d) { return d == DType::kF16 || d == DType::kBF16; }

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
      for (int64_t i = 0; i < n; ++i) {
        C w = x[i];
        y[i] = std::isnan(w) ? w : (w > 0 ? C(1) : (w < 0 ? C(-1) : C(0)));
      }
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
    case P::kSqrt:
      o = a.sqrt();
      return;
    case P::kRsqrt:
      o = a.rsqrt();
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
    case P::kMax:  // NaN-propagating, as lax.max
      for (int64_t i = 0; i < n; ++i) y[i] = std::isnan(x[i]) || x[i] > z[i] ? x[i] : z[i];
      return;
    case P::kMin:
      for (int64_t i = 0; i < n; ++i) y[i] = std::isnan(x[i]) || x[i] < z[i] ? x[i] : z[i];
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

// Rounds f32 values as a half type stores them (the unfused op writes that type).
template <typename H>
void round_as(float* v, int64_t n) {
  for (int64_t i = 0; i < n; ++i) v[i] = static_cast<float>(H(v[i]));
}

struct Slot {
  Kind kind;
  DType dtype;
};

// Evaluates step `s` on tile pointers.
void run_step(const FusedStep& s, const std::vector<Slot>& slots, const std::vector<void*>& ptr,
              void* dst, Kind kind, int64_t n) {
  P id = s.prim->id();
  auto arg = [&](int i) { return ptr[s.args[i]]; };
  Kind in_kind = slots[s.args[0]].kind;
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

// Copies (widening f16/bf16) `n` elements of an input into a tile.
void load(DType d, const void* src, void* dst, int64_t n) {
  if (d == DType::kF16) return convert(static_cast<const f16*>(src), static_cast<float*>(dst), n);
  if (d == DType::kBF16) {
    return convert(static_cast<const bf16*>(src), static_cast<float*>(dst), n);
  }
  std::memcpy(dst, src, n * dtype_size(d));
}

// Fills a tile with one (widened) scalar.
void fill_scalar(DType d, const void* src, void* dst, int64_t n) {
  Kind k = kind_of(d);
  int64_t w = k == Kind::kF64 ? 8 : (k == Kind::kBool ? 1 : 4);
  load(d, src, dst, 1);
  for (int64_t i = 1; i < n; ++i) std::memcpy(static_cast<char*>(dst) + i * w, dst, w);
}

void fused_kernel(Call& c) {
  const auto& f = c.params<FusedElementwise>();
  const int n_in = c.num_inputs();
  const std::vector<FusedStep>& steps = f.steps();
  const int n_slots = n_in + static_cast<int>(steps.size());
  const int64_t n = numel(f.shape());
  std::vector<Slot> slots(n_slots);
  for (int i = 0; i < n_in; ++i) slots[i] = {kind_of(c.in_aval(i).dtype), c.in_aval(i).dtype};
  for (size_t k = 0; k < steps.size(); ++k) {
    slots[n_in + k] = {kind_of(steps[k].aval.dtype), steps[k].aval.dtype};
  }
  // Output buffers (allocated here: out_raw is not thread-safe); -1 where a slot is no output.
  std::vector<int> out_of(n_slots, -1);
  std::vector<char*> outs;
  for (size_t o = 0; o < f.outputs().size(); ++o) {
    outs.push_back(static_cast<char*>(c.out_raw(static_cast<int>(o))));
    out_of[f.outputs()[o]] = static_cast<int>(o);
  }
  if (n == 0) return;
  auto is_scalar = [&](int i) { return c.in_aval(i).shape.empty() && !f.shape().empty(); };
  // An input whose buffer an output took over (donation / last use: the kernel runs in place)
  // is copied tile by tile before any step writes that tile of the output.
  std::vector<bool> aliased(n_in, false);
  for (int i = 0; i < n_in; ++i) {
    for (char* o : outs) aliased[i] = aliased[i] || o == c.in_raw(i);
  }
  parallel_for(n, kGrain, [&](int64_t b, int64_t e) {
    // One tile buffer per slot, 8 bytes per element (enough for every kind).
    std::vector<double> scratch(static_cast<size_t>(n_slots) * kTile);
    auto tile = [&](int slot) { return static_cast<void*>(scratch.data() + slot * kTile); };
    std::vector<void*> ptr(n_slots);
    for (int i = 0; i < n_in; ++i) {
      if (is_scalar(i)) fill_scalar(slots[i].dtype, c.in_raw(i), tile(i), kTile);
    }
    for (int64_t s = b; s < e; s += kTile) {
      int64_t len = std::min(kTile, e - s);
      for (int i = 0; i < n_in; ++i) {
        const char* src = static_cast<const char*>(c.in_raw(i));
        int64_t w = dtype_size(slots[i].dtype);
        if (is_scalar(i)) {
          ptr[i] = tile(i);
        } else if (is_half(slots[i].dtype)) {
          load(slots[i].dtype, src + s * w, tile(i), len);
          ptr[i] = tile(i);
        } else if (aliased[i]) {
          std::memcpy(tile(i), src + s * w, static_cast<size_t>(len * w));
          ptr[i] = tile(i);
        } else {
          ptr[i] = const_cast<char*>(src + s * w);
        }
      }
      for (size_t k = 0; k < steps.size(); ++k) {
        int slot = n_in + static_cast<int>(k);
        const Slot& sl = slots[slot];
        int o = out_of[slot];
        void* dst = o >= 0 && !is_half(sl.dtype) ? outs[o] + s * dtype_size(sl.dtype) : tile(slot);
        run_step(steps[k], slots, ptr, dst, sl.kind, len);
        if (sl.dtype == DType::kF16) round_as<f16>(static_cast<float*>(dst), len);
        if (sl.dtype == DType::kBF16) round_as<bf16>(static_cast<float*>(dst), len);
        ptr[slot] = dst;
        if (o >= 0 && is_half(sl.dtype)) {
          const float* v = static_cast<const float*>(dst);
          if (sl.dtype == DType::kF16) {
            convert(v, reinterpret_cast<f16*>(outs[o]) + s, len);
          } else {
            convert(v, reinterpret_cast<bf16*>(outs[o]) + s, len);
          }
        }
      }
    }
  });
}

}  // namespace

void register_fusion_kernels(KernelTable& table) {
  table[static_cast<int>(P::kFusedElementwise)] = &fused_kernel;
}

}  // namespace graft::cpu
