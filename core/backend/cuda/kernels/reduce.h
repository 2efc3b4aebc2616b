// The CUDA kernels of the reduce family: reduce_{sum,prod,max,min,and,or} over any set of
// axes, argmax / argmin along one axis, cumsum (core/primitives/reduce.h).
//
// A reduction is planned on the host (plan_reduce / plan_arg / plan_cumsum: plain C++, no GPU
// needed), then launched: the plan says which kernel runs and how much scratch device memory
// it needs (`scratch_bytes`, 0 for most shapes), which the caller provides (Call::scratch, or
// cudaMalloc in tests). Launchers enqueue on `stream` and return; nothing synchronizes.
// Pointers are dense row-major device memory.
//
// Semantics are the CPU kernels' (core/backend/cpu/reduce_kernels.cc, scan_kernels.cc):
// f16 / bf16 accumulate in f32 and round once; signed integer sums and products wrap (they
// accumulate unsigned); max / min propagate NaN; a reduction over a zero-sized axis gives the
// identity (0, 1, -inf / lowest, +inf / highest, all ones / true, 0 / false); argmax / argmin
// return the first occurrence of the extreme, a NaN counting as the extreme (first NaN wins).
// The order of a float sum is a tree, not the CPU's, so float sums and cumsums agree with the
// CPU to rounding, not bit for bit (integer results, max / min and argmax / argmin are exact;
// max / min of +0 and -0 may return either).
//
// Errors: an unsupported op / dtype, too many axes after merging, or a failed launch throws
// graft::Error. Built only with --config=cuda (reduce_plan.cc is plain C++).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/dtype/dtype.h"
#include "core/primitives/list.h"

namespace graft::cuda {

// Dims of the strided case after merging adjacent kept / reduced dims.
inline constexpr int kMaxReduceDims = 16;

struct ReducePlan {
  enum class Kind : int {
    kNone,  // no outputs
    kFill,  // a reduced axis has size 0: every output is the identity
    kCopy,  // only size-1 axes are reduced: the output is the input
    kRows,  // a group of `tpo` threads per output (and split)
    kCols,  // [outer, n, inner] with inner > 1: threads across columns
  };
  Kind kind = Kind::kNone;
  int64_t n_out = 0;   // outputs
  int64_t n = 0;       // elements reduced into each output
  int64_t splits = 1;  // partial results per output (> 1: scratch, then a combining kernel)
  int acc_bytes = 0;   // size of one partial result
  size_t scratch_bytes = 0;

  // kRows: output o reduces x[o * n, (o + 1) * n) when contiguous; otherwise output o starts
  // at the offset of its kept coordinates and element j is at the reduced coordinates' offset
  // (sizes and element strides innermost last).
  int tpo = 1;  // threads per output: 1, 32 or 256
  bool contiguous = false;
  int kept_nd = 0, red_nd = 0;
  int64_t kept_size[kMaxReduceDims] = {}, kept_stride[kMaxReduceDims] = {};
  int64_t red_size[kMaxReduceDims] = {}, red_stride[kMaxReduceDims] = {};

  // kCols: out[o * inner + c] reduces x[o, :, c]; blocks of bx columns x (256 / bx) rows.
  int64_t outer = 1, inner = 1;
  int bx = 32;
};

// reduce_* of `shape` over the sorted, distinct `axes`, values of `dtype`.
ReducePlan plan_reduce(const std::vector<int64_t>& shape, const std::vector<int>& axes,
                       DType dtype);
// argmax / argmin of `shape` along `axis` (whose size must be >= 1).
ReducePlan plan_arg(const std::vector<int64_t>& shape, int axis);

// reduce_sum ... reduce_or (`op`) of x (`dtype`) into out (`dtype`).
void launch_reduce(PrimitiveId op, DType dtype, const ReducePlan& plan, const void* x, void* out,
                   void* scratch, cudaStream_t stream);

// argmax / argmin (`op`) of x (`dtype`) into out (`index_dtype`: i32 or i64).
void launch_arg(PrimitiveId op, DType dtype, DType index_dtype, const ReducePlan& plan,
                const void* x, void* out, void* scratch, cudaStream_t stream);

// Inclusive cumsum along one axis of an [outer, n, inner] view: each (outer, inner) line is cut
// into `chunks` pieces of rows; with more than one, the pieces' totals are summed first
// (scratch) and each piece is scanned from its carry.
struct CumsumPlan {
  int64_t outer = 1, n = 0, inner = 1;
  int64_t chunks = 1;
  bool reverse = false;
  int acc_bytes = 0;
  size_t scratch_bytes = 0;
};
CumsumPlan plan_cumsum(const std::vector<int64_t>& shape, int axis, bool reverse, DType dtype);
void launch_cumsum(DType dtype, const CumsumPlan& plan, const void* x, void* y, void* scratch,
                   cudaStream_t stream);

}  // namespace graft::cuda
