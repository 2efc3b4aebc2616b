// The CUDA copy engine behind the shape kernels (transpose, broadcast_in_dim, slice, rev,
// concatenate, pad, dynamic_slice, dynamic_update_slice), the GPU twin of
// core/backend/cpu/strided_copy.h: moves a `dims`-shaped block of elements between two affine
// layouts. Element (i_0, ..., i_{n-1}) goes from src[sum i_d * src_strides[d]] to
// dst[sum i_d * dst_strides[d]]; strides count elements, src strides may be 0 (broadcast) or
// negative (rev); dst positions must not overlap.
//
// Only the element size matters (1, 2, 4, 8 or 16 bytes: c128): bytes are copied, never
// converted.
// On the host the dims are simplified first (size-1 dims dropped, neighbours contiguous in
// both layouts merged); a block contiguous in both becomes one cudaMemcpyAsync, rows
// contiguous in both are copied in 16-byte words where alignment allows, and a block whose
// destination unit-stride dim reads the source with a stride while another dim is the
// source's unit-stride one (a transpose) goes through 32x32 shared-memory tiles.
//
// Dynamic starts (dynamic_slice / dynamic_update_slice): the block origin on one side is
// computed ON THE DEVICE from scalar integer start indices in device memory, wrapped and
// clamped as lax does (a negative start gets the dim added once, then is clamped into
// [0, dim - size]); the host never reads them, so nothing synchronizes.
//
// Everything is enqueued on `stream`; pointers are device memory. Errors (a launch failure,
// more than kMaxCopyRank dims left after merging) throw graft::Error ("[cuda] ..." for CUDA
// statuses). Thread-safe: no state.
#pragma once

#include <cstdint>

#include <cuda_runtime_api.h>

#include "core/dtype/dtype.h"
#include "core/shape.h"

namespace graft::cuda {

// The most dims a copy may have after merging (and the most dynamic start indices).
inline constexpr int kMaxCopyRank = 16;

// Start indices read on the device: dim d's origin is
//   clamp(s_d < 0 ? s_d + dim[d] : s_d, 0, dim[d] - size[d]) * stride[d]
// elements, with s_d the scalar of dtype `dtype[d]` (u8, u32, i32 or i64) at `index[d]`.
struct DeviceStarts {
  int rank = 0;
  const void* index[kMaxCopyRank] = {};
  DType dtype[kMaxCopyRank] = {};
  int64_t dim[kMaxCopyRank] = {};
  int64_t size[kMaxCopyRank] = {};
  int64_t stride[kMaxCopyRank] = {};
};

// Which side of the copy a DeviceStarts moves.
enum class StartsSide { kSource, kDestination };

// `esize`: 1, 2, 4, 8 or 16. `starts` (optional) adds its device-computed origin to the source's
// or the destination's pointer.
void strided_copy(int64_t esize, const Shape& dims, const void* src, const Shape& src_strides,
                  void* dst, const Shape& dst_strides, cudaStream_t stream,
                  const DeviceStarts* starts = nullptr,
                  StartsSide side = StartsSide::kSource);

// Sets n elements of `esize` bytes at dst to the element at `value` (device memory).
void fill(int64_t esize, void* dst, int64_t n, const void* value, cudaStream_t stream);

}  // namespace graft::cuda
