// The rearranging copy of the CUDA conv_general_dilated kernel, as data: which source element
// each element of a dense destination reads (conv_plan.cc builds them, conv_device.cu runs
// them). No graft or CUDA header, so nvcc and the plain C++ tests both take it.
#pragma once

#include <cstdint>

namespace graft::cuda::conv {

inline constexpr int kMaxRank = 8;

// A rearranging copy (conv_device.h). dst is dense, row-major over shape[0..rank). For each
// dim d the position pos = i_d - lo[d] reads source index pos / dil[d] (stride[d] elements
// apart) when pos >= 0, pos is a multiple of dil[d] and pos / dil[d] < extent[d]; an element
// with any dim outside is 0.
struct Arrange {
  int rank = 0;
  int64_t shape[kMaxRank] = {}, stride[kMaxRank] = {}, lo[kMaxRank] = {}, dil[kMaxRank] = {},
          extent[kMaxRank] = {};
  // Appends a dim read straight (no padding, no dilation).
  void plain(int64_t size, int64_t src_stride) { padded(size, src_stride, 0, 1, size); }
  void padded(int64_t size, int64_t src_stride, int64_t low, int64_t dilation, int64_t src_size);
  int64_t elements() const;
};

}  // namespace graft::cuda::conv
