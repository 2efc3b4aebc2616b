// How eig's CUDA kernel turns cusolverDnXgeev's column-major results into graft's outputs
// (core/primitives/eig.h): one element at a time, plain C++ compiled for the device by nvcc
// (eig_device.cu) and for the host by tests/cuda:eig_layout_test, which feeds it LAPACK's
// column-major geev results (what Xgeev documents it returns) and compares with the CPU
// kernel. Outputs as the CPU kernel's (core/backend/cpu/eig_kernel.cc): w [batch, n] and
// v [batch, n, n] complex (interleaved real, imaginary), v row-major with the eigenvectors in
// its columns; NaNs for a matrix whose info != 0.
#pragma once

#include <cmath>
#include <cstdint>

#ifdef __CUDACC__
#define GRAFT_EIG_HD __host__ __device__
#else
#define GRAFT_EIG_HD
#endif

namespace graft::cuda::decomp {

// Element t of [batch, n, n] (b = t / n^2, row i, column j): writes v[b, i, j] and, for
// i == 0, w[b, j]. vr and v may be null (eigenvalues only).
//   A real input (kComplexInput false): win [batch, 2n] holds n real parts, then n imaginary
//   parts; vr [batch, n, n] is real, column-major, with LAPACK's packing: a complex-conjugate
//   pair (w_j, w_j+1 = conj(w_j), imaginary part of w_j positive) shares columns j and j + 1,
//   v_j = vr_j + i vr_j+1 and v_j+1 = vr_j - i vr_j+1.
//   A complex input: win [batch, n] and vr [batch, n, n] column-major, both complex.
template <typename R, bool kComplexInput>
GRAFT_EIG_HD inline void eig_output_element(const R* win, const R* vr, const int* info,
                                            int64_t n, int64_t t, R* w, R* v) {
  const int64_t nn = n * n, b = t / nn, i = (t / n) % n, j = t % n;
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
      if (wim > 0 && j + 1 < n) {  // the first of a pair
        vre = col[j * n + i];
        vim = col[(j + 1) * n + i];
      } else if (wim < 0 && j > 0) {  // the second of a pair: the conjugate
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
    v[2 * t] = failed ? nan : vre;  // row-major (i, j) of matrix b is element t
    v[2 * t + 1] = failed ? nan : vim;
  }
}

}  // namespace graft::cuda::decomp
