#include "core/backend/cuda/decomp/eig_device.h"
#include "core/backend/cuda/decomp/eig_unpack.h"

#include <algorithm>

namespace graft::cuda::decomp {
namespace {

constexpr int kThreads = 256;
constexpr int64_t kMaxBlocks = 4096;

int blocks_for(int64_t work) {
  return static_cast<int>(std::clamp<int64_t>((work + kThreads - 1) / kThreads, 1, kMaxBlocks));
}

// One thread per element of [batch, n, n] (eig_unpack.h).
template <typename R, bool kComplexInput>
__global__ void __launch_bounds__(kThreads)
    outputs_kernel(const R* win, const R* vr, const int* info, int64_t batch, int64_t n, R* w,
                   R* v) {
  const int64_t total = batch * n * n;
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t t = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; t < total;
       t += step) {
    eig_output_element<R, kComplexInput>(win, vr, info, n, t, w, v);
  }
}

template <bool kComplexInput, typename R>
void run(const R* win, const R* vr, const int* info, int64_t batch, int64_t n, R* w, R* v,
         cudaStream_t stream) {
  const int64_t total = batch * n * n;
  if (total == 0) return;
  outputs_kernel<R, kComplexInput><<<blocks_for(total), kThreads, 0, stream>>>(win, vr, info,
                                                                              batch, n, w, v);
}

}  // namespace

void eig_outputs_real(const float* wri, const float* vr, const int* info, int64_t batch,
                      int64_t n, float* w, float* v, cudaStream_t stream) {
  run<false>(wri, vr, info, batch, n, w, v, stream);
}
void eig_outputs_real(const double* wri, const double* vr, const int* info, int64_t batch,
                      int64_t n, double* w, double* v, cudaStream_t stream) {
  run<false>(wri, vr, info, batch, n, w, v, stream);
}
void eig_outputs_complex(const float* wc, const float* vr, const int* info, int64_t batch,
                         int64_t n, float* w, float* v, cudaStream_t stream) {
  run<true>(wc, vr, info, batch, n, w, v, stream);
}
void eig_outputs_complex(const double* wc, const double* vr, const int* info, int64_t batch,
                         int64_t n, double* w, double* v, cudaStream_t stream) {
  run<true>(wc, vr, info, batch, n, w, v, stream);
}

}  // namespace graft::cuda::decomp
