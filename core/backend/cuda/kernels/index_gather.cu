// gather and scatter_add on the GPU (index_launch.h). Both walk output / update rows: a row is
// the S contiguous elements after the axis; each thread row looks up its index once (on the
// device, any index dtype) and moves or adds S elements. gather is a byte copy, instantiated
// per element width (rows are copied in words of up to 16 bytes when S and alignment allow);
// scatter_add adds with atomics, instantiated per dtype.
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

struct alignas(16) W16 {
  uint64_t lo, hi;
};

// ------------------------------------------------------------------------------ gather

template <typename W, typename I>
__global__ void __launch_bounds__(kThreads)
    gather_kernel(RowArgs a, bool clip, W16 fill_pattern, const W* src, W* dst, I rows) {
  W fill;
  memcpy(&fill, &fill_pattern, sizeof(W));
  const I step = static_cast<I>(gridDim.x) * blockDim.y;
  for (I r = static_cast<I>(blockIdx.x) * blockDim.y + threadIdx.y; r < rows; r += step) {
    const Row<I> row(a, r);
    int64_t k = wrap_index(row.raw, a.n);
    if (k < 0 && clip && a.n > 0) k = row.raw < 0 ? 0 : a.n - 1;
    W* o = dst + static_cast<int64_t>(r) * a.s;
    if (k < 0) {
      for (int64_t s = threadIdx.x; s < a.s; s += blockDim.x) o[s] = fill;
    } else {
      const W* in = src + (static_cast<int64_t>(row.bp) * a.n + k) * a.s;
      for (int64_t s = threadIdx.x; s < a.s; s += blockDim.x) o[s] = in[s];
    }
  }
}

// The bits of jnp's fill value for out-of-range gathers (as the CPU's fill_bits).
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
    case DType::kU32:
      return 0xffffffffu;
    case DType::kI32:
      return 0x80000000u;
    case DType::kI64:
      return 0x8000000000000000ull;
    case DType::kC64:
    case DType::kC128:
      break;
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

template <typename W>
void launch_gather_w(RowArgs a, bool clip, W16 fill, const void* src, void* dst, int64_t rows,
                     cudaStream_t stream) {
  const int x = row_threads(a.s);
  const dim3 block(x, kThreads / x);
  const int blocks = row_blocks(rows, kThreads / x);
  if (rows < (int64_t{1} << 31)) {
    gather_kernel<W, uint32_t><<<blocks, block, 0, stream>>>(
        a, clip, fill, static_cast<const W*>(src), static_cast<W*>(dst),
        static_cast<uint32_t>(rows));
  } else {
    gather_kernel<W, int64_t><<<blocks, block, 0, stream>>>(
        a, clip, fill, static_cast<const W*>(src), static_cast<W*>(dst), rows);
  }
  check(cudaGetLastError(), "gather kernel");
}

// ------------------------------------------------------------------------- scatter_add

// Per dtype: the update's storage type U, the accumulator's A, and the atomic add.
template <DType D>
struct Add;
template <>
struct Add<DType::kF32> {
  using U = float;
  using A = float;
  __device__ static void add(A* p, U v) { atomicAdd(p, v); }
};
template <>
struct Add<DType::kF64> {
  using U = double;
  using A = double;
  __device__ static void add(A* p, U v) { atomicAdd(p, v); }
};
template <>
struct Add<DType::kF16> {  // accumulates in f32 (scratch), rounded once at the end
  using U = uint16_t;
  using A = float;
  __device__ static void add(A* p, U v) { atomicAdd(p, __half2float(__ushort_as_half(v))); }
};
template <>
struct Add<DType::kBF16> {
  using U = uint16_t;
  using A = float;
  __device__ static void add(A* p, U v) {
    atomicAdd(p, __bfloat162float(__ushort_as_bfloat16(v)));
  }
};
template <>
struct Add<DType::kI32> {  // two's complement: the hardware add wraps like XLA's
  using U = int32_t;
  using A = int32_t;
  __device__ static void add(A* p, U v) { atomicAdd(reinterpret_cast<int*>(p), v); }
};
template <>
struct Add<DType::kU32> {
  using U = uint32_t;
  using A = uint32_t;
  __device__ static void add(A* p, U v) { atomicAdd(reinterpret_cast<unsigned*>(p), v); }
};
template <>
struct Add<DType::kI64> {
  using U = int64_t;
  using A = int64_t;
  __device__ static void add(A* p, U v) {
    atomicAdd(reinterpret_cast<unsigned long long*>(p), static_cast<unsigned long long>(v));
  }
};
template <>
struct Add<DType::kU64> {
  using U = uint64_t;
  using A = uint64_t;
  __device__ static void add(A* p, U v) {
    atomicAdd(reinterpret_cast<unsigned long long*>(p), static_cast<unsigned long long>(v));
  }
};
// No 8- or 16-bit atomics: compare-and-swap the aligned word holding the element (the sum
// wraps in the element's bits, signed or not).
template <typename T>
struct NarrowAdd {
  using U = T;
  using A = T;
  __device__ static void add(A* p, U v) {
    if (v == 0) return;
    constexpr unsigned kMask = sizeof(T) == 1 ? 0xffu : 0xffffu;
    const uintptr_t addr = reinterpret_cast<uintptr_t>(p);
    unsigned* word = reinterpret_cast<unsigned*>(addr & ~uintptr_t{3});
    const unsigned shift = static_cast<unsigned>(addr & 3) * 8;
    const unsigned add = static_cast<unsigned>(v) & kMask;
    unsigned old = *word, assumed;
    do {
      assumed = old;
      const unsigned part = ((assumed >> shift) + add) & kMask;
      old = atomicCAS(word, assumed, (assumed & ~(kMask << shift)) | (part << shift));
    } while (assumed != old);
  }
};
template <>
struct Add<DType::kU8> : NarrowAdd<uint8_t> {};
template <>
struct Add<DType::kI8> : NarrowAdd<int8_t> {};
template <>
struct Add<DType::kU16> : NarrowAdd<uint16_t> {};
template <>
struct Add<DType::kI16> : NarrowAdd<int16_t> {};

