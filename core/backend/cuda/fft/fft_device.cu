#include "core/backend/cuda/fft/fft_device.h"

#include <algorithm>

#include "core/backend/cuda/runtime/check.h"

namespace graft::cuda::fft {
namespace {

constexpr int kThreads = 256;
constexpr int64_t kMaxBlocks = 4096;

template <typename R>
__global__ void __launch_bounds__(kThreads) scale_kernel(R* x, int64_t n, R s) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) {
    x[i] *= s;
  }
}

template <typename R>
void run(R* x, int64_t n, double s, cudaStream_t stream) {
  if (n <= 0) return;
  const int blocks = static_cast<int>(std::clamp<int64_t>((n + kThreads - 1) / kThreads, 1, kMaxBlocks));
  scale_kernel<<<blocks, kThreads, 0, stream>>>(x, n, static_cast<R>(s));
  check(cudaGetLastError(), "fft scale kernel");
}

}  // namespace

void scale(float* x, int64_t n, double s, cudaStream_t stream) { run(x, n, s, stream); }
void scale(double* x, int64_t n, double s, cudaStream_t stream) { run(x, n, s, stream); }

}  // namespace graft::cuda::fft
