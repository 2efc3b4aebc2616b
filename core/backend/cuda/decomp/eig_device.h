// eig's own device kernel (eig_device.cu): cusolverDnXgeev's column-major results turned into
// graft's outputs, element by element as eig_unpack.h defines (w, v complex interleaved).
// Plain types only (no graft header in the .cu file). Enqueued on `stream`; launch errors
// surface at the caller's next check. Built only with --config=cuda.
#pragma once

#include <cstdint>

#include <cuda_runtime_api.h>

namespace graft::cuda::decomp {

// A real input: wri [batch, 2n] (real parts, then imaginary parts) and vr [batch, n, n] real
// with LAPACK's packing of conjugate pairs; see eig_unpack.h. vr and v may be null.
void eig_outputs_real(const float* wri, const float* vr, const int* info, int64_t batch,
                      int64_t n, float* w, float* v, cudaStream_t stream);
void eig_outputs_real(const double* wri, const double* vr, const int* info, int64_t batch,
                      int64_t n, double* w, double* v, cudaStream_t stream);

// A complex input: wc [batch, n] and vr [batch, n, n] column-major, both complex.
void eig_outputs_complex(const float* wc, const float* vr, const int* info, int64_t batch,
                         int64_t n, float* w, float* v, cudaStream_t stream);
void eig_outputs_complex(const double* wc, const double* vr, const int* info, int64_t batch,
                         int64_t n, double* w, double* v, cudaStream_t stream);

}  // namespace graft::cuda::decomp
