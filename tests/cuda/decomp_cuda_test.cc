// The factorizations on cuda:0 (cuSOLVER / cuBLAS, core/backend/cuda/decomp) against graft's
// CPU (LAPACK) kernels on the same batched inputs, f32 and f64: cholesky (and NaNs for a
// matrix that is not positive definite), qr, svd, eigh (both triangles), lu (pivots and
// permutation exactly) and triangular_solve (every flag). Where a factor is unique only up to
// signs (singular and eigen vectors) the magnitudes are compared and the factors checked to
// rebuild the input. GPU tests: they skip without a device or a CUDA build.
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "core/ops.h"
#include "core/random/random.h"
#include "tests/cuda/gpu_vs_cpu.h"

namespace graft {
namespace {

using cuda_testing::gpu;
using cuda_testing::normalized_error;

double tol(DType d) { return d == DType::kF64 ? 1e-10 : 2e-4; }

Array rand(uint64_t seed, const Shape& s, DType d) {
  return astype(random::normal(random::key(seed), s), d);
}
Array on_gpu(const Array& x) { return device_put(x, gpu()); }

// A well-conditioned symmetric positive definite batch: a a^T + n I.
Array spd(uint64_t seed, int64_t batch, int64_t n, DType d) {
  const Array a = rand(seed, {batch, n, n}, d);
  return matmul(a, swapaxes(a, 1, 2)) + astype(eye(n) * static_cast<double>(n), d);
}

const DType kTypes[] = {DType::kF32, DType::kF64};

TEST(DecompCudaTest, CholeskyMatchesTheCpu) {
  GRAFT_REQUIRE_GPUS(1);
  // Small batched matrices take potrfBatched; one matrix, or larger ones, a potrf each.
  for (DType d : kTypes) {
    for (const auto& [batch, n] : {std::pair<int64_t, int64_t>{3, 6}, {1, 6}, {2, 40}}) {
      const Array x = spd(1, batch, n, d);
      const Array got = cholesky(on_gpu(x));
      EXPECT_FALSE(got.buffer()->on_host());
      EXPECT_LE(normalized_error(got, cholesky(x)), tol(d))
          << dtype_name(d) << " batch " << batch << " n " << n;
    }
  }
}

TEST(DecompCudaTest, CholeskyOfAnIndefiniteMatrixIsNan) {
  GRAFT_REQUIRE_GPUS(1);
  // Batch 0 is positive definite, batch 1 is not: only batch 1's triangle becomes NaN (as on the
  // CPU), through potrfBatched (n = 4) and through a potrf per matrix (n = 40).
  for (int64_t n : {4, 40}) {
    const Array bad = reshape(astype(eye(n) * -1.0, DType::kF32), {1, n, n});
    const Array x = concatenate({spd(2, 1, n, DType::kF32), bad}, 0);
    const Array want = cholesky(x), got = cholesky(on_gpu(x));
    const std::vector<float> g = got.to_vector<float>(), w = want.to_vector<float>();
    const size_t nn = static_cast<size_t>(n * n);
    for (size_t i = 0; i < nn; ++i) EXPECT_FALSE(std::isnan(g[i])) << i;
    // The failed factor: NaN in its lower triangle, 0 above it (as JAX's).
    for (size_t i = nn; i < 2 * nn; ++i) {
      if ((i - nn) % n > (i - nn) / n) {
        EXPECT_TRUE(g[i] == 0 && w[i] == 0) << i;
      } else {
        EXPECT_TRUE(std::isnan(g[i]) && std::isnan(w[i])) << i;
      }
    }
    EXPECT_LE(normalized_error(got, want), 1e-5) << n;
  }
}

TEST(DecompCudaTest, QrMatchesTheCpu) {
  GRAFT_REQUIRE_GPUS(1);
  for (DType d : kTypes) {
    for (const Shape& s : {Shape{2, 6, 4}, Shape{2, 3, 5}, Shape{1, 4, 4}, Shape{2, 3, 0}}) {
      const Array x = rand(3, s, d);
      for (bool full : {true, false}) {
        const QrResult want = qr(x, full), got = qr(on_gpu(x), full);
        EXPECT_LE(normalized_error(got.q, want.q), tol(d)) << shape_str(s) << " full " << full;
        EXPECT_LE(normalized_error(got.r, want.r), tol(d)) << shape_str(s) << " full " << full;
      }
    }
  }
}

// u diag(s) vt over the first k = min(m, n) singular triplets, for comparison with x.
Array rebuild(const SvdResult& r, int64_t k) {
  const Array u = slice_axis(r.u, 2, 0, k), vt = slice_axis(r.vh, 1, 0, k);
  return matmul(u * expand_dims(r.s, {1}), vt);
}

TEST(DecompCudaTest, SvdMatchesTheCpu) {
  GRAFT_REQUIRE_GPUS(1);
  for (DType d : kTypes) {
    for (const Shape& s : {Shape{2, 6, 4}, Shape{2, 3, 5}, Shape{1, 4, 4}, Shape{2, 3, 0}}) {
      const int64_t k = std::min(s[1], s[2]);
      const Array x = rand(4, s, d);
      for (bool full : {true, false}) {
        const std::string what = shape_str(s) + (full ? " full" : " reduced");
        const SvdResult want = svd(x, full, true), got = svd(on_gpu(x), full, true);
        EXPECT_LE(normalized_error(got.s, want.s), tol(d)) << what;
        EXPECT_EQ(got.u.shape(), want.u.shape()) << what;
        EXPECT_EQ(got.vh.shape(), want.vh.shape()) << what;
        EXPECT_LE(normalized_error(rebuild(got, k), x), tol(d)) << what;
        // u^T u = I and vt vt^T = I (full bases included).
        EXPECT_LE(normalized_error(matmul(swapaxes(got.u, 1, 2), got.u),
                                   broadcast_to(astype(eye(got.u.shape()[2]), d),
                                                {s[0], got.u.shape()[2], got.u.shape()[2]})),
                  tol(d))
            << what;
        EXPECT_LE(normalized_error(matmul(got.vh, swapaxes(got.vh, 1, 2)),
                                   broadcast_to(astype(eye(got.vh.shape()[1]), d),
                                                {s[0], got.vh.shape()[1], got.vh.shape()[1]})),
                  tol(d))
            << what;
        if (!full) {  // the reduced factors are unique up to signs (distinct singular values)
          EXPECT_LE(normalized_error(abs(got.u), abs(want.u)), 10 * tol(d)) << what;
          EXPECT_LE(normalized_error(abs(got.vh), abs(want.vh)), 10 * tol(d)) << what;
        }
      }
      const SvdResult values = svd(on_gpu(x), false, false);
      EXPECT_LE(normalized_error(values.s, svd(x, false, false).s), tol(d)) << shape_str(s);
    }
  }
}

TEST(DecompCudaTest, EighMatchesTheCpuForEitherTriangle) {
  GRAFT_REQUIRE_GPUS(1);
  for (DType d : kTypes) {
    // Not symmetric and not symmetrized: the triangle read decides the answer.
    const Array x = rand(5, {2, 5, 5}, d);
    for (bool lower : {true, false}) {
      const EighResult want = eigh(x, lower, false), got = eigh(on_gpu(x), lower, false);
      EXPECT_LE(normalized_error(got.eigenvalues, want.eigenvalues), tol(d)) << lower;
      EXPECT_LE(normalized_error(abs(got.eigenvectors), abs(want.eigenvectors)), 10 * tol(d))
          << lower;
    }
  }
}

TEST(DecompCudaTest, LuMatchesTheCpu) {
  GRAFT_REQUIRE_GPUS(1);
  for (DType d : kTypes) {
    for (const Shape& s : {Shape{2, 5, 3}, Shape{2, 3, 5}, Shape{3, 4, 4}, Shape{2, 3, 0}}) {
      const Array x = rand(6, s, d);
      const LuResult want = lu(x), got = lu(on_gpu(x));
      EXPECT_LE(normalized_error(got.lu, want.lu), tol(d)) << shape_str(s);
      EXPECT_EQ(got.pivots.to_vector<int32_t>(), want.pivots.to_vector<int32_t>()) << shape_str(s);
      EXPECT_EQ(got.permutation.to_vector<int32_t>(), want.permutation.to_vector<int32_t>())
          << shape_str(s);
    }
  }
}

TEST(DecompCudaTest, TriangularSolveMatchesTheCpuForEveryFlag) {
  GRAFT_REQUIRE_GPUS(1);
  for (DType d : kTypes) {
    // Diagonally dominant, so every triangle is well conditioned.
    const Array a = rand(7, {2, 4, 4}, d) + astype(eye(4) * 8.0, d);
    for (int flags = 0; flags < 16; ++flags) {
      const bool left = flags & 1, lower = flags & 2, trans = flags & 4, unit = flags & 8;
      const Array b = rand(8, left ? Shape{2, 4, 3} : Shape{2, 3, 4}, d);
      const Array want = triangular_solve(a, b, left, lower, trans, unit);
      const Array got = triangular_solve(on_gpu(a), on_gpu(b), left, lower, trans, unit);
      EXPECT_LE(normalized_error(got, want), tol(d)) << "flags " << flags << dtype_name(d);
      // One matrix (no batch dims): a single trsm rather than trsmBatched.
      const Array a0 = slice_axis(a, 0, 0, 1), b0 = slice_axis(b, 0, 0, 1);
      const Array a1 = reshape(a0, {4, 4}), b1 = reshape(b0, {b.shape()[1], b.shape()[2]});
      EXPECT_LE(normalized_error(triangular_solve(on_gpu(a1), on_gpu(b1), left, lower, trans, unit),
                                 triangular_solve(a1, b1, left, lower, trans, unit)),
                tol(d))
          << "unbatched, flags " << flags << dtype_name(d);
    }
  }
}

}  // namespace
}  // namespace graft
