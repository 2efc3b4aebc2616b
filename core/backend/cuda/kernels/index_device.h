// Device helpers shared by the index family's .cu files (nvcc only): reading an index of any
// index dtype, wrapping it as graft does, and the launch geometry of row kernels.
#pragma once

#include <algorithm>
#include <cstdint>

#include "core/dtype/dtype.h"
#include "core/error.h"

namespace graft::cuda::index_detail {

constexpr int kThreads = 256;
constexpr int64_t kMaxBlocks = 8192;

// The launchers' check of an index dtype (host): any integer dtype, which load_index reads.
inline void check_index_dtype(const char* op, DType t) {
  if (!is_integral(t)) graft::fail(op, "needs integer indices, got ", dtype_name(t));
}

// indices[j] as int64 for an index dtype (any integer dtype, check_index_dtype): a runtime
// switch, uniform across the grid, instead of a kernel per index dtype.
__device__ inline int64_t load_index(const void* p, DType t, int64_t j) {
  switch (t) {
    case DType::kU8:
      return static_cast<const uint8_t*>(p)[j];
    case DType::kI8:
      return static_cast<const int8_t*>(p)[j];
    case DType::kI16:
      return static_cast<const int16_t*>(p)[j];
    case DType::kU16:
      return static_cast<const uint16_t*>(p)[j];
    case DType::kU64:
      return static_cast<int64_t>(static_cast<const uint64_t*>(p)[j]);
    case DType::kU32:
      return static_cast<const uint32_t*>(p)[j];
    case DType::kI32:
      return static_cast<const int32_t*>(p)[j];
    case DType::kI64:
    default:  // the launchers admit integer index dtypes only
      return static_cast<const int64_t*>(p)[j];
  }
}

// Wraps a negative index once; -1 for an index still out of [0, n).
__device__ inline int64_t wrap_index(int64_t k, int64_t n) {
  if (k < 0) k += n;
  return k >= 0 && k < n ? k : -1;
}

// Row kernels run blockDim = (x, kThreads / x): x threads along a row of `s` elements (a
// power of two up to 32, so short rows do not idle most of a warp), the rest over rows.
inline int row_threads(int64_t s) {
  int x = 1;
  while (x < 32 && x < s) x *= 2;
  return x;
}
inline int row_blocks(int64_t rows, int rows_per_block) {
  return static_cast<int>(
      std::clamp<int64_t>((rows + rows_per_block - 1) / rows_per_block, 1, kMaxBlocks));
}

struct RowArgs {
  int64_t p, n, s, i;  // IndexLayout without b (a row's batch is its block / p)
  const void* indices;
  DType index_dtype;
};

// Row r of the output / updates: block bp = r / i (over B*P), index position r % i, batch
// bp / p. I is the row-index type (32-bit when the rows allow: cheaper division).
template <typename I>
struct Row {
  I bp, pos;
  int64_t raw;  // the index as stored
  __device__ Row(const RowArgs& a, I r) {
    pos = r % static_cast<I>(a.i);
    bp = r / static_cast<I>(a.i);
    const int64_t b = bp / static_cast<I>(a.p);
    raw = load_index(a.indices, a.index_dtype, b * a.i + pos);
  }
};

}  // namespace graft::cuda::index_detail
