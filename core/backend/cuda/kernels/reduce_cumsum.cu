// launch_cumsum (reduce.h). The operand is an [outer, n, inner] view; a "line" is one
// (outer, inner) pair's n elements, scanned from the front (or the back, reverse). Each line is
// cut into plan.chunks pieces:
//  - inner == 1 (the scanned axis is the last): a block per (line, piece) runs cub::BlockScan
//    over tiles of 1024 elements, carrying the running total from tile to tile;
//  - inner > 1: a thread per (line, piece) walks its rows in order (adjacent threads are
//    adjacent columns, so each row step is one coalesced access).
// With more than one piece, a first pass writes each piece's total to scratch, a small kernel
// turns the totals into each piece's starting carry (an exclusive prefix, in scan order), and
// the second pass scans each piece from its carry. f16 / bf16 accumulate in f32 and each output
// is rounded once; signed integers accumulate as the unsigned type of their width (wrapping).
#include <cub/block/block_scan.cuh>

#include "core/backend/cuda/kernels/elementwise_device.h"
#include "core/backend/cuda/kernels/reduce.h"
#include "core/error.h"

namespace graft::cuda {
namespace {

constexpr int kItems = 4;  // elements per thread per tile
constexpr int kTile = ew::kThreads * kItems;

template <typename A>
struct Plus {
  __device__ A operator()(A a, A b) const { return static_cast<A>(a + b); }
};

__device__ __forceinline__ int64_t piece_begin(int64_t n, int64_t k, int64_t pieces) {
  const int64_t rem = n % pieces;
  return (n / pieces) * k + (k < rem ? k : rem);
}

// kTotals: only each piece's total goes to totals[line * chunks + piece]; otherwise y is written,
// starting from totals[...] (the carries) when there are several pieces.
template <bool kTotals, typename T>
__global__ void __launch_bounds__(ew::kThreads)
    scan_rows_kernel(CumsumPlan p, const T* x, T* y, ew::compute_t<T>* totals) {
  using A = ew::compute_t<T>;
  using Scan = cub::BlockScan<A, ew::kThreads>;
  __shared__ typename Scan::TempStorage temp;
  const int64_t groups = p.outer * p.chunks;
  for (int64_t g = blockIdx.x; g < groups; g += gridDim.x) {
    const int64_t line = g / p.chunks, k = g % p.chunks;
    const T* xl = x + line * p.n;
    T* yl = y + line * p.n;
    const int64_t q0 = piece_begin(p.n, k, p.chunks), q1 = piece_begin(p.n, k + 1, p.chunks);
    A carry = !kTotals && p.chunks > 1 ? totals[g] : A(0);
    for (int64_t t = q0; t < q1; t += kTile) {
      A items[kItems];
#pragma unroll
      for (int i = 0; i < kItems; ++i) {
        const int64_t q = t + threadIdx.x * kItems + i;  // position in scan order
        items[i] = q < q1 ? ew::widen(xl[p.reverse ? p.n - 1 - q : q]) : A(0);
      }
      A aggregate;
      Scan(temp).InclusiveScan(items, items, Plus<A>{}, aggregate);
      if constexpr (!kTotals) {
#pragma unroll
        for (int i = 0; i < kItems; ++i) {
          const int64_t q = t + threadIdx.x * kItems + i;
          if (q < q1)
            yl[p.reverse ? p.n - 1 - q : q] = ew::narrow<T>(static_cast<A>(carry + items[i]));
        }
      }
      carry = static_cast<A>(carry + aggregate);
      __syncthreads();  // temp is reused by the next tile
    }
    if (kTotals && threadIdx.x == 0) totals[g] = carry;
  }
}

template <bool kTotals, typename T>
__global__ void __launch_bounds__(ew::kThreads)
    scan_cols_kernel(CumsumPlan p, const T* x, T* y, ew::compute_t<T>* totals) {
  using A = ew::compute_t<T>;
  const int64_t lines = p.outer * p.inner, work = lines * p.chunks;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t t = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; t < work;
       t += stride) {
    const int64_t k = t / lines, line = t % lines;
    const int64_t o = line / p.inner, c = line % p.inner;
    const int64_t base = o * p.n * p.inner + c;
    const int64_t q0 = piece_begin(p.n, k, p.chunks), q1 = piece_begin(p.n, k + 1, p.chunks);
    const int64_t slot = line * p.chunks + k;
    A acc = !kTotals && p.chunks > 1 ? totals[slot] : A(0);
    for (int64_t q = q0; q < q1; ++q) {
      const int64_t i = base + (p.reverse ? p.n - 1 - q : q) * p.inner;
      acc = static_cast<A>(acc + ew::widen(x[i]));
      if constexpr (!kTotals) y[i] = ew::narrow<T>(acc);
    }
    if (kTotals) totals[slot] = acc;
  }
}

// totals[line][k] -> the sum of pieces before k in scan order (in place).
template <typename A>
__global__ void carries_kernel(int64_t lines, int64_t chunks, A* totals) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t line = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; line < lines;
       line += stride) {
    A run = A(0);
    for (int64_t k = 0; k < chunks; ++k) {
      const A total = totals[line * chunks + k];
      totals[line * chunks + k] = run;
      run = static_cast<A>(run + total);
    }
  }
}