template <DType D, typename I>
__global__ void __launch_bounds__(kThreads)
    scatter_kernel(RowArgs a, const typename Add<D>::U* upd, typename Add<D>::A* acc, I rows) {
  const I step = static_cast<I>(gridDim.x) * blockDim.y;
  for (I r = static_cast<I>(blockIdx.x) * blockDim.y + threadIdx.y; r < rows; r += step) {
    const Row<I> row(a, r);
    const int64_t k = wrap_index(row.raw, a.n);
    if (k < 0) continue;  // dropped
    typename Add<D>::A* o = acc + (static_cast<int64_t>(row.bp) * a.n + k) * a.s;
    const typename Add<D>::U* u = upd + static_cast<int64_t>(r) * a.s;
    for (int64_t s = threadIdx.x; s < a.s; s += blockDim.x) Add<D>::add(o + s, u[s]);
  }
}

// f16/bf16 <-> the f32 accumulator.
template <bool kBF16>
__global__ void __launch_bounds__(kThreads) widen_kernel(const uint16_t* in, float* acc, int64_t n) {
  const int64_t step = int64_t(gridDim.x) * blockDim.x;
  for (int64_t e = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; e < n; e += step) {
    acc[e] = kBF16 ? __bfloat162float(__ushort_as_bfloat16(in[e]))
                   : __half2float(__ushort_as_half(in[e]));
  }
}
template <bool kBF16>
__global__ void __launch_bounds__(kThreads) narrow_kernel(const float* acc, uint16_t* out, int64_t n) {
  const int64_t step = int64_t(gridDim.x) * blockDim.x;
  for (int64_t e = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; e < n; e += step) {
    out[e] = kBF16 ? __bfloat16_as_ushort(__float2bfloat16_rn(acc[e]))
                   : __half_as_ushort(__float2half_rn(acc[e]));
  }
}

int flat_blocks(int64_t n) {
  return static_cast<int>(std::clamp<int64_t>((n + kThreads - 1) / kThreads, 1, kMaxBlocks));
}

template <DType D>
void scatter_typed(const RowArgs& a, int64_t rows, int64_t total, const void* operand,
                   const void* updates, void* out, void* scratch, cudaStream_t stream) {
  using U = typename Add<D>::U;
  using A = typename Add<D>::A;
  constexpr bool kWiden = D == DType::kF16 || D == DType::kBF16;
  A* acc = static_cast<A*>(kWiden ? scratch : out);
  if constexpr (kWiden) {
    if (scratch == nullptr) graft::fail("scatter_add", "f16/bf16 need the f32 scratch buffer");
    widen_kernel<D == DType::kBF16><<<flat_blocks(total), kThreads, 0, stream>>>(
        static_cast<const uint16_t*>(operand), static_cast<float*>(scratch), total);
    check(cudaGetLastError(), "scatter_add widen kernel");
  } else if (out != operand) {
    check(cudaMemcpyAsync(out, operand, static_cast<size_t>(total) * sizeof(A),
                          cudaMemcpyDeviceToDevice, stream),
          "cudaMemcpyAsync (scatter_add)");
  }
  if (rows > 0 && a.s > 0 && a.n > 0) {
    const int x = row_threads(a.s);
    const dim3 block(x, kThreads / x);
    const int blocks = row_blocks(rows, kThreads / x);
    const U* u = static_cast<const U*>(updates);
    if (rows < (int64_t{1} << 31)) {
      scatter_kernel<D, uint32_t><<<blocks, block, 0, stream>>>(a, u, acc,
                                                               static_cast<uint32_t>(rows));
    } else {
      scatter_kernel<D, int64_t><<<blocks, block, 0, stream>>>(a, u, acc, rows);
    }
    check(cudaGetLastError(), "scatter_add kernel");
  }
  if constexpr (kWiden) {
    narrow_kernel<D == DType::kBF16><<<flat_blocks(total), kThreads, 0, stream>>>(
        static_cast<const float*>(scratch), static_cast<uint16_t*>(out), total);
    check(cudaGetLastError(), "scatter_add narrow kernel");
  }
}

}  // namespace

