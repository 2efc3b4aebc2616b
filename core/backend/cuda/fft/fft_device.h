// The fft kernel's own device work (fft_device.cu): the 1 / n scaling of IFFT / IRFFT results,
// which cuFFT leaves to its caller. Enqueued on `stream`; a failed launch throws graft::Error.
// Built only with --config=cuda.
#pragma once

#include <cstdint>

#include <cuda_runtime_api.h>

namespace graft::cuda::fft {

// x[i] *= s for i < n (a complex array is 2n reals).
void scale(float* x, int64_t n, double s, cudaStream_t stream);
void scale(double* x, int64_t n, double s, cudaStream_t stream);

}  // namespace graft::cuda::fft
