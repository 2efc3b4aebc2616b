// eig on cuda:0 (cuSOLVER's Xgeev, core/backend/cuda/decomp/eig_kernels.cc) against the CPU's
// LAPACK geev kernel, for f32, f64, c64 and c128 batches: the same eigenvalues (matched as
// multisets: two implementations of the QR algorithm need not list them in one order), and
// eigenvectors that satisfy A v = w v, have unit 2-norm with their largest component real (geev's
// normalization) and equal the CPU's eigenvector of the same eigenvalue up to a sign. Real
// inputs include complex-conjugate pairs (the unpacking of geev's real output). GPU tests: they
// skip without a device or a CUDA build.
#include <cmath>
#include <complex>
#include <string>
#include <vector>

#include "core/ops.h"
#include "core/random/random.h"
#include "tests/cuda/gpu_vs_cpu.h"

namespace graft {
namespace {

using cuda_testing::gpu;
using c128 = std::complex<double>;

std::vector<c128> values(const Array& x) { return astype(x, DType::kC128).to_vector<c128>(); }

Array random_matrix(uint64_t seed, const Shape& s, DType d) {
  const Array x = random::normal(random::key(seed), s);
  if (!is_complex(d)) return astype(x, d);
  const Array y = random::normal(random::key(seed + 1), s);
  return astype(complex(x, y), d);
}

double tol(DType d) { return d == DType::kF64 || d == DType::kC128 ? 1e-9 : 2e-3; }

// For each of the GPU's eigenvalues of one matrix, the index of the CPU's nearest one not
// matched yet (-1 when none is within tol).
std::vector<int> match(const c128* got, const c128* want, int64_t n, double t) {
  std::vector<int> to(n, -1);
  std::vector<bool> used(n, false);
  for (int64_t i = 0; i < n; ++i) {
    double best = INFINITY;
    for (int64_t j = 0; j < n; ++j) {
      const double e = std::abs(got[i] - want[j]);
      if (!used[j] && e < best) {
        best = e;
        to[i] = static_cast<int>(j);
      }
    }
    if (best > t * std::max(1.0, std::abs(want[to[i]]))) {
      to[i] = -1;
    } else {
      used[to[i]] = true;
    }
  }
  return to;
}

void check_eig(const Array& a, const std::string& what) {
  const DType d = a.dtype();
  const int64_t n = a.shape().back(), batch = a.size() / std::max<int64_t>(n * n, 1);
  const linalg::EigResult want = linalg::eig(a);
  const linalg::EigResult got = linalg::eig(device_put(a, gpu()));
  EXPECT_FALSE(got.eigenvalues.buffer()->on_host()) << what;
  ASSERT_EQ(got.eigenvalues.shape(), want.eigenvalues.shape()) << what;
  ASSERT_EQ(got.eigenvalues.dtype(), want.eigenvalues.dtype()) << what;
  ASSERT_EQ(got.eigenvectors.shape(), want.eigenvectors.shape()) << what;
  ASSERT_EQ(got.eigenvectors.dtype(), want.eigenvectors.dtype()) << what;
  const std::vector<c128> gw = values(got.eigenvalues), ww = values(want.eigenvalues);
  const std::vector<c128> gv = values(got.eigenvectors), wv = values(want.eigenvectors);
  const std::vector<c128> x = values(a);
  const double t = tol(d);
  for (int64_t b = 0; b < batch; ++b) {
    const std::vector<int> to = match(&gw[b * n], &ww[b * n], n, t);
    for (int64_t j = 0; j < n; ++j) {
      const std::string at = what + " matrix " + std::to_string(b) + " column " + std::to_string(j);
      ASSERT_GE(to[j], 0) << at << ": eigenvalue " << gw[b * n + j] << " not among the CPU's";
      auto col = [&](const std::vector<c128>& v, int64_t k, int64_t i) {
        return v[b * n * n + i * n + k];
      };
      // A v_j = w_j v_j, |v_j| = 1, its largest component real.
      double residual = 0, norm2 = 0, largest = -1, largest_imag = 0, scale = 0;
      for (int64_t i = 0; i < n; ++i) {
        c128 av = 0;
        for (int64_t k = 0; k < n; ++k) {
          av += x[b * n * n + i * n + k] * col(gv, j, k);
          scale = std::max(scale, std::abs(x[b * n * n + i * n + k]));
        }
        residual = std::max(residual, std::abs(av - gw[b * n + j] * col(gv, j, i)));
        norm2 += std::norm(col(gv, j, i));
        if (std::abs(col(gv, j, i)) > largest) {
          largest = std::abs(col(gv, j, i));
          largest_imag = col(gv, j, i).imag();
        }
      }
      EXPECT_LE(residual, t * std::max(1.0, scale) * n) << at << ": A v != w v";
      EXPECT_NEAR(norm2, 1.0, t) << at;
      EXPECT_NEAR(largest_imag, 0.0, t) << at << ": largest component not real";
      // The CPU's eigenvector of the same eigenvalue: the same up to a sign.
      c128 dot = 0;
      for (int64_t i = 0; i < n; ++i) dot += std::conj(col(wv, to[j], i)) * col(gv, j, i);
      EXPECT_NEAR(std::abs(dot), 1.0, 10 * t) << at << ": not the CPU's eigenvector";
    }
  }
  // eigvals alone (compute_right_eigenvectors false) gives the same values as eig on the GPU.
  const Array only = linalg::eigvals(device_put(a, gpu()));
  const std::vector<c128> ow = values(only);
  ASSERT_EQ(ow.size(), gw.size()) << what;
  for (size_t i = 0; i < ow.size(); ++i) {
    EXPECT_LE(std::abs(ow[i] - gw[i]), t * std::max(1.0, std::abs(gw[i]))) << what << " eigvals " << i;
  }
}

TEST(EigCudaTest, RealInputsMatchTheCpu) {
  GRAFT_REQUIRE_GPUS(1);
  for (DType d : {DType::kF32, DType::kF64}) {
    // Random real matrices have complex-conjugate pairs among their eigenvalues.
    for (const Shape& s : {Shape{3, 5, 5}, Shape{1, 8, 8}, Shape{2, 1, 1}, Shape{2, 2, 3, 3}}) {
      check_eig(random_matrix(1, s, d), std::string(dtype_name(d)) + " " + shape_str(s));
    }
    // A rotation: the pair +-i only.
    check_eig(astype(array<double>({0, -1, 1, 0}, Shape{2, 2}), d),
              std::string(dtype_name(d)) + " rotation");
  }
}

TEST(EigCudaTest, ComplexInputsMatchTheCpu) {
  GRAFT_REQUIRE_GPUS(1);
  for (DType d : {DType::kC64, DType::kC128}) {
    for (const Shape& s : {Shape{3, 5, 5}, Shape{1, 7, 7}, Shape{2, 1, 1}}) {
      check_eig(random_matrix(2, s, d), std::string(dtype_name(d)) + " " + shape_str(s));
    }
  }
}

TEST(EigCudaTest, EmptyBatchesGiveEmptyResults) {
  GRAFT_REQUIRE_GPUS(1);
  for (const Shape& s : {Shape{0, 4, 4}, Shape{3, 0, 0}}) {
    const linalg::EigResult got = linalg::eig(device_put(zeros(s, DType::kF32), gpu()));
    EXPECT_EQ(got.eigenvalues.size(), 0) << shape_str(s);
    EXPECT_EQ(got.eigenvectors.size(), 0) << shape_str(s);
  }
}

}  // namespace
}  // namespace graft
