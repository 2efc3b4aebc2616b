// CPU kernels of the elementwise family. Each unary / binary op is its functor
// (core/primitives/elementwise_ops.h) applied chunk by chunk over the thread pool
// (elementwise_loops.h); f16 / bf16 are widened to f32 block by block and rounded back. The
// kernel table's entries for them are generated from core/primitives/list.h.
#include <cstring>
#include <type_traits>

#include "core/backend/cpu/bf16_convert.h"
#include "core/backend/cpu/convert_elements.h"
#include "core/backend/cpu/elementwise_loops.h"
#include "core/backend/cpu/elementwise_math.h"
#include "core/backend/cpu/kernel.h"
#include "core/backend/cpu/parallel.h"
#include "core/primitives/elementwise.h"
#include "core/primitives/elementwise_ops.h"

namespace graft::cpu {
namespace {

using P = PrimitiveId;
constexpr int64_t kGrain = 1 << 15;
constexpr int64_t kAlign = 64;    // chunk starts (see parallel_for_aligned)
constexpr int64_t kBlock = 1024;  // f16/bf16 widening block

template <typename T>
constexpr bool is_half_v = std::is_same_v<T, f16> || std::is_same_v<T, bf16>;

template <typename T>
void widen(const T* x, float* w, int64_t n) {
  if constexpr (std::is_same_v<T, bf16>) {
    widen_bf16(x, w, n);
  } else {
    for (int64_t i = 0; i < n; ++i) w[i] = static_cast<float>(x[i]);
  }
}

template <typename T>
void round_back(const float* w, T* y, int64_t n) {
  if constexpr (std::is_same_v<T, bf16>) {
    round_to_bf16(w, y, n);
  } else {
    for (int64_t i = 0; i < n; ++i) y[i] = T(w[i]);
  }
}

// Op on n values of storage type T into RT (T, or bool for comparisons and is_finite).
template <typename Op, typename T, typename RT>
void unary_chunk(const T* x, RT* y, int64_t n) {
  if constexpr (is_half_v<T>) {
    alignas(64) float in[kBlock];
    alignas(64) float out[kBlock];
    for (int64_t s = 0; s < n; s += kBlock) {
      const int64_t len = std::min(kBlock, n - s);
      widen(x + s, in, len);
      if constexpr (std::is_same_v<RT, bool>) {
        map_unary<Op>(static_cast<const float*>(in), y + s, len);
      } else {
        map_unary<Op>(static_cast<const float*>(in), out, len);
        round_back(out, y + s, len);
      }
    }
  } else {
    map_unary<Op>(x, y, n);
  }
}

template <typename Op, typename T, typename RT>
void binary_chunk(const T* a, const T* b, RT* y, int64_t n) {
  if constexpr (is_half_v<T>) {
    alignas(64) float wa[kBlock];
    alignas(64) float wb[kBlock];
    alignas(64) float out[kBlock];
    for (int64_t s = 0; s < n; s += kBlock) {
      const int64_t len = std::min(kBlock, n - s);
      widen(a + s, wa, len);
      widen(b + s, wb, len);
      if constexpr (std::is_same_v<RT, bool>) {
        map_binary<Op>(static_cast<const float*>(wa), static_cast<const float*>(wb), y + s, len);
      } else {
        map_binary<Op>(static_cast<const float*>(wa), static_cast<const float*>(wb), out, len);
        round_back(out, y + s, len);
      }
    }
  } else {
    map_binary<Op>(a, b, y, n);
  }
}

template <typename R, typename T>
using Storage = std::conditional_t<std::is_same_v<R, bool>, bool, T>;

template <P id>
void unary_kernel(Call& c) {
  using Op = ew::functor_t<id>;
  const int64_t n = numel(c.out_aval().shape);
  dispatch_dtype(c.in_aval(0).dtype, [&]<typename T>() {
    if constexpr (ew::kAccepts<id, T>) {
      using RT = Storage<unary_result_t<Op, ew::Compute<T>>, T>;
      const T* x = c.in<T>(0);
      RT* y = c.out<RT>();
      parallel_for_aligned(n, kGrain, kAlign,
                           [&](int64_t b, int64_t e) { unary_chunk<Op>(x + b, y + b, e - b); });
    } else {
      fail(c.prim.name(), "no kernel for ", c.in_aval(0).str());
    }
  });
}

template <P id>
void binary_kernel(Call& c) {
  using Op = ew::functor_t<id>;
  const int64_t n = numel(c.out_aval().shape);
  dispatch_dtype(c.in_aval(0).dtype, [&]<typename T>() {
    if constexpr (ew::kAccepts<id, T>) {
      using RT = Storage<binary_result_t<Op, ew::Compute<T>>, T>;
      const T* a = c.in<T>(0);
      const T* b = c.in<T>(1);
      RT* y = c.out<RT>();
      parallel_for_aligned(n, kGrain, kAlign, [&](int64_t s, int64_t e) {
        binary_chunk<Op>(a + s, b + s, y + s, e - s);
      });
    } else {
      fail(c.prim.name(), "no kernel for ", c.in_aval(0).str());
    }
  });
}

template <typename T, typename R, typename F>
void map_scalar(const T* in, R* out, int64_t n, F f) {
  parallel_for_aligned(n, kGrain, kAlign, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) out[i] = f(in[i]);
  });
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

// Conversions to or from c64 / c128, as XLA's: a real value becomes (x, 0); a complex value
// converted to a real dtype keeps its real part, to bool is true where either part is nonzero.
void convert_complex(Call& c, DType from, DType to, int64_t n) {
  auto real_to = [&]<typename C>(DType d) {
    dispatch_real_or_float8(d, [&]<typename S>() {
      map_scalar(c.in<S>(0), c.out<C>(), n, [](S v) {
        return C(convert_value<S, typename C::value_type>(v));
      });
    });
  };
  if (!is_complex(from)) {
    return dispatch_complex(to, [&]<typename C>() { real_to.template operator()<C>(from); });
  }
  dispatch_complex(from, [&]<typename C>() {
    using R = typename C::value_type;
    if (is_complex(to)) {
      dispatch_complex(to, [&]<typename D>() {
        map_scalar(c.in<C>(0), c.out<D>(), n, [](C v) { return D(v); });
      });
    } else {
      dispatch_real_or_float8(to, [&]<typename D>() {
        map_scalar(c.in<C>(0), c.out<D>(), n, [](C v) {
          if constexpr (std::is_same_v<D, bool>) {
            return v != C(0);  // true where either part is nonzero (XLA's, NumPy's)
          } else {
            return convert_value<R, D>(v.real());
          }
        });
      });
    }
  });
}

void convert_kernel(Call& c) {
  DType from = c.in_aval(0).dtype, to = c.out_aval().dtype;
  if (from == to) return c.alias(0, 0);
  int64_t n = numel(c.out_aval().shape);
  if (is_complex(from) || is_complex(to)) return convert_complex(c, from, to, n);
  convert_elements(c.in_raw(0), from, c.out_raw(), to, n);
}

void bitcast_kernel(Call& c) { c.alias(0, 0); }

}  // namespace

void register_elementwise_kernels(KernelTable& table) {
#define GRAFT_UNARY_KERNEL(name) table[static_cast<int>(P::k##name)] = &unary_kernel<P::k##name>;
#define GRAFT_BINARY_KERNEL(name) table[static_cast<int>(P::k##name)] = &binary_kernel<P::k##name>;
#define GRAFT_ROW(name, str, family, kind, ...) \
  GRAFT_IF_##kind(GRAFT_UNARY_KERNEL, GRAFT_BINARY_KERNEL, name)
  GRAFT_PRIMITIVES(GRAFT_ROW)
#undef GRAFT_ROW
#undef GRAFT_BINARY_KERNEL
#undef GRAFT_UNARY_KERNEL
  table[static_cast<int>(P::kSelectN)] = &select_kernel;
  table[static_cast<int>(P::kConvertElementType)] = &convert_kernel;
  table[static_cast<int>(P::kBitcastConvertType)] = &bitcast_kernel;
  table[static_cast<int>(P::kStopGradient)] = &bitcast_kernel;  // identity: shares the buffer
}

}  // namespace graft::cpu