void launch_gather(DType dtype, DType index_dtype, const IndexLayout& l, bool clip,
                   const void* operand, const void* indices, void* out, cudaStream_t stream) {
  check_index_dtype("gather", index_dtype);
  const int64_t rows = l.b * l.p * l.i;
  if (rows == 0 || l.s == 0) return;
  // Copy rows in the widest word (up to 16 bytes) that divides them and both pointers' and
  // rows' alignment; the fill value is repeated across the word.
  int64_t w = dtype_size(dtype), s = l.s;
  const uint64_t bits = fill_bits(dtype);
  while (w < 16 && s % 2 == 0 && reinterpret_cast<uintptr_t>(operand) % (2 * w) == 0 &&
         reinterpret_cast<uintptr_t>(out) % (2 * w) == 0) {
    w *= 2;
    s /= 2;
  }
  W16 fill;
  unsigned char pattern[16];
  const int64_t es = dtype_size(dtype);
  for (int64_t at = 0; at < 16; at += es) std::memcpy(pattern + at, &bits, es);  // little endian
  std::memcpy(&fill, pattern, 16);
  const RowArgs a{l.p, l.n, s, l.i, indices, index_dtype};
  switch (w) {
    case 1:
      return launch_gather_w<uint8_t>(a, clip, fill, operand, out, rows, stream);
    case 2:
      return launch_gather_w<uint16_t>(a, clip, fill, operand, out, rows, stream);
    case 4:
      return launch_gather_w<uint32_t>(a, clip, fill, operand, out, rows, stream);
    case 8:
      return launch_gather_w<uint64_t>(a, clip, fill, operand, out, rows, stream);
    case 16:
      return launch_gather_w<W16>(a, clip, fill, operand, out, rows, stream);
    default:
      graft::fail("gather", "has no CUDA kernel for ", dtype_name(dtype));
  }
}

size_t scatter_add_scratch_bytes(DType dtype, const IndexLayout& l) {
  if (dtype != DType::kF16 && dtype != DType::kBF16) return 0;
  return static_cast<size_t>(l.b * l.p * l.n * l.s) * sizeof(float);
}

void launch_scatter_add(DType dtype, DType index_dtype, const IndexLayout& l,
                        const void* operand, const void* indices, const void* updates,
                        void* out, void* scratch, cudaStream_t stream) {
  check_index_dtype("scatter_add", index_dtype);
  const int64_t total = l.b * l.p * l.n * l.s;
  if (total == 0) return;
  const int64_t rows = l.b * l.p * l.i;
  const RowArgs a{l.p, l.n, l.s, l.i, indices, index_dtype};
  switch (dtype) {
    case DType::kF32:
      return scatter_typed<DType::kF32>(a, rows, total, operand, updates, out, scratch, stream);
    case DType::kF64:
      return scatter_typed<DType::kF64>(a, rows, total, operand, updates, out, scratch, stream);
    case DType::kF16:
      return scatter_typed<DType::kF16>(a, rows, total, operand, updates, out, scratch, stream);
    case DType::kBF16:
      return scatter_typed<DType::kBF16>(a, rows, total, operand, updates, out, scratch, stream);
    case DType::kI32:
      return scatter_typed<DType::kI32>(a, rows, total, operand, updates, out, scratch, stream);
    case DType::kU32:
      return scatter_typed<DType::kU32>(a, rows, total, operand, updates, out, scratch, stream);
    case DType::kI64:
      return scatter_typed<DType::kI64>(a, rows, total, operand, updates, out, scratch, stream);
    case DType::kU8:
      return scatter_typed<DType::kU8>(a, rows, total, operand, updates, out, scratch, stream);
    case DType::kI8:
      return scatter_typed<DType::kI8>(a, rows, total, operand, updates, out, scratch, stream);
    case DType::kI16:
      return scatter_typed<DType::kI16>(a, rows, total, operand, updates, out, scratch, stream);
    case DType::kU16:
      return scatter_typed<DType::kU16>(a, rows, total, operand, updates, out, scratch, stream);
    case DType::kU64:
      return scatter_typed<DType::kU64>(a, rows, total, operand, updates, out, scratch, stream);
    case DType::kBool:
    case DType::kC64:
    case DType::kC128:
      break;
  }
  graft::fail("scatter_add", "needs a numeric dtype, got ", dtype_name(dtype));
}

}  // namespace graft::cuda
