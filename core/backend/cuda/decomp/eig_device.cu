#include "core/backend/cuda/decomp/eig_device.h"

#include <algorithm>
#include <cmath>

namespace graft::cuda::decomp {
namespace {

constexpr int kThreads = 256;
constexpr int64_t kMaxBlocks = 4096;

int blocks_for(int64_t work) {
  return static_cast<int>(std::clamp<int64_t>((work + kThreads - 1) / kThreads, 1, kMaxBlocks));
}

// One thread per element of [batch, n, n]: writes v[b, i, j] and, for i == 0, w[b, j].
template <typename R, bool kComplexInput>
__global__ void __launch_bounds__(kThreads)
    outputs_kernel(const R* win, const R* vr, const int* info, int64_t batch, int64_t n, R* w,
                   R* v) {
  const int64_t nn = n * n, total = batch * nn;
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t t = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; t < total;
       t += step) {
    const int64_t b = t / nn, i = (t / n) % n, j = t % n;
    const bool failed = info[b] != 0;
    const R nan = static_cast<R>(NAN);
    R wre, wim, vre = 0, vim = 0;
    if constexpr (kComplexInput) {
      wre = win[2 * (b * n + j)];
      wim = win[2 * (b * n + j) + 1];
      if (v != nullptr) {
        const int64_t at = 2 * (b * nn + j * n + i);  // column-major (i, j)
        vre = vr[at];
        vim = vr[at + 1];
      }
    } else {
      wre = win[b * 2 * n + j];
      wim = win[b * 2 * n + n + j];
      if (v != nullptr) {
        const R* col = vr + b * nn;  // column-major: (i, j) at j * n + i
        if (wim > 0 && j + 1 < n) {         // first of a pair
          vre = col[j * n + i];
          vim = col[(j + 1) * n + i];
        } else if (wim < 0 && j > 0) {      // second of a pair: the conjugate
          vre = col[(j - 1) * n + i];
          vim = -col[j * n + i];
        } else {
          vre = col[j * n + i];
        }
      }
    }
    if (i == 0) {
      w[2 * (b * n + j)] = failed ? nan : wre;
      w[2 * (b * n + j) + 1] = failed ? nan : wim;
    }
    if (v != nullptr) {
      v[2 * t] = failed ? nan : vre;  // row-major (i, j) is t within the batch
      v[2 * t + 1] = failed ? nan : vim;
    }
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
