// One forward convolution through cuDNN's convolution API (cudnn_cnn.h), of conv_plan.h's
// ConvShape: dense NC... input, OI... filter, NC... output, cross-correlation, no padding. The algorithm (cuDNN's heuristic first
// choice) and its descriptors are cached per shape and device, as the attention code caches
// its plans. f32 runs without TF32 (CUDNN_FMA_MATH, as the CPU's f32 sums); f16 / bf16 take
// tensor cores and accumulate in f32; f64 in f64. Built only with --config=cuda.
#pragma once

#include <cstdint>

#include "core/backend/cuda/conv/conv_plan.h"  // ConvShape
#include "core/backend/cuda/kernel.h"
#include "core/dtype/dtype.h"

namespace graft::cuda::conv {

// Enqueues y = conv(x, w) on the call's stream (workspace from call.scratch).
void cudnn_convolve(Call& call, const ConvShape& s, const void* x, const void* w, void* y);

}  // namespace graft::cuda::conv