int grid_for(int64_t blocks) {
  return static_cast<int>(std::clamp<int64_t>(blocks, 1, int64_t{1} << 20));
}

template <typename T>
void run_cumsum(const CumsumPlan& p, const void* xv, void* yv, void* scratch, cudaStream_t stream) {
  using A = ew::compute_t<T>;
  if (p.acc_bytes != static_cast<int>(sizeof(A))) graft::fail("cumsum", "plan for another dtype");
  if (p.chunks > 1 && scratch == nullptr) graft::fail("cumsum", "the plan needs scratch memory");
  const T* x = static_cast<const T*>(xv);
  T* y = static_cast<T*>(yv);
  A* totals = static_cast<A*>(scratch);
  const int64_t lines = p.outer * p.inner;
  auto pass = [&](auto totals_only) {
    constexpr bool kTotals = decltype(totals_only)::value;
    if (p.inner == 1) {
      scan_rows_kernel<kTotals, T>
          <<<grid_for(lines * p.chunks), ew::kThreads, 0, stream>>>(p, x, y, totals);
    } else {
      scan_cols_kernel<kTotals, T><<<grid_for((lines * p.chunks + ew::kThreads - 1) / ew::kThreads),
                                     ew::kThreads, 0, stream>>>(p, x, y, totals);
    }
    check(cudaGetLastError(), "cumsum kernel launch");
  };
  if (p.chunks > 1) {
    pass(std::true_type{});
    carries_kernel<A>
        <<<grid_for((lines + ew::kThreads - 1) / ew::kThreads), ew::kThreads, 0, stream>>>(
            lines, p.chunks, totals);
    check(cudaGetLastError(), "cumsum carries kernel launch");
  }
  pass(std::false_type{});
}

}  // namespace

void launch_cumsum(DType dtype, const CumsumPlan& plan, const void* x, void* y, void* scratch,
                   cudaStream_t stream) {
  if (plan.outer * plan.n * plan.inner == 0) return;
  switch (dtype) {
    case DType::kU8:
    case DType::kI8:  // integer sums wrap: computed on the unsigned bits
      return run_cumsum<uint8_t>(plan, x, y, scratch, stream);
    case DType::kU16:
    case DType::kI16:
      return run_cumsum<uint16_t>(plan, x, y, scratch, stream);
    case DType::kU32:
    case DType::kI32:
      return run_cumsum<uint32_t>(plan, x, y, scratch, stream);
    case DType::kI64:
    case DType::kU64:
      return run_cumsum<uint64_t>(plan, x, y, scratch, stream);
    case DType::kF16:
      return run_cumsum<f16>(plan, x, y, scratch, stream);
    case DType::kBF16:
      return run_cumsum<bf16>(plan, x, y, scratch, stream);
    case DType::kF32:
      return run_cumsum<float>(plan, x, y, scratch, stream);
    case DType::kF64:
      return run_cumsum<double>(plan, x, y, scratch, stream);
    case DType::kBool:
      break;
  }
  graft::fail("cumsum", "has no CUDA kernel for ", dtype_name(dtype));
}

}  // namespace graft::cuda
