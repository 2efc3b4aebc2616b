// One forward convolution through cuDNN's convolution API (cudnn_cnn.h): dense NC... input,
// OI... filter (I = input features / groups), NC... output, cross-correlation, no padding
// (conv_kernels.cc writes padding and lhs dilation into the input), 2 or 3 spatial dims
// (1-D convolutions come with a leading size-1 dim). The algorithm (cuDNN's heuristic first
// choice) and its descriptors are cached per shape and device, as the attention code caches
// its plans. f32 runs without TF32 (CUDNN_FMA_MATH, as the CPU's f32 sums); f16 / bf16 take
// tensor cores and accumulate in f32; f64 in f64. Built only with --config=cuda.
#pragma once

#include <cstdint>

#include "core/backend/cuda/kernel.h"
#include "core/dtype.h"

namespace graft::cuda::conv {

struct ConvShape {
  int spatial = 2;                    // 2 or 3
  int64_t x[5] = {}, w[5] = {}, y[5] = {};  // the first 2 + spatial entries are used
  int64_t strides[3] = {1, 1, 1}, dilations[3] = {1, 1, 1};
  int64_t groups = 1;
  DType type = DType::kF32;  // x, w and y
};

// Enqueues y = conv(x, w) on the call's stream (workspace from call.scratch).
void cudnn_convolve(Call& call, const ConvShape& s, const void* x, const void* w, void* y);

}  // namespace graft::cuda::conv
