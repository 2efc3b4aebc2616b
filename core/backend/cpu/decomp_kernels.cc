// CPU kernels of the factorizations (core/primitives/decomp.h): the one translation unit that
// calls LAPACK (LAPACKE, row-major) and BLAS's trsm. Each kernel loops over the leading batch
// dims, one matrix at a time. A factorization LAPACK reports as failed (not positive
// definite, no convergence) gives NaNs, as JAX's CPU kernels do.
#include <cblas.h>
#include <lapacke.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <numeric>
#include <vector>

#include "core/backend/cpu/kernel.h"
#include "core/error.h"
#include "core/primitives/decomp.h"

namespace graft::cpu {
namespace {

constexpr int kRow = LAPACK_ROW_MAJOR;

// Overloads so each kernel is written once for f32 and f64.
lapack_int potrf(float* a, lapack_int n) { return LAPACKE_spotrf(kRow, 'L', n, a, n); }
lapack_int potrf(double* a, lapack_int n) { return LAPACKE_dpotrf(kRow, 'L', n, a, n); }
lapack_int geqrf(float* a, lapack_int m, lapack_int n, float* tau) {
  return LAPACKE_sgeqrf(kRow, m, n, a, n, tau);
}
lapack_int geqrf(double* a, lapack_int m, lapack_int n, double* tau) {
  return LAPACKE_dgeqrf(kRow, m, n, a, n, tau);
}
lapack_int orgqr(float* a, lapack_int m, lapack_int n, lapack_int k, const float* tau) {
  return LAPACKE_sorgqr(kRow, m, n, k, a, n, tau);
}
lapack_int orgqr(double* a, lapack_int m, lapack_int n, lapack_int k, const double* tau) {
  return LAPACKE_dorgqr(kRow, m, n, k, a, n, tau);
}
lapack_int gesdd(char job, lapack_int m, lapack_int n, float* a, float* s, float* u,
                 lapack_int ldu, float* vt, lapack_int ldvt) {
  return LAPACKE_sgesdd(kRow, job, m, n, a, n, s, u, ldu, vt, ldvt);
}
lapack_int gesdd(char job, lapack_int m, lapack_int n, double* a, double* s, double* u,
                 lapack_int ldu, double* vt, lapack_int ldvt) {
  return LAPACKE_dgesdd(kRow, job, m, n, a, n, s, u, ldu, vt, ldvt);
}
lapack_int syevd(char uplo, float* a, lapack_int n, float* w) {
  return LAPACKE_ssyevd(kRow, 'V', uplo, n, a, n, w);
}
lapack_int syevd(char uplo, double* a, lapack_int n, double* w) {
  return LAPACKE_dsyevd(kRow, 'V', uplo, n, a, n, w);
}
lapack_int getrf(float* a, lapack_int m, lapack_int n, lapack_int* ipiv) {
  return LAPACKE_sgetrf(kRow, m, n, a, n, ipiv);
}
lapack_int getrf(double* a, lapack_int m, lapack_int n, lapack_int* ipiv) {
  return LAPACKE_dgetrf(kRow, m, n, a, n, ipiv);
}
void trsm(CBLAS_SIDE side, CBLAS_UPLO uplo, CBLAS_TRANSPOSE t, CBLAS_DIAG diag, int m, int n,
          const float* a, float* b) {
  cblas_strsm(CblasRowMajor, side, uplo, t, diag, m, n, 1.0f, a, side == CblasLeft ? m : n, b, n);
}
void trsm(CBLAS_SIDE side, CBLAS_UPLO uplo, CBLAS_TRANSPOSE t, CBLAS_DIAG diag, int m, int n,
          const double* a, double* b) {
  cblas_dtrsm(CblasRowMajor, side, uplo, t, diag, m, n, 1.0, a, side == CblasLeft ? m : n, b, n);
}

template <typename T>
void fill_nan(T* p, int64_t n) {
  std::fill_n(p, n, std::numeric_limits<T>::quiet_NaN());
}

// The matrix dims of an aval [..., r, c] and its batch count.
struct Dims {
  int64_t batch, rows, cols;
};
Dims dims_of(const Aval& a) {
  const Shape& s = a.shape;
  Dims d{1, s[s.size() - 2], s.back()};
  for (size_t i = 0; i + 2 < s.size(); ++i) d.batch *= s[i];
  return d;
}

// LAPACK takes 32-bit sizes: larger matrices are refused, not truncated.
lapack_int lp(std::string_view op, int64_t v) {
  if (v > std::numeric_limits<lapack_int>::max()) fail(op, "a matrix dim of ", v, " is too large");
  return static_cast<lapack_int>(v);
}

template <typename T>
void cholesky(Call& call) {
  const Dims d = dims_of(call.in_aval(0));
  const int64_t n = d.rows, nn = n * n;
  T* out = call.out<T>();
  std::memcpy(out, call.in<T>(0), sizeof(T) * d.batch * nn);
  for (int64_t b = 0; b < d.batch && n > 0; ++b) {
    T* a = out + b * nn;
    // Not positive definite: NaN in the lower triangle, the upper kept 0 (as JAX's).
    const bool failed = potrf(a, lp("cholesky", n)) != 0;
    for (int64_t i = 0; i < n; ++i) {
      if (failed) fill_nan(a + i * n, i + 1);
      std::fill(a + i * n + i + 1, a + (i + 1) * n, T(0));
    }
  }
}

template <typename T>
void qr(Call& call) {
  const bool full = call.params<Qr>().full_matrices();
  const Dims d = dims_of(call.in_aval(0));
  const int64_t m = d.rows, n = d.cols, k = std::min(m, n);
  const int64_t qc = full ? m : k, rr = full ? m : k;  // q's columns, r's rows
  T* q = call.out<T>(0);
  T* r = call.out<T>(1);
  std::vector<T> a(m * n), tau(std::max<int64_t>(k, 1));
  for (int64_t b = 0; b < d.batch; ++b) {
    std::memcpy(a.data(), call.in<T>(0) + b * m * n, sizeof(T) * m * n);
    T* qb = q + b * m * qc;
    T* rb = r + b * rr * n;
    if (k > 0 && geqrf(a.data(), lp("qr", m), lp("qr", n), tau.data()) != 0) {
      fill_nan(qb, m * qc);
      fill_nan(rb, rr * n);
      continue;
    }
    for (int64_t i = 0; i < rr; ++i) {
      for (int64_t j = 0; j < n; ++j) rb[i * n + j] = (j >= i && i < m) ? a[i * n + j] : T(0);
    }
    if (m == 0 || qc == 0) continue;
    // q: the reflectors (a's first k columns) expanded to qc orthonormal columns.
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < qc; ++j) qb[i * qc + j] = j < k ? a[i * n + j] : T(0);
    }
    if (orgqr(qb, lp("qr", m), lp("qr", qc), lp("qr", k), tau.data()) != 0) fill_nan(qb, m * qc);
  }
}

