// CPU kernels of the index family: gather and the scatters (add, set, mul, min, max; sort is
// in sort_kernel.cc).
//
// Both see the operand as (B, P, N, S): B the batch dims, P the dims between the batch dims
// and the axis, N the indexed axis, S the dims after it; the indices as (B, I) and gather's
// output / scatter's updates as (B, P, I, S). A "row" is S contiguous elements.
#include <algorithm>
#include <cstring>
#include <type_traits>
#include <vector>

#if defined(__AVX2__)
#include <immintrin.h>
#endif

#include "core/backend/cpu/fold_row.h"
#include "core/backend/cpu/kernel.h"
#include "core/backend/cpu/parallel.h"
#include "core/primitives/index.h"

namespace graft::cpu {

void sort_kernel(Call& call);  // sort_kernel.cc

namespace {

constexpr int64_t kGrainElems = 16384;

struct Layout {
  int64_t b = 1, p = 1, n = 1, s = 1, i = 1;
};

Layout layout(const Shape& operand, const Shape& indices, int axis, int batch_dims) {
  Layout l;
  for (int d = 0; d < batch_dims; ++d) l.b *= operand[d];
  for (int d = batch_dims; d < axis; ++d) l.p *= operand[d];
  l.n = operand[axis];
  for (size_t d = axis + 1; d < operand.size(); ++d) l.s *= operand[d];
  for (size_t d = batch_dims; d < indices.size(); ++d) l.i *= indices[d];
  return l;
}

// The bits of jnp's default fill value for out-of-range gathers, as an element-sized word.
uint64_t fill_bits(DType d) {
  switch (d) {
    case DType::kBool:
      return 1;
    case DType::kU8:
      return 0xffu;
    case DType::kU16:
      return 0xffffu;
    case DType::kU64:
      return ~0ull;
    case DType::kI8:
      return 0x80u;
    case DType::kI16:
      return 0x8000u;
    case DType::kC64:
    case DType::kC128:
    case DType::kF8E4M3FN:  // gathers of complex / fp8 values are refused at trace time
    case DType::kF8E5M2:
      break;
    case DType::kU32:
      return 0xffffffffu;
    case DType::kI32:
      return 0x80000000u;
    case DType::kI64:
      return 0x8000000000000000ull;
    case DType::kF16:
      return 0x7e00u;
    case DType::kBF16:
      return 0x7fc0u;
    case DType::kF32:
      return 0x7fc00000u;
    case DType::kF64:
      return 0x7ff8000000000000ull;
  }
  return 0;
}

// Reads indices of any index dtype as int64 through a typed callback.
template <typename Fn>
void dispatch_index(DType d, Fn&& fn) {
  dispatch_dtype(d, [&]<typename T>() {
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) fn.template operator()<T>();
  });
}

// Calls fn.template operator()<W>() with an unsigned word type of `bytes` bytes.
template <typename Fn>
void dispatch_width(int64_t bytes, Fn&& fn) {
  switch (bytes) {
    case 1:
      return fn.template operator()<uint8_t>();
    case 2:
      return fn.template operator()<uint16_t>();
    case 4:
      return fn.template operator()<uint32_t>();
    default:
      return fn.template operator()<uint64_t>();
  }
}

// Wraps a negative index once; returns -1 for indices still out of [0, n).
template <typename Idx>
inline int64_t wrap_index(Idx raw, int64_t n) {
  int64_t k = static_cast<int64_t>(raw);
  if (k < 0) k += n;
  return k >= 0 && k < n ? k : -1;
}

// ------------------------------------------------------------------------------ gather

// Copies a row of `bytes` (a multiple of 32) to a 32-byte aligned destination with streaming
// stores: a large gather's output is not read back soon, and skipping the read-for-ownership
// of each destination line brings the gather close to a large memcpy's bandwidth.
inline void stream_row(void* dst, const void* src, int64_t bytes) {
#if defined(__AVX2__)
  auto* d = static_cast<__m256i*>(dst);
  auto* s = static_cast<const __m256i*>(src);
  for (int64_t j = 0; j < bytes / 32; ++j) _mm256_stream_si256(d + j, _mm256_loadu_si256(s + j));
#else
  std::memcpy(dst, src, static_cast<size_t>(bytes));
#endif
}

template <typename Idx, typename W>
void gather_rows(const Layout& l, const Idx* idx, const W* src, W* dst, bool clip, W fill,
                 bool stream, int64_t r0, int64_t r1) {
  const int64_t s = l.s;
  int64_t bp = r0 / l.i, i = r0 % l.i;
  const int64_t pi = l.p * l.i;
  for (int64_t r = r0; r < r1; ++r) {
    const int64_t b = r / pi;
    int64_t k = wrap_index(idx[b * l.i + i], l.n);
    if (k < 0 && clip && l.n > 0) {
      k = static_cast<int64_t>(idx[b * l.i + i]) < 0 ? 0 : l.n - 1;
    }
    W* out = dst + r * s;
    if (k < 0) {
      std::fill(out, out + s, fill);
    } else if (s == 1) {
      *out = src[bp * l.n + k];
    } else if (stream) {
      stream_row(out, src + (bp * l.n + k) * s, s * static_cast<int64_t>(sizeof(W)));
    } else {
      std::memcpy(out, src + (bp * l.n + k) * s, static_cast<size_t>(s) * sizeof(W));
    }
    if (++i == l.i) {
      i = 0;
      ++bp;
    }
  }
#if defined(__AVX2__)
  if (stream) _mm_sfence();  // order the streaming stores before the kernel returns
#endif
}

void gather_kernel(Call& call) {
  const auto& g = call.params<Gather>();
  const Aval& operand = call.in_aval(0);
  const Aval& out = call.out_aval();
  Layout l = layout(operand.shape, call.in_aval(1).shape, g.axis(), g.batch_dims());
  int64_t rows = l.b * l.p * l.i;
  if (rows == 0 || l.s == 0) return;
  bool clip = g.mode() == GatherMode::kClip;
  uint64_t fill = fill_bits(out.dtype);
  void* dst = call.out_raw();
  const void* src = call.in_raw(0);
  const void* idx = call.in_raw(1);
  int64_t grain = std::max<int64_t>(1, kGrainElems / l.s);
  // Stream rows when the output is much larger than the caches and rows are whole 32-byte
  // blocks (the buffer is 64-byte aligned, so every row then is too).
  const int64_t row_bytes = l.s * dtype_size(out.dtype);
  const bool stream = row_bytes % 32 == 0 && rows * row_bytes >= (int64_t{8} << 20);
  dispatch_index(call.in_aval(1).dtype, [&]<typename Idx>() {
    dispatch_width(dtype_size(out.dtype), [&]<typename W>() {
      parallel_for(rows, grain, [&](int64_t r0, int64_t r1) {
        gather_rows<Idx, W>(l, static_cast<const Idx*>(idx), static_cast<const W*>(src),
                            static_cast<W*>(dst), clip, static_cast<W>(fill), stream, r0, r1);
      });
    });
  });
}

// ---------------------------------------------- scatter_add, scatter, scatter_mul / min / max

// How each scatter combines an update into the accumulator, in Acc (f32 for f16/bf16: exact
// for set / min / max, one rounding at the end for add / mul); integer adds and products wrap
// around like XLA's; min / max propagate NaN.
enum class Combiner { kAdd, kSet, kMul, kMin, kMax };

template <Combiner C, typename T, typename Acc>
inline Acc combine(Acc a, T raw) {
  const Acc b = static_cast<Acc>(raw);
  if constexpr (C == Combiner::kSet) {
    return b;
  } else if constexpr (C == Combiner::kAdd || C == Combiner::kMul) {
    if constexpr (std::is_same_v<Acc, bool>) {
      return C == Combiner::kAdd ? (a || b) : (a && b);  // not reached: bool is rejected
    } else if constexpr (std::is_integral_v<Acc>) {
      using U = std::make_unsigned_t<Acc>;
      // Promote u8 / u16 to unsigned int so the product wraps instead of overflowing int.
      using W = std::conditional_t<(sizeof(U) < sizeof(unsigned)), unsigned, U>;
      const W x = static_cast<W>(static_cast<U>(a)), y = static_cast<W>(static_cast<U>(b));
      return static_cast<Acc>(static_cast<U>(C == Combiner::kAdd ? x + y : x * y));
    } else {
      return C == Combiner::kAdd ? a + b : a * b;
    }
  } else {
    if constexpr (!std::is_integral_v<Acc>) {
      if (b != b) return b;  // NaN wins; a NaN already there stays (no comparison is true)
    }
    return (C == Combiner::kMin ? b < a : a < b) ? b : a;
  }
}

// One unit of work: output block bp, elements [s0, s1) of each row, target rows [n0, n1).
// Every unit visits the indices in order, so each output element combines its updates in the
// same order however the work is split: the result is deterministic (set: the last wins).
template <Combiner C, typename T, typename Acc>
void scatter_unit(const Layout& l, const int64_t* idx, const T* upd, Acc* acc, int64_t bp,
                  int64_t s0, int64_t s1, int64_t n0, int64_t n1) {
  const int64_t b = bp / l.p;
  for (int64_t i = 0; i < l.i; ++i) {
    int64_t k = idx[b * l.i + i];
    if (k < n0 || k >= n1) continue;
    fold_row(acc + (bp * l.n + k) * l.s + s0, upd + (bp * l.i + i) * l.s + s0, s1 - s0,
             combine<C, T, Acc>);
  }
}

template <Combiner C, typename T>
void scatter_typed(Call& call, const Layout& l, const std::vector<int64_t>& idx) {
  using Acc = std::conditional_t<std::is_same_v<T, f16> || std::is_same_v<T, bf16>, float, T>;
  const int64_t total = numel(call.out_aval().shape);
  const T* in = call.in<T>(0);
  T* out = call.out<T>();
  std::vector<Acc> wide;
  Acc* acc;
  if constexpr (std::is_same_v<Acc, T>) {
    acc = out;
    parallel_for(total, 1 << 16, [&](int64_t a, int64_t z) {
      std::memcpy(out + a, in + a, static_cast<size_t>(z - a) * sizeof(T));
    });
  } else {
    wide.resize(total);
    acc = wide.data();
    parallel_for(total, kGrainElems, [&](int64_t a, int64_t z) {
      for (int64_t e = a; e < z; ++e) acc[e] = static_cast<float>(in[e]);
    });
  }
  // Split work first over output blocks, then over row elements, then over target rows, until
  // there are enough units for the pool; each unit owns a disjoint part of the output.
  const int64_t blocks = l.b * l.p;
  const bool nothing = blocks == 0 || l.n == 0 || l.i == 0 || l.s == 0;
  const int64_t work = blocks * l.i * l.s;
  const int64_t want = work < 2 * kGrainElems ? 1 : 4 * num_threads();
  int64_t s_parts = 1, n_parts = 1;
  if (!nothing && blocks < want) {
    s_parts = std::clamp<int64_t>(want / blocks, 1, std::max<int64_t>(1, l.s / 64));
    n_parts = std::clamp<int64_t>(want / (blocks * s_parts), 1, l.n);
  }
  const int64_t s_step = (l.s + s_parts - 1) / s_parts;
  const int64_t n_step = (l.n + n_parts - 1) / n_parts;
  const T* upd = call.in<T>(2);
  parallel_for(nothing ? 0 : blocks * s_parts * n_parts, 1, [&](int64_t u0, int64_t u1) {
    for (int64_t u = u0; u < u1; ++u) {
      int64_t bp = u / (s_parts * n_parts);
      int64_t sp = (u / n_parts) % s_parts, np = u % n_parts;
      int64_t s0 = sp * s_step, s1 = std::min(l.s, s0 + s_step);
      int64_t n0 = np * n_step, n1 = std::min(l.n, n0 + n_step);
      if (s0 < s1 && n0 < n1) {
        scatter_unit<C, T, Acc>(l, idx.data(), upd, acc, bp, s0, s1, n0, n1);
      }
    }
  });
  if constexpr (!std::is_same_v<Acc, T>) {
    parallel_for(total, kGrainElems, [&](int64_t a, int64_t z) {
      for (int64_t e = a; e < z; ++e) out[e] = T(acc[e]);
    });
  }
}

template <Combiner C>
void scatter_with(Call& call, int axis, int batch_dims) {
  Layout l = layout(call.in_aval(0).shape, call.in_aval(1).shape, axis, batch_dims);
  // Wrapped indices once, -1 for dropped updates.
  std::vector<int64_t> idx(static_cast<size_t>(l.b * l.i));
  dispatch_index(call.in_aval(1).dtype, [&]<typename Idx>() {
    const Idx* raw = call.in<Idx>(1);
    for (size_t j = 0; j < idx.size(); ++j) idx[j] = wrap_index(raw[j], l.n);
  });
  dispatch_dtype(call.out_aval().dtype, [&]<typename T>() {
    // bool: only scatter (set) takes it (the shape rules reject the others).
    if constexpr (!std::is_same_v<T, bool> || C == Combiner::kSet) {
      scatter_typed<C, T>(call, l, idx);
    }
  });
}

void scatter_add_kernel(Call& call) {
  const auto& sa = call.params<ScatterAdd>();
  scatter_with<Combiner::kAdd>(call, sa.axis(), sa.batch_dims());
}

void scatter_combine_kernel(Call& call) {
  const auto& sc = call.params<ScatterCombine>();
  switch (sc.id()) {
    case PrimitiveId::kScatter:
      return scatter_with<Combiner::kSet>(call, sc.axis(), sc.batch_dims());
    case PrimitiveId::kScatterMul:
      return scatter_with<Combiner::kMul>(call, sc.axis(), sc.batch_dims());
    case PrimitiveId::kScatterMin:
      return scatter_with<Combiner::kMin>(call, sc.axis(), sc.batch_dims());
    default:
      return scatter_with<Combiner::kMax>(call, sc.axis(), sc.batch_dims());
  }
}

}  // namespace

void register_index_kernels(KernelTable& table) {
  table[static_cast<int>(PrimitiveId::kGather)] = &gather_kernel;
  table[static_cast<int>(PrimitiveId::kScatterAdd)] = &scatter_add_kernel;
  table[static_cast<int>(PrimitiveId::kSort)] = &sort_kernel;
  for (PrimitiveId id : {PrimitiveId::kScatter, PrimitiveId::kScatterMul, PrimitiveId::kScatterMin,
                         PrimitiveId::kScatterMax}) {
    table[static_cast<int>(id)] = &scatter_combine_kernel;
  }
}

}  // namespace graft::cpu
