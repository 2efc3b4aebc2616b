// How the CUDA kernel of lax.fft (fft_kernels.cc) asks cuFFT for one transform: plain C++ (no
// CUDA header), so tests/cuda:fft_plan_test carries each plan out on the CPU in every build and
// compares with the CPU's PocketFFT kernel (core/backend/cpu/fft_kernel.cc).
//
// The transformed dims are the operand's trailing `rank` (1 to 3) dims, row-major and dense;
// the leading dims are one batch, so every fft is one cufftPlanMany-style plan ("advanced data
// layout"): element x of batch b sits at b * dist + ((x_0 * embed[1] + x_1) * embed[2] + x_2)
// * stride, with stride 1 and dist the product of the embed dims. cuFFT is unnormalized in
// both directions; IFFT and IRFFT scale by 1 / (n_1 * ... * n_k) afterwards, as the CPU.
#pragma once

#include <cstdint>
#include <vector>

#include "core/dtype/dtype.h"
#include "core/primitives/fft.h"
#include "core/shape.h"

namespace graft::cuda::fft {

// cuFFT's transform kinds (C2C: cufftExecC2C / Z2Z, R2C: D2Z / R2C, C2R: C2R / Z2D).
enum class FftKind { kC2C, kR2C, kC2R };

struct FftPlan {
  FftKind kind = FftKind::kC2C;
  bool forward = true;          // C2C's direction (R2C is forward, C2R inverse)
  bool double_precision = false;
  std::vector<int64_t> n;       // logical transform sizes (fft_lengths), 1 to 3
  std::vector<int64_t> inembed, onembed;  // the operand's / output's trailing dims
  int64_t istride = 1, ostride = 1;
  int64_t idist = 0, odist = 0;  // elements between consecutive batch members
  int64_t batch = 0;             // product of the leading dims
  double scale = 1;              // applied to the output after the transform
  int64_t in_elements = 0, out_elements = 0;  // in the operand's / output's element type
  // What the kernel does besides the transform: nothing at all (an empty output), or only
  // zero the output (an empty operand: no term to sum, as the CPU's).
  bool empty_output = false, zero_output = false;
  // C2R overwrites its input in cuFFT: the kernel transforms a copy.
  bool copy_input = false;
};

// The plan for Fft(type, lengths) on `in` giving `out` (shapes as Fft::infer makes them).
FftPlan plan_fft(FftType type, const Shape& lengths, const Aval& in, const Aval& out);

}  // namespace graft::cuda::fft
