// CUDA kernels of the factorizations (core/primitives/decomp.h) through cuSOLVER's dense
// routines and cuBLAS's trsm, with the CPU kernels' conventions (core/backend/cpu/
// decomp_kernels.cc): row-major matrices in the last two dims, the leading dims a batch
// (potrfBatched for small matrices and trsmBatched; a call per matrix for the rest, as
// cuSOLVER has no batched geqrf / syevd / gesvd / getrf for general sizes), and a
// factorization cuSOLVER reports as failed (info != 0) gives NaNs, never an error. Each info
// stays on the device: a kernel turns it into NaNs, so nothing synchronizes.
//
// cuSOLVER is column-major. A row-major buffer read column-major is the transpose, which
// some kernels use directly (cholesky, eigh's input, svd of a wide matrix, trsm); the others
// copy to a column-major scratch and back (decomp_device.h).
#include <algorithm>
#include <cstring>
#include <limits>
#include <string_view>
#include <vector>

#include "core/backend/cuda/decomp/decomp_device.h"
#include "core/backend/cuda/decomp/solver_calls.h"
#include "core/backend/cuda/decomp/solver_handles.h"
#include "core/backend/cuda/kernel.h"
#include "core/backend/cuda/runtime/blaslt_matmul.h"  // check(cublasStatus_t)
#include "core/backend/cuda/runtime/check.h"
#include "core/error.h"
#include "core/primitives/decomp.h"

namespace graft::cuda {
namespace {

using decomp::copy_matrix;
using decomp::Keep;
using decomp::Lease;
using decomp::MatrixCopy;

struct Dims {
  int64_t batch, rows, cols;
};
Dims dims_of(const Aval& a) {
  const Shape& s = a.shape;
  Dims d{1, s[s.size() - 2], s.back()};
  for (size_t i = 0; i + 2 < s.size(); ++i) d.batch *= s[i];
  return d;
}

// cuSOLVER takes 32-bit sizes: larger matrices are refused, not truncated.
int lp(std::string_view op, int64_t v) {
  if (v > std::numeric_limits<int>::max()) graft::fail(op, "a matrix dim of ", v, " is too large");
  return static_cast<int>(v);
}

// Typed scratch memory of the call (at least one element, so pointers are never null).
template <typename T>
T* scratch(Call& call, int64_t n) {
  return static_cast<T*>(call.scratch(sizeof(T) * static_cast<size_t>(std::max<int64_t>(n, 1))));
}

void copy_device(Call& call, void* dst, const void* src, size_t bytes) {
  if (bytes > 0) {
    check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, call.stream()),
          "cudaMemcpyAsync");
  }
}

// A dense [batch, rows, cols] matrix stack, row-major or column-major.
MatrixCopy row_major(int64_t batch, int64_t rows, int64_t cols) {
  MatrixCopy c;
  c.batch = batch;
  c.rows = c.src_rows = rows;
  c.cols = c.src_cols = cols;
  c.src_batch = c.dst_batch = rows * cols;
  c.src_row = c.dst_row = cols;
  c.src_col = c.dst_col = 1;
  return c;
}
// Reads a column-major stack (leading dim `ld`) into a row-major one of the same shape.
MatrixCopy from_col_major(int64_t batch, int64_t rows, int64_t cols, int64_t ld) {
  MatrixCopy c = row_major(batch, rows, cols);
  c.src_batch = ld * cols;
  c.src_row = 1;
  c.src_col = ld;
  return c;
}
// Writes a row-major stack into a column-major one (leading dim rows).
MatrixCopy to_col_major(int64_t batch, int64_t rows, int64_t cols) {
  MatrixCopy c = row_major(batch, rows, cols);
  c.dst_row = 1;
  c.dst_col = rows;
  return c;
}

// A device array of the batch's matrix pointers (base + b * stride), for the batched
// routines. The host copy may go when this returns: a copy from pageable memory is staged
// before cudaMemcpyAsync returns.
template <typename T>
T** matrix_pointers(Call& call, T* base, int64_t stride, int64_t batch) {
  std::vector<T*> host(batch);
  for (int64_t b = 0; b < batch; ++b) host[b] = base + b * stride;
  T** dev = scratch<T*>(call, batch);
  check(cudaMemcpyAsync(dev, host.data(), sizeof(T*) * batch, cudaMemcpyHostToDevice,
                        call.stream()),
        "cudaMemcpyAsync (matrix pointers)");
  return dev;
}

// Batches of small matrices take the batched routines (as jaxlib does: many small
// factorizations in one launch), larger ones a call per matrix.
constexpr int64_t kBatchedMaxDim = 32;