template <typename T>
void svd(Call& call) {
  const auto& p = call.params<Svd>();
  const Dims d = dims_of(call.in_aval(0));
  const int64_t m = d.rows, n = d.cols, k = std::min(m, n);
  const bool uv = p.compute_uv(), full = p.full_matrices();
  const int64_t uc = full ? m : k, vr = full ? n : k;
  T* s = call.out<T>(0);
  T* u = uv ? call.out<T>(1) : nullptr;
  T* vt = uv ? call.out<T>(2) : nullptr;
  std::vector<T> a(m * n);
  // Job 'N' references neither u nor vt, but LAPACKE's row-major checks still want vt's
  // leading dim >= n: scratch of that size.
  std::vector<T> su(1), svt(std::max<int64_t>(n, 1));
  for (int64_t b = 0; b < d.batch; ++b) {
    T* sb = s + b * k;
    T* ub = uv ? u + b * m * uc : su.data();
    T* vb = uv ? vt + b * vr * n : svt.data();
    if (k == 0) {
      // An empty matrix: u and vt are identities where they have any size.
      for (int64_t i = 0; uv && i < m; ++i)
        for (int64_t j = 0; j < uc; ++j) ub[i * uc + j] = T(i == j);
      for (int64_t i = 0; uv && i < vr; ++i)
        for (int64_t j = 0; j < n; ++j) vb[i * n + j] = T(i == j);
      continue;
    }
    std::memcpy(a.data(), call.in<T>(0) + b * m * n, sizeof(T) * m * n);
    const char job = !uv ? 'N' : full ? 'A' : 'S';
    lapack_int info = gesdd(job, lp("svd", m), lp("svd", n), a.data(), sb, ub,
                            uv ? lp("svd", uc) : 1, vb, lp("svd", n));
    if (info != 0) {
      fill_nan(sb, k);
      if (uv) {
        fill_nan(ub, m * uc);
        fill_nan(vb, vr * n);
      }
    }
  }
}

