// scatter (set), scatter_mul, scatter_min and scatter_max on the GPU (index_launch.h). Row
// kernels as gather / scatter_add's (index_gather.cu): each thread row looks up its index once.
//   - set is deterministic, as the CPU's: the last update (in row order) to a target row wins.
//     A first pass takes the atomicMax of (row + 1) per target row into the scratch words, a
//     second copies the rows that won.
//   - mul / min / max update each element with a compare-and-swap loop on the aligned word
//     holding it (4 or 8 bytes; 1- and 2-byte elements share their 4-byte word), computing in
//     f32 for f16 / bf16 (rounded at every update, so a product of several duplicates may
//     differ from the CPU's in the last bit); integer products wrap; min / max propagate NaN.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstring>

#include "core/backend/cuda/kernels/index_device.h"
#include "core/backend/cuda/kernels/index_launch.h"
#include "core/backend/cuda/runtime/check.h"
#include "core/error.h"

namespace graft::cuda {
namespace {

using namespace index_detail;

// ----------------------------------------------------------------------- set (last wins)

template <typename I>
__global__ void __launch_bounds__(kThreads)
    pick_last_kernel(RowArgs a, unsigned long long* winner, I rows) {
  const I step = static_cast<I>(gridDim.x) * blockDim.x;
  for (I r = static_cast<I>(blockIdx.x) * blockDim.x + threadIdx.x; r < rows; r += step) {
    const Row<I> row(a, r);
    const int64_t k = wrap_index(row.raw, a.n);
    if (k >= 0) atomicMax(winner + static_cast<int64_t>(row.bp) * a.n + k, r + 1ull);
  }
}

template <typename W, typename I>
__global__ void __launch_bounds__(kThreads)
    copy_winners_kernel(RowArgs a, const unsigned long long* winner, const W* upd, W* out, I rows) {
  const I step = static_cast<I>(gridDim.x) * blockDim.y;
  for (I r = static_cast<I>(blockIdx.x) * blockDim.y + threadIdx.y; r < rows; r += step) {
    const Row<I> row(a, r);
    const int64_t k = wrap_index(row.raw, a.n);
    if (k < 0) continue;
    const int64_t target = static_cast<int64_t>(row.bp) * a.n + k;
    if (winner[target] != static_cast<unsigned long long>(r) + 1) continue;
    W* o = out + target * a.s;
    const W* u = upd + static_cast<int64_t>(r) * a.s;
    for (int64_t s = threadIdx.x; s < a.s; s += blockDim.x) o[s] = u[s];
  }
}

// ------------------------------------------------------------------------ mul / min / max

// Per dtype: the stored type S, the type C combined in, and the conversions.
template <DType D>
struct Elem;
#define GRAFT_PLAIN_ELEM(D, T)                               \
  template <>                                                \
  struct Elem<D> {                                           \
    using S = T;                                             \
    using C = T;                                             \
    __device__ static C load(S v) { return v; }              \
    __device__ static S store(C v) { return v; }             \
  };
GRAFT_PLAIN_ELEM(DType::kF32, float)
GRAFT_PLAIN_ELEM(DType::kF64, double)
GRAFT_PLAIN_ELEM(DType::kI32, int32_t)
GRAFT_PLAIN_ELEM(DType::kU32, uint32_t)
GRAFT_PLAIN_ELEM(DType::kI64, int64_t)
GRAFT_PLAIN_ELEM(DType::kU8, uint8_t)
#undef GRAFT_PLAIN_ELEM
template <>
struct Elem<DType::kF16> {
  using S = uint16_t;
  using C = float;
  __device__ static C load(S v) { return __half2float(__ushort_as_half(v)); }
  __device__ static S store(C v) { return __half_as_ushort(__float2half_rn(v)); }
};
template <>
struct Elem<DType::kBF16> {
  using S = uint16_t;
  using C = float;
  __device__ static C load(S v) { return __bfloat162float(__ushort_as_bfloat16(v)); }
  __device__ static S store(C v) { return __bfloat16_as_ushort(__float2bfloat16_rn(v)); }
};

template <ScatterCombiner K, typename C>
__device__ C combine(C a, C b) {
  if constexpr (K == ScatterCombiner::kMul) {
    if constexpr (std::is_integral_v<C>) {
      // In unsigned arithmetic (at least 32 bits): wraps instead of overflowing.
      using U = std::make_unsigned_t<C>;
      using W = std::conditional_t<(sizeof(U) < sizeof(unsigned)), unsigned, U>;
      return static_cast<C>(static_cast<U>(static_cast<W>(static_cast<U>(a)) *
                                           static_cast<W>(static_cast<U>(b))));
    } else {
      return a * b;
    }
  } else {
    if constexpr (!std::is_integral_v<C>) {
      if (b != b) return b;  // NaN wins; a NaN already there stays
    }
    return (K == ScatterCombiner::kMin ? b < a : a < b) ? b : a;
  }
}

// *p = combine(*p, v) atomically: a compare-and-swap loop on the aligned word holding *p.
template <ScatterCombiner K, DType D>
__device__ void atomic_combine(typename Elem<D>::S* p, typename Elem<D>::C v) {
  using E = Elem<D>;
  using S = typename E::S;
  if constexpr (sizeof(S) == 8) {
    auto* w = reinterpret_cast<unsigned long long*>(p);
    unsigned long long old = *w, assumed;
    do {
      assumed = old;
      S cur;
      memcpy(&cur, &assumed, 8);
      const S next = E::store(combine<K>(E::load(cur), v));
      unsigned long long bits;
      memcpy(&bits, &next, 8);
      if (bits == assumed) return;
      old = atomicCAS(w, assumed, bits);
    } while (assumed != old);
  } else {
    // 4-byte elements are their word; 1- and 2-byte ones sit in it at `shift`.
    const uintptr_t addr = reinterpret_cast<uintptr_t>(p);
    unsigned* w = reinterpret_cast<unsigned*>(addr & ~uintptr_t{3});
    const unsigned shift = static_cast<unsigned>(addr & 3) * 8;
    const unsigned mask = sizeof(S) == 4 ? 0xffffffffu : ((1u << (8 * sizeof(S))) - 1) << shift;
    unsigned old = *w, assumed;
    do {
      assumed = old;
      const unsigned cur_bits = (assumed & mask) >> shift;
      S cur;
      memcpy(&cur, &cur_bits, sizeof(S));  // little endian: the low bytes
      const S next = E::store(combine<K>(E::load(cur), v));
      unsigned next_bits = 0;
      memcpy(&next_bits, &next, sizeof(S));
      const unsigned word = (assumed & ~mask) | ((next_bits << shift) & mask);
      if (word == assumed) return;
      old = atomicCAS(w, assumed, word);
    } while (assumed != old);
  }
}

template <ScatterCombiner K, DType D, typename I>
__global__ void __launch_bounds__(kThreads)
    combine_kernel(RowArgs a, const typename Elem<D>::S* upd, typename Elem<D>::S* out, I rows) {
  const I step = static_cast<I>(gridDim.x) * blockDim.y;
  for (I r = static_cast<I>(blockIdx.x) * blockDim.y + threadIdx.y; r < rows; r += step) {
    const Row<I> row(a, r);
    const int64_t k = wrap_index(row.raw, a.n);
    if (k < 0) continue;  // dropped
    typename Elem<D>::S* o = out + (static_cast<int64_t>(row.bp) * a.n + k) * a.s;
    const typename Elem<D>::S* u = upd + static_cast<int64_t>(r) * a.s;
    for (int64_t s = threadIdx.x; s < a.s; s += blockDim.x) {
      atomic_combine<K, D>(o + s, Elem<D>::load(u[s]));
    }
  }
}

// Runs kernel<I> over `rows` rows with row geometry, I 32-bit when the rows allow.
template <typename Launch>
void over_rows(int64_t rows, int64_t s, Launch&& launch) {
  const int x = row_threads(s);
  const dim3 block(x, kThreads / x);
  const int blocks = row_blocks(rows, kThreads / x);
  if (rows < (int64_t{1} << 31)) {
    launch(blocks, block, static_cast<uint32_t>(rows));
  } else {
    launch(blocks, block, rows);
  }
}

template <ScatterCombiner K, DType D>
void combine_typed(const RowArgs& a, int64_t rows, const void* updates, void* out,
                   cudaStream_t stream) {
  using S = typename Elem<D>::S;
  over_rows(rows, a.s, [&](int blocks, dim3 block, auto n) {
    combine_kernel<K, D, decltype(n)><<<blocks, block, 0, stream>>>(
        a, static_cast<const S*>(updates), static_cast<S*>(out), n);
  });
  check(cudaGetLastError(), "scatter combine kernel");
}

template <ScatterCombiner K>
void combine_dtype(DType dtype, const RowArgs& a, int64_t rows, const void* updates, void* out,
                   cudaStream_t stream) {
  switch (dtype) {
    case DType::kF32:
      return combine_typed<K, DType::kF32>(a, rows, updates, out, stream);
    case DType::kF64:
      return combine_typed<K, DType::kF64>(a, rows, updates, out, stream);
    case DType::kF16:
      return combine_typed<K, DType::kF16>(a, rows, updates, out, stream);
    case DType::kBF16:
      return combine_typed<K, DType::kBF16>(a, rows, updates, out, stream);
    case DType::kI32:
      return combine_typed<K, DType::kI32>(a, rows, updates, out, stream);
    case DType::kU32:
      return combine_typed<K, DType::kU32>(a, rows, updates, out, stream);
    case DType::kI64:
      return combine_typed<K, DType::kI64>(a, rows, updates, out, stream);
    case DType::kU8:
      return combine_typed<K, DType::kU8>(a, rows, updates, out, stream);
    default:
      graft::fail("scatter", "needs a numeric dtype for mul / min / max, got ", dtype_name(dtype));
  }
}

template <typename W>
void copy_winners(const RowArgs& a, int64_t rows, const unsigned long long* winner,
                  const void* updates, void* out, cudaStream_t stream) {
  over_rows(rows, a.s, [&](int blocks, dim3 block, auto n) {
    copy_winners_kernel<W, decltype(n)><<<blocks, block, 0, stream>>>(
        a, winner, static_cast<const W*>(updates), static_cast<W*>(out), n);
  });
  check(cudaGetLastError(), "scatter copy kernel");
}

}  // namespace

size_t scatter_combine_scratch_bytes(ScatterCombiner c, const IndexLayout& l) {
  return c == ScatterCombiner::kSet ? static_cast<size_t>(l.b * l.p * l.n) * 8 : 0;
}

void launch_scatter_combine(ScatterCombiner c, DType dtype, DType index_dtype,
                            const IndexLayout& l, const void* operand, const void* indices,
                            const void* updates, void* out, void* scratch, cudaStream_t stream) {
  check_index_dtype("scatter", index_dtype);
  const int64_t total = l.b * l.p * l.n * l.s;
  if (total == 0) return;
  if (out != operand) {
    check(cudaMemcpyAsync(out, operand, static_cast<size_t>(total) * dtype_size(dtype),
                          cudaMemcpyDeviceToDevice, stream),
          "cudaMemcpyAsync (scatter)");
  }
  const int64_t rows = l.b * l.p * l.i;
  if (rows == 0 || l.s == 0) return;
  const RowArgs a{l.p, l.n, l.s, l.i, indices, index_dtype};
  switch (c) {
    case ScatterCombiner::kSet: {
      if (scratch == nullptr) graft::fail("scatter", "needs its scratch words");
      auto* winner = static_cast<unsigned long long*>(scratch);
      check(cudaMemsetAsync(winner, 0, scatter_combine_scratch_bytes(c, l), stream),
            "cudaMemsetAsync (scatter)");
      const int blocks = row_blocks(rows, kThreads);
      if (rows < (int64_t{1} << 31)) {
        pick_last_kernel<uint32_t><<<blocks, kThreads, 0, stream>>>(a, winner,
                                                                    static_cast<uint32_t>(rows));
      } else {
        pick_last_kernel<int64_t><<<blocks, kThreads, 0, stream>>>(a, winner, rows);
      }
      check(cudaGetLastError(), "scatter pick kernel");
      switch (dtype_size(dtype)) {
        case 1:
          return copy_winners<uint8_t>(a, rows, winner, updates, out, stream);
        case 2:
          return copy_winners<uint16_t>(a, rows, winner, updates, out, stream);
        case 4:
          return copy_winners<uint32_t>(a, rows, winner, updates, out, stream);
        case 8:
          return copy_winners<uint64_t>(a, rows, winner, updates, out, stream);
        default:  // c128: scatter takes no complex operands (bind() rejects them)
          graft::fail("scatter", "has no CUDA kernel for ", dtype_name(dtype));
      }
    }
    case ScatterCombiner::kMul:
      return combine_dtype<ScatterCombiner::kMul>(dtype, a, rows, updates, out, stream);
    case ScatterCombiner::kMin:
      return combine_dtype<ScatterCombiner::kMin>(dtype, a, rows, updates, out, stream);
    case ScatterCombiner::kMax:
      return combine_dtype<ScatterCombiner::kMax>(dtype, a, rows, updates, out, stream);
  }
}

}  // namespace graft::cuda