// The device workspace of a routine, asked for once per kernel (every matrix of the batch
// has the same size).
template <typename T>
T* workspace(Call& call, cusolverStatus_t status, int lwork, std::string_view what) {
  check(status, what);
  return scratch<T>(call, lwork);
}

template <typename T>
void cholesky(Call& call) {
  const Dims d = dims_of(call.in_aval(0));
  const int n = lp("cholesky", d.rows);
  const int64_t nn = d.rows * d.rows;
  T* out = call.out<T>();
  copy_device(call, out, call.in<T>(0), sizeof(T) * d.batch * nn);
  if (d.batch * nn == 0) return;
  // x's lower triangle (row-major) is the upper one of the column-major view; potrf's upper
  // factor U (x = U^T U) read row-major is L.
  Lease lease(call.device(), call.stream());
  const cublasFillMode_t upper = CUBLAS_FILL_MODE_UPPER;
  int* info = scratch<int>(call, d.batch);
  if (d.batch > 1 && n <= kBatchedMaxDim) {
    check(decomp::potrf_batched(lease.solver(), upper, n, matrix_pointers(call, out, nn, d.batch),
                                info, lp("cholesky", d.batch)),
          "cusolverDnXpotrfBatched");
  } else {
    int lwork = 0;
    T* work = workspace<T>(call, decomp::potrf_size(lease.solver(), upper, n, out, &lwork), lwork,
                           "cusolverDnXpotrf_bufferSize");
    for (int64_t b = 0; b < d.batch; ++b) {
      check(decomp::potrf(lease.solver(), upper, n, out + b * nn, work, lwork, info + b),
            "cusolverDnXpotrf");
    }
  }
  MatrixCopy c = row_major(d.batch, d.rows, d.rows);
  c.keep = Keep::kLower;
  c.info = info;
  copy_matrix(out, out, c, call.stream());
}

