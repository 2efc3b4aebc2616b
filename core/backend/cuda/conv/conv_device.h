// conv_general_dilated's own device kernel (conv_device.cu): rearranging an operand into the
// dense NC... / OI... layout cuDNN takes (and cuDNN's NC... result into the output's layout),
// with the input's padding (negative: cropping) and lhs dilation written out as zeros and a
// dtype conversion on the way. Plain types only: element types are graft::DType values as
// ints (conv_kernels.cc checks the numbering), f16 / bf16 / f32 / f64. Built only with
// --config=cuda.
#pragma once

#include <cstdint>

#include <cuda_runtime_api.h>

namespace graft::cuda::conv {

inline constexpr int kMaxRank = 8;

// dst is dense, row-major over shape[0..rank). For each dim d the position pos = i_d - lo[d]
// reads source index pos / dil[d] (stride[d] elements apart) when pos >= 0, pos is a multiple
// of dil[d] and pos / dil[d] < extent[d]; an element with any dim outside is 0.
struct Arrange {
  int rank = 0;
  int64_t shape[kMaxRank], stride[kMaxRank], lo[kMaxRank], dil[kMaxRank], extent[kMaxRank];
  // Appends a dim read straight (no padding, no dilation).
  void plain(int64_t size, int64_t src_stride) {
    padded(size, src_stride, 0, 1, size);
  }
  void padded(int64_t size, int64_t src_stride, int64_t low, int64_t dilation, int64_t src_size) {
    shape[rank] = size;
    stride[rank] = src_stride;
    lo[rank] = low;
    dil[rank] = dilation;
    extent[rank] = src_size;
    ++rank;
  }
};

void arrange(const void* src, int src_type, void* dst, int dst_type, const Arrange& a,
             cudaStream_t stream);

}  // namespace graft::cuda::conv
