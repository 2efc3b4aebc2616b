// The output layout of the CUDA eig kernel, checked on the CPU in every build: each matrix is
// transposed to column-major as the kernel does, handed to LAPACK's geev in column-major form
// (jobvl 'N': what cusolverDnXgeev documents it computes and returns: W as [wr, wi] for a real
// input or n complex values, VR column-major with LAPACK's packing of conjugate pairs), and
// the result is unpacked element by element by the kernel's own code (eig_unpack.h). That
// must equal graft's CPU eig kernel (LAPACKE's row-major geev over the same column-major
// data) exactly. Xgeev itself runs only on a GPU (eig_cuda_test).
#include <complex>

#define lapack_complex_float std::complex<float>
#define lapack_complex_double std::complex<double>
#include <lapacke.h>

#include <string>
#include <vector>

#include "core/backend/cuda/decomp/eig_unpack.h"
#include "core/ops.h"
#include "core/random/random.h"
#include "gtest/gtest.h"

namespace graft::cuda::decomp {
namespace {

lapack_int geev(char jobvr, lapack_int n, float* a, float* wr, float* wi, float* vr) {
  return LAPACKE_sgeev(LAPACK_COL_MAJOR, 'N', jobvr, n, a, n, wr, wi, nullptr, 1, vr, n);
}
lapack_int geev(char jobvr, lapack_int n, double* a, double* wr, double* wi, double* vr) {
  return LAPACKE_dgeev(LAPACK_COL_MAJOR, 'N', jobvr, n, a, n, wr, wi, nullptr, 1, vr, n);
}
lapack_int geev(char jobvr, lapack_int n, std::complex<float>* a, std::complex<float>* w,
                std::complex<float>* vr) {
  return LAPACKE_cgeev(LAPACK_COL_MAJOR, 'N', jobvr, n, a, n, w, nullptr, 1, vr, n);
}
lapack_int geev(char jobvr, lapack_int n, std::complex<double>* a, std::complex<double>* w,
                std::complex<double>* vr) {
  return LAPACKE_zgeev(LAPACK_COL_MAJOR, 'N', jobvr, n, a, n, w, nullptr, 1, vr, n);
}

// What the CUDA kernel computes for x [batch, n, n] (T: the input's element type, R its
// real type): outputs w, v as interleaved reals. `fail_matrix` >= 0 pretends that matrix's
// geev failed (info 1).
template <typename T, typename R, bool kComplex>
void emulate(const std::vector<T>& x, int64_t batch, int64_t n, bool right, int64_t fail_matrix,
             std::vector<R>& w, std::vector<R>& v) {
  const int64_t nn = n * n;
  std::vector<T> a(batch * nn), vr(right ? batch * nn : 1);
  for (int64_t b = 0; b < batch; ++b) {  // the kernel's transpose into column-major
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = 0; j < n; ++j) a[b * nn + j * n + i] = x[b * nn + i * n + j];
    }
  }
  std::vector<T> win(batch * (kComplex ? n : 2 * n));
  std::vector<int> info(batch);
  for (int64_t b = 0; b < batch; ++b) {
    T* vb = right ? vr.data() + b * nn : vr.data();
    if constexpr (kComplex) {
      info[b] = geev(right ? 'V' : 'N', n, a.data() + b * nn, win.data() + b * n, vb);
    } else {
      T* wb = win.data() + b * 2 * n;
      info[b] = geev(right ? 'V' : 'N', n, a.data() + b * nn, wb, wb + n, vb);
    }
    if (b == fail_matrix) info[b] = 1;
  }
  w.assign(2 * batch * n, 0);
  v.assign(right ? 2 * batch * nn : 0, 0);
  for (int64_t t = 0; t < batch * nn; ++t) {
    eig_output_element<R, kComplex>(reinterpret_cast<const R*>(win.data()),
                                    right ? reinterpret_cast<const R*>(vr.data()) : nullptr,
                                    info.data(), n, t, w.data(), right ? v.data() : nullptr);
  }
}

template <typename R>
std::vector<R> interleaved(const Array& z) {
  std::vector<R> out;
  for (const std::complex<R>& c : z.to_vector<std::complex<R>>()) {
    out.push_back(c.real());
    out.push_back(c.imag());
  }
  return out;
}

template <typename T, typename R, bool kComplex>
void check(DType d, const Shape& s, const std::string& what) {
  Array x = astype(random::normal(random::key(7), s), d);
  if constexpr (kComplex) {
    x = x + astype(complex(zeros(s), random::normal(random::key(8), s)), d);
  }
  const int64_t n = s.back(), batch = x.size() / (n * n);
  const std::vector<T> xs = x.to_vector<T>();
  const linalg::EigResult want = linalg::eig(x);
  std::vector<R> w, v;
  emulate<T, R, kComplex>(xs, batch, n, true, -1, w, v);
  EXPECT_EQ(w, interleaved<R>(want.eigenvalues)) << what;
  EXPECT_EQ(v, interleaved<R>(want.eigenvectors)) << what;
  // Eigenvalues only: the same values, no vectors read or written.
  std::vector<R> w_only, none;
  emulate<T, R, kComplex>(xs, batch, n, false, -1, w_only, none);
  EXPECT_EQ(w_only, interleaved<R>(linalg::eigvals(x))) << what << " eigvals";
  // A failed matrix: NaNs in its w and v only.
  emulate<T, R, kComplex>(xs, batch, n, true, 1, w, v);
  for (int64_t k = 0; k < 2 * batch * n; ++k) {
    EXPECT_EQ(std::isnan(w[k]), k / (2 * n) == 1) << what << " w " << k;
  }
  for (int64_t k = 0; k < 2 * batch * n * n; ++k) {
    EXPECT_EQ(std::isnan(v[k]), k / (2 * n * n) == 1) << what << " v " << k;
  }
}

TEST(EigLayoutTest, RealInputsMatchTheCpuKernel) {
  // Random real matrices of these sizes have complex-conjugate pairs (checked below).
  check<float, float, false>(DType::kF32, {3, 6, 6}, "f32");
  check<double, double, false>(DType::kF64, {2, 7, 7}, "f64");
  const Array w = linalg::eigvals(astype(random::normal(random::key(7), {3, 6, 6}), DType::kF32));
  bool pair = false;
  for (const auto& c : w.to_vector<std::complex<float>>()) pair = pair || c.imag() != 0;
  EXPECT_TRUE(pair) << "the real cases should hold conjugate pairs";
}

TEST(EigLayoutTest, ComplexInputsMatchTheCpuKernel) {
  check<std::complex<float>, float, true>(DType::kC64, {3, 5, 5}, "c64");
  check<std::complex<double>, double, true>(DType::kC128, {2, 6, 6}, "c128");
}

}  // namespace
}  // namespace graft::cuda::decomp