template <typename T>
void eigh(Call& call) {
  const char uplo = call.params<Eigh>().lower() ? 'L' : 'U';
  const Dims d = dims_of(call.in_aval(0));
  const int64_t n = d.rows, nn = n * n;
  T* v = call.out<T>(0);
  T* w = call.out<T>(1);
  std::memcpy(v, call.in<T>(0), sizeof(T) * d.batch * nn);
  for (int64_t b = 0; b < d.batch && n > 0; ++b) {
    if (syevd(uplo, v + b * nn, lp("eigh", n), w + b * n) != 0) {
      fill_nan(v + b * nn, nn);
      fill_nan(w + b * n, n);
    }
  }
}

template <typename T>
void lu(Call& call) {
  const Dims d = dims_of(call.in_aval(0));
  const int64_t m = d.rows, n = d.cols, k = std::min(m, n);
  T* out = call.out<T>(0);
  auto* pivots = call.out<int32_t>(1);
  auto* perm = call.out<int32_t>(2);
  std::memcpy(out, call.in<T>(0), sizeof(T) * d.batch * m * n);
  std::vector<lapack_int> ipiv(std::max<int64_t>(k, 1));
  for (int64_t b = 0; b < d.batch; ++b) {
    int32_t* pv = pivots + b * k;
    int32_t* pm = perm + b * m;
    std::iota(pm, pm + m, 0);
    if (k == 0) continue;
    // info > 0 (an exactly zero pivot) still leaves a complete factorization, as in JAX.
    getrf(out + b * m * n, lp("lu", m), lp("lu", n), ipiv.data());
    for (int64_t i = 0; i < k; ++i) {
      pv[i] = ipiv[i] - 1;  // LAPACK counts from 1
      std::swap(pm[i], pm[pv[i]]);
    }
  }
}

template <typename T>
void triangular_solve(Call& call) {
  const TriangularSolveParams& p = call.params<TriangularSolve>().options();
  const Dims da = dims_of(call.in_aval(0)), db = dims_of(call.in_aval(1));
  const int64_t ma = da.rows, bm = db.rows, bn = db.cols;
  T* x = call.out<T>();
  std::memcpy(x, call.in<T>(1), sizeof(T) * db.batch * bm * bn);
  if (ma == 0 || bm == 0 || bn == 0) return;
  const CBLAS_SIDE side = p.left_side ? CblasLeft : CblasRight;
  const CBLAS_UPLO uplo = p.lower ? CblasLower : CblasUpper;
  const CBLAS_TRANSPOSE t = p.transpose_a ? CblasTrans : CblasNoTrans;
  const CBLAS_DIAG diag = p.unit_diagonal ? CblasUnit : CblasNonUnit;
  for (int64_t b = 0; b < db.batch; ++b) {
    trsm(side, uplo, t, diag, lp("triangular_solve", bm), lp("triangular_solve", bn),
         call.in<T>(0) + b * ma * ma, x + b * bm * bn);
  }
}

// Dispatches a kernel template on the operand dtype (the shape rule allows f32 and f64).
#define GRAFT_DECOMP_KERNEL(fn)                                              \
  void fn##_kernel(Call& call) {                                             \
    if (call.in_aval(0).dtype == DType::kF64) return fn<double>(call);       \
    return fn<float>(call);                                                  \
  }
GRAFT_DECOMP_KERNEL(cholesky)
GRAFT_DECOMP_KERNEL(qr)
GRAFT_DECOMP_KERNEL(svd)
GRAFT_DECOMP_KERNEL(eigh)
GRAFT_DECOMP_KERNEL(lu)
GRAFT_DECOMP_KERNEL(triangular_solve)
#undef GRAFT_DECOMP_KERNEL

}  // namespace

void register_decomp_kernels(KernelTable& table) {
  table[static_cast<int>(PrimitiveId::kCholesky)] = &cholesky_kernel;
  table[static_cast<int>(PrimitiveId::kQr)] = &qr_kernel;
  table[static_cast<int>(PrimitiveId::kSvd)] = &svd_kernel;
  table[static_cast<int>(PrimitiveId::kEigh)] = &eigh_kernel;
  table[static_cast<int>(PrimitiveId::kLu)] = &lu_kernel;
  table[static_cast<int>(PrimitiveId::kTriangularSolve)] = &triangular_solve_kernel;
}

}  // namespace graft::cpu
