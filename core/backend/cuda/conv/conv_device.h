// conv_general_dilated's own device kernel (conv_device.cu): the rearranging copy of
// arrange.h's Arrange (operands into cuDNN's dense NC... / OI... layout with padding and lhs
// dilation written out as zeros, cuDNN's result into the output's layout), converting dtypes
// on the way. Plain types only: element types are graft::DType values as
// ints (conv_kernels.cc checks the numbering), f16 / bf16 / f32 / f64. Built only with
// --config=cuda.
#pragma once

#include <cstdint>

#include <cuda_runtime_api.h>

#include "core/backend/cuda/conv/arrange.h"

namespace graft::cuda::conv {

// Returns false, enqueuing nothing, for a type without a kernel (the caller reports it).
bool arrange(const void* src, int src_type, void* dst, int dst_type, const Arrange& a,
             cudaStream_t stream);

}  // namespace graft::cuda::conv
