// The plan of the CUDA fft kernel (core/backend/cuda/fft/fft_plan.h), checked on the CPU in
// every build: each case's plan is carried out on the host as cuFFT defines it (cufftPlanMany's
// advanced layout: n, inembed / onembed, strides, dists, batch; an unnormalized DFT, e^-2pii
// forward and e^+2pii inverse; C2R reading the half spectrum; then the plan's scale), by a
// plain O(N^2) DFT loop, and compared with graft's CPU kernel (PocketFFT) in c128 / f64. What
// runs on the GPU (cuFFT itself, the scaling kernel) is tested by fft_cuda_test on a device.
#include <cmath>
#include <complex>
#include <numbers>
#include <string>
#include <vector>

#include "core/backend/cuda/fft/fft_plan.h"
#include "core/ops.h"
#include "core/random/random.h"
#include "gtest/gtest.h"

namespace graft::cuda::fft {
namespace {

using c128 = std::complex<double>;

// Row-major offset of idx in dims.
int64_t offset(const std::vector<int64_t>& idx, const std::vector<int64_t>& dims) {
  int64_t off = 0;
  for (size_t d = 0; d < idx.size(); ++d) off = off * dims[d] + idx[d];
  return off;
}

bool next(std::vector<int64_t>& idx, const std::vector<int64_t>& dims) {
  for (size_t d = idx.size(); d-- > 0;) {
    if (++idx[d] < dims[d]) return true;
    idx[d] = 0;
  }
  return false;
}

// What cuFFT computes for plan p on input `in` (real inputs as (x, 0)); real outputs as (y, 0).
std::vector<c128> run_plan(const FftPlan& p, const std::vector<c128>& in) {
  std::vector<c128> out(p.out_elements);
  const size_t k = p.n.size();
  const double sign = p.forward ? -1 : 1;
  // The logical output index space: n, with the last dim halved for R2C.
  std::vector<int64_t> out_space = p.n;
  if (p.kind == FftKind::kR2C) out_space.back() = p.n.back() / 2 + 1;
  for (int64_t b = 0; b < p.batch; ++b) {
    std::vector<int64_t> ko(k, 0);
    do {
      c128 acc = 0;
      std::vector<int64_t> j(k, 0);
      do {
        c128 x;
        if (p.kind == FftKind::kC2R && j.back() > p.n.back() / 2) {
          // The half spectrum stands for its Hermitian completion: X[j] = conj(X[-j]).
          std::vector<int64_t> mirror(k);
          for (size_t d = 0; d < k; ++d) mirror[d] = (p.n[d] - j[d]) % p.n[d];
          x = std::conj(in[b * p.idist + offset(mirror, p.inembed) * p.istride]);
        } else {
          x = in[b * p.idist + offset(j, p.inembed) * p.istride];
        }
        double phase = 0;
        for (size_t d = 0; d < k; ++d) {
          phase += static_cast<double>(ko[d] * j[d] % p.n[d]) / static_cast<double>(p.n[d]);
        }
        acc += x * std::polar(1.0, sign * 2 * std::numbers::pi * phase);
      } while (next(j, p.n));
      if (p.kind == FftKind::kC2R) acc = acc.real();
      out[b * p.odist + offset(ko, p.onembed) * p.ostride] = acc * p.scale;
    } while (next(ko, out_space));
  }
  return out;
}

std::vector<c128> as_complex(const Array& x) {
  if (is_complex(x.dtype())) return astype(x, DType::kC128).to_vector<c128>();
  std::vector<c128> v;
  for (double r : astype(x, DType::kF64).to_vector<double>()) v.push_back(r);
  return v;
}

double max_error(const std::vector<c128>& got, const std::vector<c128>& want) {
  if (got.size() != want.size()) return INFINITY;
  double err = 0;
  for (size_t i = 0; i < got.size(); ++i) err = std::max(err, std::abs(got[i] - want[i]));
  return err;
}

Array random_real(uint64_t seed, const Shape& s) {
  return astype(random::normal(random::key(seed), s), DType::kF64);
}
Array random_complex(uint64_t seed, const Shape& s) {
  return complex(random_real(seed, s), random_real(seed + 100, s));
}

// The plan for lax_fft(x, type, lengths), carried out, against the CPU kernel's result.
void check_case(FftType type, const Array& x, const Shape& lengths, const std::string& what) {
  const Array want = lax_fft(x, type, lengths);
  const Aval in{x.shape(), x.dtype()}, out{want.shape(), want.dtype()};
  const FftPlan p = plan_fft(type, lengths, in, out);
  EXPECT_TRUE(p.double_precision) << what;
  EXPECT_EQ(p.forward, type == FftType::kFft || type == FftType::kRfft) << what;
  EXPECT_EQ(p.copy_input, type == FftType::kIrfft) << what;
  ASSERT_FALSE(p.empty_output || p.zero_output) << what;
  EXPECT_LE(max_error(run_plan(p, as_complex(x)), as_complex(want)), 1e-9) << what;
  // The single-precision plan differs only in its precision.
  const Aval in32{x.shape(), is_complex(x.dtype()) ? DType::kC64 : DType::kF32};
  const Aval out32{want.shape(), is_complex(want.dtype()) ? DType::kC64 : DType::kF32};
  const FftPlan p32 = plan_fft(type, lengths, in32, out32);
  EXPECT_FALSE(p32.double_precision) << what;
  EXPECT_EQ(p32.n, p.n) << what;
  EXPECT_EQ(p32.inembed, p.inembed) << what;
  EXPECT_EQ(p32.onembed, p.onembed) << what;
  EXPECT_EQ(p32.idist, p.idist) << what;
  EXPECT_EQ(p32.odist, p.odist) << what;
  EXPECT_EQ(p32.batch, p.batch) << what;
  EXPECT_EQ(p32.scale, p.scale) << what;
}

struct Case {
  Shape shape;    // the real signal's shape (for IRFFT: the output's)
  Shape lengths;  // the trailing dims
};

const Case kCases[] = {
    {{8}, {8}},          {{7}, {7}},          {{3, 8}, {8}},    {{2, 3, 5}, {5}},
    {{4, 6}, {4, 6}},    {{2, 5, 3}, {5, 3}}, {{2, 3, 4, 5}, {3, 4, 5}},
    {{3, 4, 1}, {4, 1}}, {{2, 1, 6}, {1, 6}}, {{1}, {1}},
};

std::string name(const char* type, const Case& c) {
  return std::string(type) + " " + shape_str(c.shape) + " lengths " + shape_str(c.lengths);
}

TEST(FftPlanTest, ComplexTransformsMatchTheCpuKernel) {
  uint64_t seed = 1;
  for (const Case& c : kCases) {
    const Array x = random_complex(seed++, c.shape);
    check_case(FftType::kFft, x, c.lengths, name("fft", c));
    check_case(FftType::kIfft, x, c.lengths, name("ifft", c));
  }
}

TEST(FftPlanTest, RealTransformsMatchTheCpuKernel) {
  uint64_t seed = 50;
  for (const Case& c : kCases) {
    const Array x = random_real(seed++, c.shape);
    check_case(FftType::kRfft, x, c.lengths, name("rfft", c));
    // irfft's operand: a half spectrum with its Hermitian symmetry (the rfft of a real signal).
    check_case(FftType::kIrfft, lax_fft(x, FftType::kRfft, c.lengths), c.lengths,
               name("irfft", c));
  }
}

TEST(FftPlanTest, LayoutOfABatchedThreeDimTransform) {
  // [2, 3] batch of 4 x 5 x 6 real signals -> 4 x 5 x 4 half spectra.
  const FftPlan p = plan_fft(FftType::kRfft, {4, 5, 6}, Aval{{2, 3, 4, 5, 6}, DType::kF32},
                             Aval{{2, 3, 4, 5, 4}, DType::kC64});
  EXPECT_EQ(p.kind, FftKind::kR2C);
  EXPECT_EQ(p.n, (std::vector<int64_t>{4, 5, 6}));
  EXPECT_EQ(p.inembed, (std::vector<int64_t>{4, 5, 6}));
  EXPECT_EQ(p.onembed, (std::vector<int64_t>{4, 5, 4}));
  EXPECT_EQ(p.idist, 120);
  EXPECT_EQ(p.odist, 80);
  EXPECT_EQ(p.istride, 1);
  EXPECT_EQ(p.ostride, 1);
  EXPECT_EQ(p.batch, 6);
  EXPECT_EQ(p.scale, 1);
  const FftPlan q = plan_fft(FftType::kIrfft, {4, 5, 6}, Aval{{2, 3, 4, 5, 4}, DType::kC128},
                             Aval{{2, 3, 4, 5, 6}, DType::kF64});
  EXPECT_EQ(q.kind, FftKind::kC2R);
  EXPECT_TRUE(q.double_precision);
  EXPECT_EQ(q.inembed, (std::vector<int64_t>{4, 5, 4}));
  EXPECT_EQ(q.onembed, (std::vector<int64_t>{4, 5, 6}));
  EXPECT_DOUBLE_EQ(q.scale, 1.0 / 120);
}

TEST(FftPlanTest, EmptyOperandsAndOutputs) {
  // A batch of none, or a zero length: nothing to transform.
  EXPECT_TRUE(plan_fft(FftType::kFft, {4}, Aval{{0, 4}, DType::kC64}, Aval{{0, 4}, DType::kC64})
                  .empty_output);
  EXPECT_TRUE(plan_fft(FftType::kIfft, {0}, Aval{{3, 0}, DType::kC64}, Aval{{3, 0}, DType::kC64})
                  .empty_output);
  // rfft of length 0 has one (zero) output bin per signal, as the CPU kernel gives.
  const Array want = lax_fft(zeros({3, 0}, DType::kF32), FftType::kRfft, {0});
  const FftPlan p =
      plan_fft(FftType::kRfft, {0}, Aval{{3, 0}, DType::kF32}, Aval{want.shape(), want.dtype()});
  EXPECT_FALSE(p.empty_output);
  EXPECT_TRUE(p.zero_output);
  for (c128 v : as_complex(want)) EXPECT_EQ(v, c128(0)) << "the CPU's rfft of length 0";
}

TEST(FftPlanTest, RefusesMoreThanThreeDims) {
  try {
    plan_fft(FftType::kFft, {2, 2, 2, 2}, Aval{{2, 2, 2, 2}, DType::kC64},
             Aval{{2, 2, 2, 2}, DType::kC64});
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("[fft]", 0), 0u) << e.what();
  }
}

}  // namespace
}  // namespace graft::cuda::fft
