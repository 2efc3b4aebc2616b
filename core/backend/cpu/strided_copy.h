// The copy engine behind the shape kernels (transpose, broadcast, slice, rev, concatenate,
// pad, dynamic slices): moves a `dims`-shaped block of elements between two affine layouts.
// Element (i_0, ..., i_{n-1}) goes from src[sum i_d * src_strides[d]] to
// dst[sum i_d * dst_strides[d]]; strides count elements and src strides may be 0 (broadcast)
// or negative (rev). dst positions must not overlap. Adjacent dims that are contiguous in both
// layouts are merged first; rows contiguous in both become memcpy, a zero-stride source
// becomes a fill, and a source whose unit stride lies in another dim than the destination's is
// copied in cache-sized tiles (transpose). Large copies run on the thread pool.
#pragma once

#include <cstdint>
#include <vector>

#include "core/shape.h"

namespace graft::cpu {

// `esize` is the element size in bytes (1, 2, 4 or 8).
void strided_copy(int64_t esize, const Shape& dims, const void* src,
                  const std::vector<int64_t>& src_strides, void* dst,
                  const std::vector<int64_t>& dst_strides);

// Sets n elements of `esize` bytes at dst to *value.
void fill(int64_t esize, void* dst, int64_t n, const void* value);

}  // namespace graft::cpu