template <typename T>
void qr(Call& call) {
  const bool full = call.params<Qr>().full_matrices();
  const Dims d = dims_of(call.in_aval(0));
  const int64_t m = d.rows, n = d.cols, k = std::min(m, n);
  const int64_t qc = full ? m : k, rr = full ? m : k;  // q's columns, r's rows
  const int mi = lp("qr", m), ni = lp("qr", n), ki = lp("qr", k), qci = lp("qr", qc);
  T* q = call.out<T>(0);
  T* r = call.out<T>(1);
  if (d.batch == 0) return;
  Lease lease(call.device(), call.stream());
  T* a = scratch<T>(call, d.batch * m * n);  // column-major, leading dim m
  copy_matrix(call.in<T>(0), a, to_col_major(d.batch, m, n), call.stream());
  T* tau = scratch<T>(call, d.batch * k);
  int* info = scratch<int>(call, d.batch);
  if (k > 0) {
    int lwork = 0;
    T* work = workspace<T>(call, decomp::geqrf_size(lease.solver(), mi, ni, a, &lwork), lwork,
                           "cusolverDnXgeqrf_bufferSize");
    for (int64_t b = 0; b < d.batch; ++b) {
      check(decomp::geqrf(lease.solver(), mi, ni, a + b * m * n, tau + b * k, work, lwork,
                          info + b),
            "cusolverDnXgeqrf");
    }
  }
  // r: the upper triangle of geqrf's result (rows past m cannot occur: rr <= m).
  MatrixCopy rc = from_col_major(d.batch, rr, n, m);
  rc.keep = Keep::kUpper;
  copy_matrix(a, r, rc, call.stream());
  if (m == 0 || qc == 0) return;
  if (k == 0) {  // no reflectors: q is the identity's first qc columns
    copy_matrix(nullptr, q, row_major(d.batch, m, qc), call.stream());
    return;
  }
  // q: the reflectors (a's first k columns) expanded by orgqr to qc orthonormal columns.
  T* qa = scratch<T>(call, d.batch * m * qc);  // column-major, leading dim m
  MatrixCopy qin = from_col_major(d.batch, m, qc, m);
  qin.src_batch = m * n;
  qin.src_cols = k;
  qin.dst_batch = m * qc;
  qin.dst_row = 1;
  qin.dst_col = m;
  copy_matrix(a, qa, qin, call.stream());
  int lwork = 0;
  T* work = workspace<T>(call, decomp::orgqr_size(lease.solver(), mi, qci, ki, qa, tau, &lwork),
                         lwork, "cusolverDnXorgqr_bufferSize");
  for (int64_t b = 0; b < d.batch; ++b) {
    check(decomp::orgqr(lease.solver(), mi, qci, ki, qa + b * m * qc, tau + b * k, work, lwork,
                        info + b),
          "cusolverDnXorgqr");
  }
  MatrixCopy qout = from_col_major(d.batch, m, qc, m);
  qout.info = info;  // an orgqr that failed: NaNs, as the CPU's
  copy_matrix(qa, q, qout, call.stream());
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
  if (d.batch == 0) return;
  if (k == 0) {
    // An empty matrix: u and vt are identities where they have any size.
    if (uv) {
      copy_matrix(nullptr, u, row_major(d.batch, m, uc), call.stream());
      copy_matrix(nullptr, vt, row_major(d.batch, vr, n), call.stream());
    }
    return;
  }
  Lease lease(call.device(), call.stream());
  const signed char job = !uv ? 'N' : full ? 'A' : 'S';
  int* info = scratch<int>(call, d.batch);
  T* rwork = scratch<T>(call, k);
  T* a = scratch<T>(call, d.batch * m * n);
  // gesvd wants rows >= cols. A wide (or square) x read column-major is x^T = U S V^T, so
  // x = V S U^T: gesvd's U read row-major is x's vt and its V^T read row-major is x's u, each
  // written straight into the outputs. A tall x is copied column-major and its factors back.
  const bool wide = m <= n;
  const int64_t rows = wide ? n : m, cols = wide ? m : n;
  const int ri = lp("svd", rows), ci = lp("svd", cols);
  if (wide) {
    copy_device(call, a, call.in<T>(0), sizeof(T) * d.batch * m * n);
  } else {
    copy_matrix(call.in<T>(0), a, to_col_major(d.batch, m, n), call.stream());
  }
  // gesvd's U: rows x (full ? rows : k), leading dim rows; its V^T: (full ? cols : k) x cols.
  const int64_t gu_cols = full ? rows : k, gvt_rows = full ? cols : k;
  T* gu = nullptr;
  T* gvt = nullptr;
  if (uv) {
    gu = wide ? vt : scratch<T>(call, d.batch * rows * gu_cols);
    gvt = wide ? u : scratch<T>(call, d.batch * gvt_rows * cols);
  }
  int lwork = 0;
  T* work = workspace<T>(call, decomp::gesvd_size(lease.solver(), ri, ci, a, &lwork), lwork,
                         "cusolverDnXgesvd_bufferSize");
  for (int64_t b = 0; b < d.batch; ++b) {
    check(decomp::gesvd(lease.solver(), job, job, ri, ci, a + b * m * n, s + b * k,
                        uv ? gu + b * rows * gu_cols : nullptr, ri,
                        uv ? gvt + b * gvt_rows * cols : nullptr, lp("svd", gvt_rows), work,
                        lwork, rwork, info + b),
          "cusolverDnXgesvd");
  }
  MatrixCopy sc = row_major(d.batch, 1, k);
  sc.info = info;
  copy_matrix(s, s, sc, call.stream());
  if (!uv) return;
  if (wide) {
    MatrixCopy uc_ = row_major(d.batch, m, uc), vc = row_major(d.batch, vr, n);
    uc_.info = vc.info = info;
    copy_matrix(u, u, uc_, call.stream());
    copy_matrix(vt, vt, vc, call.stream());
  } else {
    MatrixCopy uc_ = from_col_major(d.batch, m, uc, m), vc = from_col_major(d.batch, vr, n, vr);
    uc_.info = vc.info = info;
    copy_matrix(gu, u, uc_, call.stream());
    copy_matrix(gvt, vt, vc, call.stream());
  }
}

template <typename T>
void eigh(Call& call) {
  const bool lower = call.params<Eigh>().lower();
  const Dims d = dims_of(call.in_aval(0));
  const int n = lp("eigh", d.rows);
  const int64_t nn = d.rows * d.rows;
  T* v = call.out<T>(0);
  T* w = call.out<T>(1);
  if (d.batch * nn == 0) return;
  Lease lease(call.device(), call.stream());
  // The row-major lower triangle is the column-major view's upper one. syevd leaves the
  // eigenvectors in the view's columns; read row-major they are rows, so copy them across.
  const cublasFillMode_t uplo = lower ? CUBLAS_FILL_MODE_UPPER : CUBLAS_FILL_MODE_LOWER;
  T* a = scratch<T>(call, d.batch * nn);
  copy_device(call, a, call.in<T>(0), sizeof(T) * d.batch * nn);
  int* info = scratch<int>(call, d.batch);
  int lwork = 0;
  T* work = workspace<T>(call, decomp::syevd_size(lease.solver(), uplo, n, a, w, &lwork), lwork,
                         "cusolverDnXsyevd_bufferSize");
  for (int64_t b = 0; b < d.batch; ++b) {
    check(decomp::syevd(lease.solver(), uplo, n, a + b * nn, w + b * n, work, lwork, info + b),
          "cusolverDnXsyevd");
  }
  MatrixCopy vc = from_col_major(d.batch, d.rows, d.rows, d.rows), wc = row_major(d.batch, 1, n);
  vc.info = wc.info = info;
  copy_matrix(a, v, vc, call.stream());
  copy_matrix(w, w, wc, call.stream());
}

