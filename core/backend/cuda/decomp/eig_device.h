// eig's own device kernels (eig_device.cu): cusolverDnXgeev's column-major results turned into
// graft's outputs (core/primitives/eig.h), as the CPU kernel (core/backend/cpu/eig_kernel.cc)
// turns LAPACK's: w [batch, n] and v [batch, n, n] complex (interleaved: real, imaginary),
// v row-major with the eigenvectors in its columns; NaNs for a matrix whose info != 0.
// Plain types only (no graft header in the .cu file). Enqueued on `stream`; launch errors
// surface at the caller's next check. Built only with --config=cuda.
#pragma once

#include <cstdint>

#include <cuda_runtime_api.h>

namespace graft::cuda::decomp {

// A real input: wri [batch, 2n] (n real parts, then n imaginary parts) and vr [batch, n, n]
// column-major real, a complex-conjugate pair (w_j, w_j+1 = conj(w_j), imaginary part of w_j
// positive) sharing columns j and j + 1: v_j = vr_j + i vr_j+1, v_j+1 = vr_j - i vr_j+1.
// vr and v may be null (eigenvalues only).
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
