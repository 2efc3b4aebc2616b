// sort on the GPU (index_launch.h), the CPU's algorithm (sort_kernel.cc) in passes:
//   1. each key becomes order-preserving unsigned words (the CPU's ord(): floats as lax.sort
//      orders them, -0 == +0, every NaN last and equal), laid out row by row (a row: the axis'
//      elements at one position of the other dims);
//   2. a stable sort of (word, position) pairs per row, one pass per key from the last key to
//      the first (LSD: a stable sort by key k keeps the order of keys > k among its ties), so
//      the permutation is the lexicographic, stable one; keys of up to 4 bytes sort 32-bit
//      words, 8-byte keys 64-bit ones;
//   3. every operand is permuted by it.
// Rows are CUB segments (DeviceSegmentedSort::StableSortPairs, which balances short and long
// rows); a single row goes through DeviceRadixSort (onesweep, stable, only the key's bits).
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_segmented_sort.cuh>

#include "core/backend/cuda/kernels/index_device.h"
#include "core/backend/cuda/kernels/index_launch.h"
#include "core/backend/cuda/runtime/check.h"
#include "core/error.h"

namespace graft::cuda {
namespace {

using namespace index_detail;

struct Rows {
  int64_t n = 1, inner = 1, total = 0, rows = 0;  // axis length, its stride, elements, rows
};

Rows rows_of(const Shape& shape, int axis) {
  Rows r;
  r.n = shape[axis];
  for (size_t d = axis + 1; d < shape.size(); ++d) r.inner *= shape[d];
  r.total = numel(shape);
  r.rows = r.n == 0 ? 0 : r.total / r.n;
  return r;
}

// ------------------------------------------------------------------------- key words

__device__ inline uint64_t ord_float(float f) {
  if (isnan(f)) return 0xffffffffu;
  if (f == 0.0f) f = 0.0f;  // -0 and +0 tie
  const uint32_t u = __float_as_uint(f);
  return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
}
__device__ inline uint64_t ord_double(double d) {
  if (isnan(d)) return ~uint64_t{0};
  if (d == 0.0) d = 0.0;
  const uint64_t u = static_cast<uint64_t>(__double_as_longlong(d));
  return (u >> 63) ? ~u : (u | (uint64_t{1} << 63));
}

// The sort word of element j of a key of dtype D (the CPU's ord()).
template <DType D>
__device__ inline uint64_t ord(const void* p, int64_t j) {
  if constexpr (D == DType::kF64) {
    return ord_double(static_cast<const double*>(p)[j]);
  } else if constexpr (D == DType::kF32) {
    return ord_float(static_cast<const float*>(p)[j]);
  } else if constexpr (D == DType::kF16) {
    return ord_float(__half2float(__ushort_as_half(static_cast<const uint16_t*>(p)[j])));
  } else if constexpr (D == DType::kBF16) {
    return ord_float(__bfloat162float(__ushort_as_bfloat16(static_cast<const uint16_t*>(p)[j])));
  } else if constexpr (D == DType::kI32) {
    return static_cast<uint32_t>(static_cast<const int32_t*>(p)[j]) ^ 0x80000000u;
  } else if constexpr (D == DType::kI64) {
    return static_cast<uint64_t>(static_cast<const int64_t*>(p)[j]) ^ (uint64_t{1} << 63);
  } else if constexpr (D == DType::kU32) {
    return static_cast<const uint32_t*>(p)[j];
  } else if constexpr (D == DType::kU64) {
    return static_cast<const uint64_t*>(p)[j];
  } else if constexpr (D == DType::kU16) {
    return static_cast<const uint16_t*>(p)[j];
  } else if constexpr (D == DType::kI16) {
    return static_cast<uint16_t>(static_cast<const int16_t*>(p)[j]) ^ 0x8000u;
  } else if constexpr (D == DType::kI8) {
    return static_cast<uint8_t>(static_cast<const int8_t*>(p)[j]) ^ 0x80u;
  } else {  // u8, bool
    return static_cast<const uint8_t*>(p)[j];
  }
}

// Element e = row * n + j of the row-by-row layout: its offset in the operands' layout.
template <typename I>
__device__ inline int64_t source_offset(I e, I n, I inner, I* j) {
  const I row = e / n;
  *j = e - row * n;
  return static_cast<int64_t>(row / inner) * n * inner + row % inner;
}

// words[e] = ord(key at position perm[e] of e's row) (position j itself on the first pass,
// which also writes the identity permutation).
template <DType D, typename I>
__global__ void __launch_bounds__(kThreads)
    words_kernel(const void* key, bool wide, void* words, uint32_t* perm, bool first, I total,
                 I n, I inner) {
  const I step = static_cast<I>(gridDim.x) * blockDim.x;
  for (I e = static_cast<I>(blockIdx.x) * blockDim.x + threadIdx.x; e < total; e += step) {
    I j;
    const int64_t base = source_offset(e, n, inner, &j);
    uint32_t pos;
    if (first) {
      pos = static_cast<uint32_t>(j);
      perm[e] = pos;
    } else {
      pos = perm[e];
    }
    const uint64_t w = ord<D>(key, base + static_cast<int64_t>(pos) * inner);
    if (wide) {
      static_cast<uint64_t*>(words)[e] = w;
    } else {
      static_cast<uint32_t*>(words)[e] = static_cast<uint32_t>(w);
    }
  }
}

// out at (row, j) = in at (row, perm[row * n + j]), for an element width W.
template <typename W, typename I>
__global__ void __launch_bounds__(kThreads)
    permute_kernel(const W* in, W* out, const uint32_t* perm, I total, I n, I inner) {
  const I step = static_cast<I>(gridDim.x) * blockDim.x;
  for (I e = static_cast<I>(blockIdx.x) * blockDim.x + threadIdx.x; e < total; e += step) {
    I j;
    const int64_t base = source_offset(e, n, inner, &j);
    out[base + static_cast<int64_t>(j) * inner] = in[base + static_cast<int64_t>(perm[e]) * inner];
  }
}

__global__ void offsets_kernel(int64_t* offsets, int64_t rows, int64_t n) {
  const int64_t step = int64_t(gridDim.x) * blockDim.x;
  for (int64_t r = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; r <= rows; r += step) {
    offsets[r] = r * n;
  }
}

int flat_blocks(int64_t n) {
  return static_cast<int>(std::clamp<int64_t>((n + kThreads - 1) / kThreads, 1, kMaxBlocks));
}

// ------------------------------------------------------------------------- planning

// Where each scratch region lives (byte offsets, 256-aligned) and how big CUB's part is.
struct Plan {
  Rows r;
  bool segmented = false, any_wide = false, any_narrow = false;
  size_t offsets = 0, words_in = 0, words_out = 0, perm_a = 0, perm_b = 0, temp = 0;
  size_t temp_bytes = 0, total_bytes = 0;
};

size_t align_up(size_t x) { return (x + 255) / 256 * 256; }

// CUB's temp-storage size of one pass (null storage: a size query, no launch).
template <typename Key>
size_t cub_temp_bytes(const Plan& p) {
  size_t bytes = 0;
  cudaError_t err;
  if (p.segmented) {
    err = cub::DeviceSegmentedSort::StableSortPairs(
        nullptr, bytes, static_cast<const Key*>(nullptr), static_cast<Key*>(nullptr),
        static_cast<const uint32_t*>(nullptr), static_cast<uint32_t*>(nullptr), p.r.total,
        p.r.rows, static_cast<const int64_t*>(nullptr), static_cast<const int64_t*>(nullptr));
  } else {
    err = cub::DeviceRadixSort::SortPairs(nullptr, bytes, static_cast<const uint64_t*>(nullptr),
                                          static_cast<uint64_t*>(nullptr),
                                          static_cast<const uint32_t*>(nullptr),
                                          static_cast<uint32_t*>(nullptr),
                                          static_cast<uint32_t>(p.r.total));
  }
  check(err, "cub sort (temp storage size)");
  return bytes;
}

Plan make_plan(const Shape& shape, int axis, const std::vector<DType>& key_dtypes) {
  Plan p;
  p.r = rows_of(shape, axis);
  if (p.r.n > int64_t{0xffffffff}) graft::fail("sort", "axis of length ", p.r.n, " is too long");
  if (p.r.total == 0 || p.r.n == 1) return p;  // nothing to sort: copies only
  p.segmented = p.r.rows > 1;
  for (DType d : key_dtypes) (dtype_size(d) == 8 ? p.any_wide : p.any_narrow) = true;
  // The single-row radix sort always takes 64-bit words (narrow keys sort their low 32 bits
  // only), so it is instantiated once.
  const size_t word = p.any_wide || !p.segmented ? 8 : 4;
  const size_t total = static_cast<size_t>(p.r.total);
  size_t at = 0;
  auto take = [&](size_t bytes) {
    const size_t here = at;
    at += align_up(bytes);
    return here;
  };
  if (p.segmented) p.offsets = take(static_cast<size_t>(p.r.rows + 1) * sizeof(int64_t));
  p.words_in = take(total * word);
  p.words_out = take(total * word);
  p.perm_a = take(total * sizeof(uint32_t));
  p.perm_b = take(total * sizeof(uint32_t));
  if (!p.segmented) {
    p.temp_bytes = cub_temp_bytes<uint64_t>(p);
  } else {
    if (p.any_narrow) p.temp_bytes = cub_temp_bytes<uint32_t>(p);
    if (p.any_wide) p.temp_bytes = std::max(p.temp_bytes, cub_temp_bytes<uint64_t>(p));
  }
  p.temp = take(p.temp_bytes);
  p.total_bytes = at;
  return p;
}

// One sort pass of (words, perm) -> (words_out, perm_out) by `bits` bits of each word.
void sort_pass(const Plan& p, char* scratch, bool wide, int bits, const uint32_t* perm_in,
               uint32_t* perm_out, cudaStream_t stream) {
  void* temp = scratch + p.temp;
  size_t temp_bytes = p.temp_bytes;
  const int64_t* offsets = reinterpret_cast<const int64_t*>(scratch + p.offsets);
  cudaError_t err;
  if (!p.segmented) {
    err = cub::DeviceRadixSort::SortPairs(
        temp, temp_bytes, reinterpret_cast<const uint64_t*>(scratch + p.words_in),
        reinterpret_cast<uint64_t*>(scratch + p.words_out), perm_in, perm_out,
        static_cast<uint32_t>(p.r.total), 0, bits, stream);
  } else if (wide) {
    err = cub::DeviceSegmentedSort::StableSortPairs(
        temp, temp_bytes, reinterpret_cast<const uint64_t*>(scratch + p.words_in),
        reinterpret_cast<uint64_t*>(scratch + p.words_out), perm_in, perm_out, p.r.total,
        p.r.rows, offsets, offsets + 1, stream);
  } else {
    err = cub::DeviceSegmentedSort::StableSortPairs(
        temp, temp_bytes, reinterpret_cast<const uint32_t*>(scratch + p.words_in),
        reinterpret_cast<uint32_t*>(scratch + p.words_out), perm_in, perm_out, p.r.total,
        p.r.rows, offsets, offsets + 1, stream);
  }
  check(err, "cub stable sort");
}

template <typename I>
void launch_words(DType d, const void* key, bool wide, void* words, uint32_t* perm, bool first,
                  const Rows& r, cudaStream_t stream) {
  const int blocks = flat_blocks(r.total);
  const I total = static_cast<I>(r.total), n = static_cast<I>(r.n), inner = static_cast<I>(r.inner);
  auto go = [&]<DType D>() {
    words_kernel<D, I><<<blocks, kThreads, 0, stream>>>(key, wide, words, perm, first, total, n,
                                                        inner);
  };
  switch (d) {
    case DType::kBool:
    case DType::kU8:
      go.template operator()<DType::kU8>();
      break;
    case DType::kU32:
      go.template operator()<DType::kU32>();
      break;
    case DType::kI32:
      go.template operator()<DType::kI32>();
      break;
    case DType::kI64:
      go.template operator()<DType::kI64>();
      break;
    case DType::kU64:
      go.template operator()<DType::kU64>();
      break;
    case DType::kU16:
      go.template operator()<DType::kU16>();
      break;
    case DType::kI16:
      go.template operator()<DType::kI16>();
      break;
    case DType::kI8:
      go.template operator()<DType::kI8>();
      break;
    case DType::kC64:
    case DType::kC128:
    case DType::kF8E4M3FN:
    case DType::kF8E5M2:
      graft::fail("sort", "no CUDA sort key for ", dtype_name(d));
    case DType::kF16:
      go.template operator()<DType::kF16>();
      break;
    case DType::kBF16:
      go.template operator()<DType::kBF16>();
      break;
    case DType::kF32:
      go.template operator()<DType::kF32>();
      break;
    case DType::kF64:
      go.template operator()<DType::kF64>();
      break;
  }
  check(cudaGetLastError(), "sort key kernel");
}

template <typename I>
void launch_permute(int64_t esize, const void* in, void* out, const uint32_t* perm,
                    const Rows& r, cudaStream_t stream) {
  const int blocks = flat_blocks(r.total);
  const I total = static_cast<I>(r.total), n = static_cast<I>(r.n), inner = static_cast<I>(r.inner);
  auto go = [&]<typename W>() {
    permute_kernel<W, I><<<blocks, kThreads, 0, stream>>>(
        static_cast<const W*>(in), static_cast<W*>(out), perm, total, n, inner);
  };
  switch (esize) {
    case 1:
      go.template operator()<uint8_t>();
      break;
    case 2:
      go.template operator()<uint16_t>();
      break;
    case 4:
      go.template operator()<uint32_t>();
      break;
    case 8:
      go.template operator()<uint64_t>();
      break;
    default:  // c128: sort takes no complex operands (bind() rejects them)
      graft::fail("sort", "has no CUDA kernel for ", esize, "-byte elements");
  }
  check(cudaGetLastError(), "sort permute kernel");
}

template <typename I>
void run_sort(const Plan& p, int num_keys, const std::vector<SortOperand>& ops, char* scratch,
              cudaStream_t stream) {
  if (p.segmented) {
    offsets_kernel<<<flat_blocks(p.r.rows + 1), kThreads, 0, stream>>>(
        reinterpret_cast<int64_t*>(scratch + p.offsets), p.r.rows, p.r.n);
    check(cudaGetLastError(), "sort offsets kernel");
  }
  uint32_t* perm = reinterpret_cast<uint32_t*>(scratch + p.perm_a);
  uint32_t* next = reinterpret_cast<uint32_t*>(scratch + p.perm_b);
  for (int k = num_keys - 1; k >= 0; --k) {
    const bool key_wide = dtype_size(ops[k].dtype) == 8;
    const bool wide = key_wide || !p.segmented;  // the single-row sort takes 64-bit words
    launch_words<I>(ops[k].dtype, ops[k].in, wide, scratch + p.words_in, perm,
                    k == num_keys - 1, p.r, stream);
    sort_pass(p, scratch, key_wide, key_wide ? 64 : 32, perm, next, stream);
    std::swap(perm, next);
  }
  for (const SortOperand& o : ops) {
    launch_permute<I>(dtype_size(o.dtype), o.in, o.out, perm, p.r, stream);
  }
}

}  // namespace

size_t sort_scratch_bytes(const Shape& shape, int axis, const std::vector<DType>& key_dtypes) {
  return make_plan(shape, axis, key_dtypes).total_bytes;
}

void launch_sort(const Shape& shape, int axis, int num_keys, const std::vector<SortOperand>& ops,
                 void* scratch, size_t scratch_bytes, cudaStream_t stream) {
  if (num_keys < 1 || num_keys > static_cast<int>(ops.size())) {
    graft::fail("sort", "num_keys=", num_keys, " must be in [1, ", ops.size(), "]");
  }
  std::vector<DType> keys;
  for (int k = 0; k < num_keys; ++k) keys.push_back(ops[k].dtype);
  const Plan p = make_plan(shape, axis, keys);
  if (p.r.total == 0) return;
  if (p.r.n == 1) {  // every row is one element: the outputs are the inputs
    for (const SortOperand& o : ops) {
      check(cudaMemcpyAsync(o.out, o.in, static_cast<size_t>(p.r.total * dtype_size(o.dtype)),
                            cudaMemcpyDeviceToDevice, stream),
            "cudaMemcpyAsync (sort)");
    }
    return;
  }
  if (scratch == nullptr || scratch_bytes < p.total_bytes) {
    graft::fail("sort", "needs ", p.total_bytes, " bytes of scratch, got ", scratch_bytes);
  }
  char* s = static_cast<char*>(scratch);
  if (p.r.total < (int64_t{1} << 31)) {
    run_sort<uint32_t>(p, num_keys, ops, s, stream);
  } else {
    run_sort<int64_t>(p, num_keys, ops, s, stream);
  }
}

}  // namespace graft::cuda
