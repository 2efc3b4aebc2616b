// How the CUDA kernel of conv_general_dilated (conv_kernels.cc) runs one convolution through
// cuDNN: plain C++ (no CUDA header), so tests/cuda:conv_plan_test checks the lowering on the
// CPU in every build. What cuDNN cannot express is lowered around it, as XLA does:
// - dimension numbers: the operands are rearranged into dense NC... / OI... and cuDNN's NC...
//   result into the output's layout (skipped where a layout already is that);
// - padding (asymmetric or cropping) and lhs dilation: written into the rearranged input as
//   zeros (a transposed convolution becomes a plain one), so cuDNN pads nothing;
// - batch_group_count G: the input's batch (G groups of N) becomes G groups of features, a
//   feature-grouped convolution of G groups (the CPU kernel's group g reads batch g * N + n);
// - 0 / 1 spatial dims: leading size-1 spatial dims up to 2 (cuDNN convolves 2-D and 3-D).
// dtypes: f32 and f64 convolve in their own type; bf16 / f16 in theirs (accumulating in f32)
// when the output keeps it, else the operands are widened to f32 first (the CPU's sums).
#pragma once

#include <cstdint>

#include "core/backend/cuda/conv/arrange.h"
#include "core/dtype/dtype.h"
#include "core/primitives/conv.h"

namespace graft::cuda::conv {

// cuDNN's convolution: dense NC... x, OI... w (I = x's features / groups), NC... y,
// cross-correlation, no padding; 2 or 3 spatial dims.
struct ConvShape {
  int spatial = 2;
  int64_t x[5] = {}, w[5] = {}, y[5] = {};  // the first 2 + spatial entries are used
  int64_t strides[3] = {1, 1, 1}, dilations[3] = {1, 1, 1};
  int64_t groups = 1;
  DType type = DType::kF32;  // x, w and y
};

struct ConvPlan {
  ConvShape conv;
  // Each operand is rearranged into cuDNN's layout (and dtype) unless it already is that;
  // cuDNN's result likewise into the output.
  bool arrange_lhs = false, arrange_rhs = false, arrange_out = false;
  Arrange lhs, rhs, out;
};

// The plan for operands lhs, rhs and output out (all non-empty). graft::Error naming the op
// for what the GPU path does not take: 4 or more spatial dims.
ConvPlan plan_conv(const ConvParams& p, const Aval& lhs, const Aval& rhs, const Aval& out);

}  // namespace graft::cuda::conv
