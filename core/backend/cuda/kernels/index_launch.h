// Launchers of the CUDA index family (core/primitives/index.h): gather, the scatters and sort,
// with the primitives' parameters spelled out so tests call them on cudaMalloc'd memory
// without a Call. Semantics are the CPU kernels' (core/backend/cpu/index_kernels.cc,
// sort_kernel.cc):
//   - gather / scatter_add see the operand as (B, P, N, S) and the indices as (B, I) (see
//     IndexLayout); indices of any index dtype (i32, i64, u8, u32) are read on the device.
//     A negative index wraps once (+N). gather: an index still out of range gives the fill
//     value (NaN, the lowest signed, the highest unsigned value, true) or, with clip, the
//     nearest end. scatter_add: updates at indices still out of range are dropped.
//   - scatter_add accumulates with atomicAdd: duplicate indices add up, but in an
//     unspecified order, so f32/f64 sums with duplicates can differ in the last bits from run
//     to run and from the CPU (which adds in index order). f16/bf16 accumulate in f32 in the
//     scratch buffer and round once at the end (as the CPU); integers wrap (exact, so
//     order-independent). u8 adds go through a 32-bit compare-and-swap on the aligned word
//     holding the byte (device allocations are at least 4-byte aligned).
//   - sort: stable, lexicographic in the first num_keys operands along `axis`, floats ordered
//     -inf < ... < -0 == +0 < ... < inf < NaN with every NaN equal (ties keep their order).
//     CUB's stable segmented sort (one segment per row; a single row uses the onesweep radix
//     sort), one pass per key from the last to the first, then every operand is permuted.
//
// Pointers are device memory, outputs must not overlap inputs. Work is enqueued on `stream`
// and nothing synchronizes. Errors throw graft::Error ("[cuda] ..." for CUDA statuses).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include <cuda_runtime_api.h>

#include "core/dtype/dtype.h"
#include "core/shape.h"

namespace graft::cuda {

// b: product of the batch dims, p: of the dims between them and the axis, n: the axis,
// s: product of the dims after it; i: product of the indices' non-batch dims.
struct IndexLayout {
  int64_t b = 1, p = 1, n = 1, s = 1, i = 1;
};

inline IndexLayout index_layout(const Shape& operand, const Shape& indices, int axis,
                                int batch_dims) {
  IndexLayout l;
  for (int d = 0; d < batch_dims; ++d) l.b *= operand[d];
  for (int d = batch_dims; d < axis; ++d) l.p *= operand[d];
  l.n = operand[axis];
  for (size_t d = axis + 1; d < operand.size(); ++d) l.s *= operand[d];
  for (size_t d = batch_dims; d < indices.size(); ++d) l.i *= indices[d];
  return l;
}

// out (B, P, I, S) = operand (B, P, N, S) at the indices.
void launch_gather(DType dtype, DType index_dtype, const IndexLayout& l, bool clip,
                   const void* operand, const void* indices, void* out, cudaStream_t stream);

// Bytes of scratch launch_scatter_add needs (an f32 accumulator for f16/bf16, else 0).
size_t scatter_add_scratch_bytes(DType dtype, const IndexLayout& l);

// out = operand with updates (B, P, I, S) added at the indices. Numeric dtypes only.
void launch_scatter_add(DType dtype, DType index_dtype, const IndexLayout& l,
                        const void* operand, const void* indices, const void* updates,
                        void* out, void* scratch, cudaStream_t stream);

// scatter (set), scatter_mul, scatter_min, scatter_max: scatter_add's layout and dropping.
// set keeps the last update (in row order) to each target row, deterministically, as the CPU;
// mul / min / max combine every update with compare-and-swap loops (f16 / bf16 rounded at each
// update); integer products wrap; min / max propagate NaN. set takes any dtype (bool too).
enum class ScatterCombiner { kSet, kMul, kMin, kMax };

// Bytes of scratch launch_scatter_combine needs (set: a word per target row, else 0).
size_t scatter_combine_scratch_bytes(ScatterCombiner c, const IndexLayout& l);

void launch_scatter_combine(ScatterCombiner c, DType dtype, DType index_dtype,
                            const IndexLayout& l, const void* operand, const void* indices,
                            const void* updates, void* out, void* scratch, cudaStream_t stream);

struct SortOperand {
  DType dtype;
  const void* in;
  void* out;
};

// Bytes of scratch launch_sort needs for operands of `shape` sorted along `axis` by keys of
// these dtypes (the first num_keys operands'). Asks CUB (host only: no launch, no sync).
size_t sort_scratch_bytes(const Shape& shape, int axis, const std::vector<DType>& key_dtypes);

// Sorts every operand (all of `shape`) along `axis` by the first `num_keys` of them.
// `scratch` holds at least sort_scratch_bytes(...) bytes.
void launch_sort(const Shape& shape, int axis, int num_keys, const std::vector<SortOperand>& ops,
                 void* scratch, size_t scratch_bytes, cudaStream_t stream);

}  // namespace graft::cuda
