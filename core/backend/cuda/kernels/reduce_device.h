// Device side of the CUDA reductions (reduce.h; nvcc only): the reducers (what one output
// accumulates) and the three kernels every reduction runs through, for a plan of reduce.h:
//  - rows_kernel: a group of tpo threads (1, 32 or 256) per output and split; contiguous
//    elements are read with 16-byte vector loads, strided ones through their coordinates;
//    the group combines through warp shuffles and shared memory;
//  - cols_kernel: [outer, n, inner] with threads across bx columns and 256 / bx rows,
//    combined over rows in shared memory;
//  - finish_kernel: a warp per output combines its splits' partial results.
// A reducer R has In (the element type read), Acc, identity(), load(x, j) (j: the element's
// index among the output's reduced elements), combine(a, b) (associative and commutative:
// the tree's shape is the GPU's, not the CPU's) and write(out, o, acc).
#pragma once

#ifndef __CUDACC__
#error "reduce_device.h holds CUDA device code: include it from .cu files only"
#endif

#include <cstring>
#include <cuda/std/limits>

#include "core/backend/cuda/kernels/elementwise_device.h"
#include "core/backend/cuda/kernels/reduce.h"
#include "core/error.h"

namespace graft::cuda::red {

enum class Op { kSum, kProd, kMax, kMin, kAnd, kOr };

template <typename C>
__device__ __forceinline__ C lowest_value() {
  if constexpr (std::is_floating_point_v<C>)
    return -::cuda::std::numeric_limits<C>::infinity();
  else
    return ::cuda::std::numeric_limits<C>::lowest();
}
template <typename C>
__device__ __forceinline__ C highest_value() {
  if constexpr (std::is_floating_point_v<C>)
    return ::cuda::std::numeric_limits<C>::infinity();
  else
    return ::cuda::std::numeric_limits<C>::max();
}

// reduce_{sum,prod,max,min,and,or} over storage type T (signed sums / products arrive as the
// unsigned type of the same width, bool as u8: the same bits, wrapping arithmetic).
template <Op kOp, typename T>
struct ValueR {
  using In = T;
  using Acc = ew::compute_t<T>;
  __device__ Acc identity() const {
    if constexpr (kOp == Op::kSum || kOp == Op::kOr)
      return Acc(0);
    else if constexpr (kOp == Op::kProd)
      return Acc(1);
    else if constexpr (kOp == Op::kAnd)
      return static_cast<Acc>(~Acc(0));
    else if constexpr (kOp == Op::kMax)
      return lowest_value<Acc>();
    else {
      static_assert(kOp == Op::kMin, "ValueR::identity: an Op without its identity");
      return highest_value<Acc>();
    }
  }
  __device__ Acc load(In v, int64_t) const { return ew::widen(v); }
  __device__ Acc combine(Acc a, Acc b) const {
    if constexpr (kOp == Op::kSum)
      return static_cast<Acc>(a + b);
    else if constexpr (kOp == Op::kProd)
      return static_cast<Acc>(a * b);
    else if constexpr (kOp == Op::kMax)
      return (a >= b || a != a) ? a : b;  // NaN sticks
    else if constexpr (kOp == Op::kMin)
      return (a <= b || a != a) ? a : b;
    else if constexpr (kOp == Op::kAnd)
      return static_cast<Acc>(a & b);
    else {
      static_assert(kOp == Op::kOr, "ValueR::combine: an Op without its combination");
      return static_cast<Acc>(a | b);
    }
  }
  __device__ void write(void* out, int64_t o, Acc a) const {
    static_cast<T*>(out)[o] = ew::narrow<T>(a);
  }
};

// argmax / argmin: (value, index); the extreme wins, a NaN beats every number, equal values
// (or two NaNs) go to the smaller index: a total order, so any combining tree gives the CPU's
// answer (the first occurrence).
template <typename V>
struct alignas(8) ArgAcc {
  V v;
  int64_t i;
};

template <bool kMax, typename T>
struct ArgR {
  using In = T;
  using V = ew::compute_t<T>;
  using Acc = ArgAcc<V>;
  bool index64;
  __device__ static bool better(V v, V best) {
    const bool beats = kMax ? v > best : v < best;
    if constexpr (std::is_floating_point_v<V>)
      return best == best && (v != v || beats);
    else
      return beats;
  }
  __device__ Acc identity() const {
    return {kMax ? lowest_value<V>() : highest_value<V>(),
            ::cuda::std::numeric_limits<int64_t>::max()};
  }
  __device__ Acc load(In x, int64_t j) const { return {ew::widen(x), j}; }
  __device__ Acc combine(Acc a, Acc b) const {
    if (better(b.v, a.v)) return b;
    if (better(a.v, b.v)) return a;
    return b.i < a.i ? b : a;
  }
  __device__ void write(void* out, int64_t o, Acc a) const {
    if (index64) {
      static_cast<int64_t*>(out)[o] = a.i;
    } else {
      static_cast<int32_t*>(out)[o] = static_cast<int32_t>(a.i);
    }
  }
};

// __shfl_xor_sync of any trivially copyable value, 32 bits at a time.
template <typename A>
__device__ __forceinline__ A shfl_xor(A v, int mask) {
  constexpr int kWords = (sizeof(A) + 3) / 4;
  uint32_t w[kWords] = {};
  memcpy(w, &v, sizeof(A));
#pragma unroll
  for (int k = 0; k < kWords; ++k) w[k] = __shfl_xor_sync(0xffffffffu, w[k], mask);
  A r;
  memcpy(&r, w, sizeof(A));
  return r;
}

template <typename R, typename Acc>
__device__ __forceinline__ Acc warp_reduce(const R& r, Acc acc) {
#pragma unroll
  for (int m = 16; m > 0; m >>= 1) acc = r.combine(acc, shfl_xor(acc, m));
  return acc;
}

// Combines the accumulators of each group of tpo threads; the result is valid in the group's
// first thread (in every lane for tpo 32). All threads of the block call it.
template <typename R, typename Acc>
__device__ __forceinline__ Acc group_reduce(const R& r, Acc acc, int tpo, Acc* smem) {
  if (tpo == 1) return acc;
  acc = warp_reduce(r, acc);
  if (tpo == 32) return acc;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (lane == 0) smem[warp] = acc;
  __syncthreads();
  if (warp == 0) {
    acc = lane < ew::kThreads / 32 ? smem[lane] : r.identity();
    acc = warp_reduce(r, acc);
  }
  __syncthreads();  // smem is reused by the next group
  return acc;
}

__device__ __forceinline__ int64_t imin(int64_t a, int64_t b) { return a < b ? a : b; }

// First element of split s of n elements cut into `splits` nearly equal parts.
__device__ __forceinline__ int64_t split_begin(int64_t n, int64_t s, int64_t splits) {
  return (n / splits) * s + imin(s, n % splits);
}

template <typename R, typename Acc = typename R::Acc, typename In = typename R::In>
__device__ __forceinline__ Acc fold_contiguous(const R& r, const In* row, int64_t j0, int64_t j1,
                                               int lane, int tpo, Acc acc) {
  constexpr int V = 16 / sizeof(In);
  const uintptr_t addr = reinterpret_cast<uintptr_t>(row + j0);
  const int64_t head = imin(static_cast<int64_t>(((16 - addr % 16) % 16) / sizeof(In)), j1 - j0);
  const int64_t ja = j0 + head, packs = (j1 - ja) / V, jb = ja + packs * V;
  for (int64_t j = j0 + lane; j < ja; j += tpo) acc = r.combine(acc, r.load(row[j], j));
  const auto* pk = reinterpret_cast<const ew::Pack<In, V>*>(row + ja);
#pragma unroll 2
  for (int64_t q = lane; q < packs; q += tpo) {
    const ew::Pack<In, V> v = pk[q];
#pragma unroll
    for (int k = 0; k < V; ++k) acc = r.combine(acc, r.load(v.v[k], ja + q * V + k));
  }
  for (int64_t j = jb + lane; j < j1; j += tpo) acc = r.combine(acc, r.load(row[j], j));
  return acc;
}

template <typename R, typename Acc = typename R::Acc, typename In = typename R::In>
__device__ __forceinline__ Acc fold_strided(const R& r, const In* x, const ReducePlan& p, int64_t o,
                                            int64_t j0, int64_t j1, int lane, int tpo, Acc acc) {
  int64_t base = 0;
  for (int d = p.kept_nd - 1; d >= 0; --d) {
    base += (o % p.kept_size[d]) * p.kept_stride[d];
    o /= p.kept_size[d];
  }
  for (int64_t j = j0 + lane; j < j1; j += tpo) {
    int64_t off = base, rest = j;
    for (int d = p.red_nd - 1; d >= 0; --d) {
      off += (rest % p.red_size[d]) * p.red_stride[d];
      rest /= p.red_size[d];
    }
    acc = r.combine(acc, r.load(x[off], j));
  }
  return acc;
}

template <typename R>
__global__ void __launch_bounds__(ew::kThreads)
    rows_kernel(R r, ReducePlan p, const typename R::In* x, void* out, typename R::Acc* partial) {
  using Acc = typename R::Acc;
  __shared__ Acc smem[ew::kThreads / 32];  // Acc is trivially constructible
  const int tpo = p.tpo, gpb = ew::kThreads / tpo, lane = threadIdx.x % tpo;
  const int64_t groups = p.n_out * p.splits;
  for (int64_t gb = blockIdx.x; gb * gpb < groups; gb += gridDim.x) {  // uniform per block
    const int64_t g = gb * gpb + threadIdx.x / tpo;
    Acc acc = r.identity();
    if (g < groups) {
      const int64_t o = g / p.splits, s = g % p.splits;
      const int64_t j0 = split_begin(p.n, s, p.splits), j1 = split_begin(p.n, s + 1, p.splits);
      acc = p.contiguous ? fold_contiguous(r, x + o * p.n, j0, j1, lane, tpo, acc)
                         : fold_strided(r, x, p, o, j0, j1, lane, tpo, acc);
    }
    acc = group_reduce(r, acc, tpo, smem);
    if (g < groups && lane == 0) {
      if (p.splits == 1) {
        r.write(out, g, acc);
      } else {
        partial[g] = acc;  // [output][split]
      }
    }
  }
}

template <typename R>
__global__ void __launch_bounds__(ew::kThreads)
    cols_kernel(R r, ReducePlan p, const typename R::In* x, void* out, typename R::Acc* partial) {
  using Acc = typename R::Acc;
  __shared__ Acc smem[ew::kThreads];
  const int bx = p.bx, by = ew::kThreads / bx;
  const int tx = threadIdx.x % bx, ty = threadIdx.x / bx;
  const int64_t tiles = (p.inner + bx - 1) / bx;
  const int64_t groups = p.outer * tiles * p.splits;
  for (int64_t g = blockIdx.x; g < groups; g += gridDim.x) {
    const int64_t s = g % p.splits, rest = g / p.splits;
    const int64_t o = rest / tiles, c = (rest % tiles) * bx + tx;
    const int64_t r0 = split_begin(p.n, s, p.splits), r1 = split_begin(p.n, s + 1, p.splits);
    Acc acc = r.identity();
    if (c < p.inner) {
      const typename R::In* col = x + o * p.n * p.inner + c;
#pragma unroll 4
      for (int64_t row = r0 + ty; row < r1; row += by) {
        acc = r.combine(acc, r.load(col[row * p.inner], row));
      }
    }
    smem[threadIdx.x] = acc;
    __syncthreads();
    for (int h = by / 2; h > 0; h /= 2) {
      if (ty < h) smem[threadIdx.x] = r.combine(smem[threadIdx.x], smem[threadIdx.x + h * bx]);
      __syncthreads();
    }
    if (ty == 0 && c < p.inner) {
      const int64_t idx = o * p.inner + c;
      if (p.splits == 1) {
        r.write(out, idx, smem[tx]);
      } else {
        partial[idx * p.splits + s] = smem[tx];
      }
    }
    __syncthreads();  // smem is reused by the next group
  }
}

template <typename R>
__global__ void __launch_bounds__(ew::kThreads)
    finish_kernel(R r, int64_t n_out, int64_t splits, const typename R::Acc* partial, void* out) {
  using Acc = typename R::Acc;
  const int lane = threadIdx.x % 32;
  const int64_t warps = static_cast<int64_t>(gridDim.x) * (ew::kThreads / 32);
  for (int64_t o = blockIdx.x * (ew::kThreads / 32) + threadIdx.x / 32; o < n_out; o += warps) {
    Acc acc = r.identity();
    for (int64_t s = lane; s < splits; s += 32) acc = r.combine(acc, partial[o * splits + s]);
    acc = warp_reduce(r, acc);
    if (lane == 0) r.write(out, o, acc);
  }
}

inline int grid_for(int64_t blocks) {
  return static_cast<int>(std::clamp<int64_t>(blocks, 1, int64_t{1} << 20));
}

// Runs a kRows / kCols plan with reducer r (host side).
template <typename R>
void run(const R& r, const ReducePlan& p, const void* xv, void* out, void* scratch,
         cudaStream_t stream) {
  using Acc = typename R::Acc;
  if (p.acc_bytes != static_cast<int>(sizeof(Acc))) {
    graft::fail("reduce", "plan made for ", p.acc_bytes, "-byte partials, the kernel has ",
                sizeof(Acc));
  }
  if (p.splits > 1 && scratch == nullptr) graft::fail("reduce", "the plan needs scratch memory");
  const auto* x = static_cast<const typename R::In*>(xv);
  Acc* partial = p.splits > 1 ? static_cast<Acc*>(scratch) : nullptr;
  const int64_t groups = p.n_out * p.splits;
  if (p.kind == ReducePlan::Kind::kRows) {
    const int64_t gpb = ew::kThreads / p.tpo;
    rows_kernel<<<grid_for((groups + gpb - 1) / gpb), ew::kThreads, 0, stream>>>(r, p, x, out,
                                                                                 partial);
  } else {
    const int64_t tiles = (p.inner + p.bx - 1) / p.bx;
    cols_kernel<<<grid_for(p.outer * tiles * p.splits), ew::kThreads, 0, stream>>>(r, p, x, out,
                                                                                   partial);
  }
  check(cudaGetLastError(), "reduction kernel launch");
  if (p.splits > 1) {
    finish_kernel<<<grid_for((p.n_out + 7) / 8), ew::kThreads, 0, stream>>>(r, p.n_out, p.splits,
                                                                            partial, out);
    check(cudaGetLastError(), "reduction finishing kernel launch");
  }
}

// reduce_max / min / and / or (reduce_extrema.cu) for kRows / kCols plans.
void launch_extrema(PrimitiveId op, DType dtype, const ReducePlan& plan, const void* x, void* out,
                    void* scratch, cudaStream_t stream);

// Calls fn.template operator()<T>() with the storage type of a max / min / arg operand of
// dtype d (bool as uint8_t); complex dtypes have no kernel (graft::Error).
template <typename Fn>
void dispatch_ordered(DType d, Fn&& fn) {
  dispatch_dtype(d, [&]<typename T>() {
    fn.template operator()<std::conditional_t<std::is_same_v<T, bool>, uint8_t, T>>();
  });
}

}  // namespace graft::cuda::red