template <typename T>
void lu(Call& call) {
  const Dims d = dims_of(call.in_aval(0));
  const int64_t m = d.rows, n = d.cols, k = std::min(m, n);
  T* out = call.out<T>(0);
  auto* pivots = call.out<int32_t>(1);
  auto* perm = call.out<int32_t>(2);
  if (d.batch == 0) return;
  int* ipiv = scratch<int>(call, d.batch * k);
  if (k > 0) {
    Lease lease(call.device(), call.stream());
    const int mi = lp("lu", m), ni = lp("lu", n);
    T* a = scratch<T>(call, d.batch * m * n);
    copy_matrix(call.in<T>(0), a, to_col_major(d.batch, m, n), call.stream());
    int* info = scratch<int>(call, d.batch);
    int lwork = 0;
    T* work = workspace<T>(call, decomp::getrf_size(lease.solver(), mi, ni, a, &lwork), lwork,
                           "cusolverDnXgetrf_bufferSize");
    // info > 0 (an exactly zero pivot) still leaves a complete factorization, as in JAX.
    for (int64_t b = 0; b < d.batch; ++b) {
      check(decomp::getrf(lease.solver(), mi, ni, a + b * m * n, work, ipiv + b * k, info + b),
            "cusolverDnXgetrf");
    }
    copy_matrix(a, out, from_col_major(d.batch, m, n, m), call.stream());
  }
  decomp::lu_pivots(ipiv, d.batch, m, k, pivots, perm, call.stream());
}

template <typename T>
void triangular_solve(Call& call) {
  const TriangularSolveParams& p = call.params<TriangularSolve>().options();
  const Dims da = dims_of(call.in_aval(0)), db = dims_of(call.in_aval(1));
  const int64_t ma = da.rows, bm = db.rows, bn = db.cols;
  T* x = call.out<T>();
  copy_device(call, x, call.in<T>(1), sizeof(T) * db.batch * bm * bn);
  if (db.batch == 0 || ma == 0 || bm == 0 || bn == 0) return;
  Lease lease(call.device(), call.stream());
  // Read column-major every matrix is transposed: op(a) x = b becomes x^T op(a)^T = b^T, a
  // solve from the other side with the other triangle and the same transpose flag.
  const cublasSideMode_t side = p.left_side ? CUBLAS_SIDE_RIGHT : CUBLAS_SIDE_LEFT;
  const cublasFillMode_t uplo = p.lower ? CUBLAS_FILL_MODE_UPPER : CUBLAS_FILL_MODE_LOWER;
  const cublasOperation_t t = p.transpose_a ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasDiagType_t diag = p.unit_diagonal ? CUBLAS_DIAG_UNIT : CUBLAS_DIAG_NON_UNIT;
  const int mi = lp("triangular_solve", bn), ni = lp("triangular_solve", bm);
  const int lda = lp("triangular_solve", ma);
  const T* a = call.in<T>(0);
  if (db.batch > 1) {
    check(decomp::trsm_batched(lease.blas(), side, uplo, t, diag, mi, ni,
                               matrix_pointers(call, const_cast<T*>(a), ma * ma, db.batch), lda,
                               matrix_pointers(call, x, bm * bn, db.batch), mi,
                               lp("triangular_solve", db.batch)),
          "cublasXtrsmBatched");
    return;
  }
  check(decomp::trsm(lease.blas(), side, uplo, t, diag, mi, ni, a, lda, x, mi), "cublasXtrsm");
}

// Dispatches a kernel template on the operand dtype (the shape rule allows f32 and f64).
#define GRAFT_DECOMP_KERNEL(fn)                                        \
  void fn##_kernel(Call& call) {                                       \
    if (call.in_aval(0).dtype == DType::kF64) return fn<double>(call); \
    return fn<float>(call);                                            \
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

}  // namespace graft::cuda
