// Overloads of the cuSOLVER / cuBLAS routines the factorizations use, so each kernel is
// written once for f32 and f64 (as core/backend/cpu/decomp_kernels.cc does for LAPACK).
// Column-major, 32-bit sizes (the callers refuse larger matrices). Built only with --config=cuda.
#pragma once

#include <cublas_v2.h>
#include <cusolverDn.h>

namespace graft::cuda::decomp {

#define GRAFT_SOLVER_OVERLOADS(T, X)                                                              \
  inline cusolverStatus_t potrf_size(cusolverDnHandle_t h, cublasFillMode_t u, int n, T* a,      \
                                     int* lw) {                                                   \
    return cusolverDn##X##potrf_bufferSize(h, u, n, a, n, lw);                                    \
  }                                                                                               \
  inline cusolverStatus_t potrf(cusolverDnHandle_t h, cublasFillMode_t u, int n, T* a, T* w,     \
                                int lw, int* info) {                                              \
    return cusolverDn##X##potrf(h, u, n, a, n, w, lw, info);                                      \
  }                                                                                               \
  inline cusolverStatus_t geqrf_size(cusolverDnHandle_t h, int m, int n, T* a, int* lw) {        \
    return cusolverDn##X##geqrf_bufferSize(h, m, n, a, m, lw);                                    \
  }                                                                                               \
  inline cusolverStatus_t geqrf(cusolverDnHandle_t h, int m, int n, T* a, T* tau, T* w, int lw,  \
                                int* info) {                                                      \
    return cusolverDn##X##geqrf(h, m, n, a, m, tau, w, lw, info);                                 \
  }                                                                                               \
  inline cusolverStatus_t orgqr_size(cusolverDnHandle_t h, int m, int n, int k, const T* a,      \
                                     const T* tau, int* lw) {                                     \
    return cusolverDn##X##orgqr_bufferSize(h, m, n, k, a, m, tau, lw);                            \
  }                                                                                               \
  inline cusolverStatus_t orgqr(cusolverDnHandle_t h, int m, int n, int k, T* a, const T* tau,   \
                                T* w, int lw, int* info) {                                        \
    return cusolverDn##X##orgqr(h, m, n, k, a, m, tau, w, lw, info);                              \
  }                                                                                               \
  inline cusolverStatus_t gesvd_size(cusolverDnHandle_t h, int m, int n, T*, int* lw) {          \
    return cusolverDn##X##gesvd_bufferSize(h, m, n, lw);                                          \
  }                                                                                               \
  inline cusolverStatus_t gesvd(cusolverDnHandle_t h, signed char ju, signed char jv, int m,     \
                                int n, T* a, T* s, T* u, int ldu, T* vt, int ldvt, T* w, int lw, \
                                T* rwork, int* info) {                                            \
    return cusolverDn##X##gesvd(h, ju, jv, m, n, a, m, s, u, ldu, vt, ldvt, w, lw, rwork, info);  \
  }                                                                                               \
  inline cusolverStatus_t syevd_size(cusolverDnHandle_t h, cublasFillMode_t u, int n,            \
                                     const T* a, const T* ev, int* lw) {                          \
    return cusolverDn##X##syevd_bufferSize(h, CUSOLVER_EIG_MODE_VECTOR, u, n, a, n, ev, lw);      \
  }                                                                                               \
  inline cusolverStatus_t syevd(cusolverDnHandle_t h, cublasFillMode_t u, int n, T* a, T* ev,    \
                                T* w, int lw, int* info) {                                        \
    return cusolverDn##X##syevd(h, CUSOLVER_EIG_MODE_VECTOR, u, n, a, n, ev, w, lw, info);        \
  }                                                                                               \
  inline cusolverStatus_t getrf_size(cusolverDnHandle_t h, int m, int n, T* a, int* lw) {        \
    return cusolverDn##X##getrf_bufferSize(h, m, n, a, m, lw);                                    \
  }                                                                                               \
  inline cusolverStatus_t getrf(cusolverDnHandle_t h, int m, int n, T* a, T* w, int* ipiv,       \
                                int* info) {                                                      \
    return cusolverDn##X##getrf(h, m, n, a, m, w, ipiv, info);                                    \
  }                                                                                               \
  inline cusolverStatus_t potrf_batched(cusolverDnHandle_t h, cublasFillMode_t u, int n, T** a,  \
                                        int* info, int batch) {                                   \
    return cusolverDn##X##potrfBatched(h, u, n, a, n, info, batch);                               \
  }                                                                                               \
  inline cublasStatus_t trsm_batched(cublasHandle_t h, cublasSideMode_t s, cublasFillMode_t u,   \
                                     cublasOperation_t t, cublasDiagType_t d, int m, int n,       \
                                     const T* const* a, int lda, T* const* b, int ldb, int batch) \
  {                                                                                               \
    const T one = 1;                                                                              \
    return cublas##X##trsmBatched(h, s, u, t, d, m, n, &one, a, lda, b, ldb, batch);              \
  }                                                                                               \
  inline cublasStatus_t trsm(cublasHandle_t h, cublasSideMode_t s, cublasFillMode_t u,           \
                             cublasOperation_t t, cublasDiagType_t d, int m, int n, const T* a,   \
                             int lda, T* b, int ldb) {                                            \
    const T one = 1;                                                                              \
    return cublas##X##trsm(h, s, u, t, d, m, n, &one, a, lda, b, ldb);                            \
  }

GRAFT_SOLVER_OVERLOADS(float, S)
GRAFT_SOLVER_OVERLOADS(double, D)
#undef GRAFT_SOLVER_OVERLOADS

}  // namespace graft::cuda::decomp
