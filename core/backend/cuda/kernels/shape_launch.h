// Launchers of the CUDA shape family, one per primitive of core/primitives/shape.h with the
// primitive's parameters spelled out (so tests call them on cudaMalloc'd memory without a
// Call). Semantics are exactly the CPU kernels' (core/backend/cpu/shape_kernels.cc); all but
// iota are byte copies through strided_copy / fill (strided.h) and depend on the element size
// `esize` (1, 2, 4 or 8) only. reshape has no launcher: its kernel aliases the input.
//
// Pointers are device memory; outputs are dense row-major buffers of the output shape and
// must not overlap the inputs (dynamic_update_slice may be given out == operand: it then
// writes the update in place). Work is enqueued on `stream`; nothing synchronizes, and start
// indices / the padding value are read on the device. Errors throw graft::Error.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include <cuda_runtime_api.h>

#include "core/dtype/dtype.h"
#include "core/shape.h"

namespace graft::cuda {

// out[i] = x[i permuted]: output dim i is input dim perm[i].
void launch_transpose(int64_t esize, const Shape& in, const std::vector<int>& perm,
                      const void* x, void* out, cudaStream_t stream);

// Operand dim i becomes output dim dims[i] (size 1 or equal).
void launch_broadcast_in_dim(int64_t esize, const Shape& in, const Shape& out_shape,
                             const std::vector<int>& dims, const void* x, void* out,
                             cudaStream_t stream);

// Elements start[d], start[d] + strides[d], ... below limit[d] (strides >= 1; empty: all 1).
void launch_slice(int64_t esize, const Shape& in, const Shape& start, const Shape& limit,
                  const Shape& strides, const void* x, void* out, cudaStream_t stream);

// Reverses the listed dims.
void launch_rev(int64_t esize, const Shape& shape, const std::vector<int>& dims, const void* x,
                void* out, cudaStream_t stream);

// Concatenates xs (shapes `ins`, equal but for `axis`) along `axis`.
void launch_concatenate(int64_t esize, const std::vector<Shape>& ins,
                        const std::vector<const void*>& xs, int axis, void* out,
                        cudaStream_t stream);

// Per dim (low, high, interior): low/high may be negative (cropping). `value` is the padding
// element (a device scalar of x's dtype).
using CudaPadConfig = std::vector<std::array<int64_t, 3>>;  // == graft::PadConfig
void launch_pad(int64_t esize, const Shape& in, const CudaPadConfig& config, const void* x,
                const void* value, void* out, cudaStream_t stream);

// 0, 1, 2, ... along `dimension` of `shape`, in `dtype` (any but bool; f16/bf16 round to
// nearest even as the CPU's).
void launch_iota(DType dtype, const Shape& shape, int dimension, void* out, cudaStream_t stream);

// A scalar start index in device memory (dtype u8, u32, i32 or i64).
struct StartIndex {
  const void* ptr;
  DType dtype;
};

// A `sizes` block of x at the starts (one per dim), wrapped and clamped as lax does.
void launch_dynamic_slice(int64_t esize, const Shape& in, const Shape& sizes, const void* x,
                          const std::vector<StartIndex>& starts, void* out,
                          cudaStream_t stream);

// out = x with `update` (shape `upd`) written at the starts, wrapped and clamped.
void launch_dynamic_update_slice(int64_t esize, const Shape& operand, const Shape& upd,
                                 const void* x, const void* update,
                                 const std::vector<StartIndex>& starts, void* out,
                                 cudaStream_t stream);

}  // namespace graft::cuda
