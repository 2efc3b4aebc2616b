// lax.fft on cuda:0 (cuFFT, core/backend/cuda/fft) against the CPU's PocketFFT kernel: FFT,
// IFFT, RFFT and IRFFT over 1 to 3 trailing dims with leading batch dims, single and double
// precision, odd and even lengths, and jnp.fft's functions built on the primitive (which add
// transposes, pads and scaling around it). GPU tests: they skip without a device or a CUDA
// build.
#include <string>
#include <vector>

#include "core/ops.h"
#include "core/primitives/fft.h"
#include "core/random/random.h"
#include "tests/cuda/gpu_vs_cpu.h"

namespace graft {
namespace {

using cuda_testing::gpu;
using cuda_testing::normalized_error;

Array on_gpu(const Array& x) { return device_put(x, gpu()); }

Array random_real(uint64_t seed, const Shape& s, DType d) {
  return astype(random::normal(random::key(seed), s), d);
}

// Real and imaginary parts within tol of the CPU's, relative to the largest magnitude.
void expect_close(const Array& got, const Array& want, double tol, const std::string& what) {
  EXPECT_FALSE(got.buffer()->on_host()) << what;
  ASSERT_EQ(got.shape(), want.shape()) << what;
  ASSERT_EQ(got.dtype(), want.dtype()) << what;
  EXPECT_LE(normalized_error(real(got), real(want)), tol) << what;
  if (is_complex(want.dtype())) {
    EXPECT_LE(normalized_error(imag(got), imag(want)), tol) << what;
  }
}

struct Case {
  Shape shape;    // the real signal's shape (IRFFT: its output's)
  Shape lengths;  // the transformed trailing dims
};

const Case kCases[] = {
    {{16}, {16}},          {{3, 15}, {15}},        {{2, 3, 64}, {64}},
    {{4, 6}, {4, 6}},      {{2, 5, 7}, {5, 7}},    {{2, 4, 6, 8}, {4, 6, 8}},
    {{3, 3, 5, 1}, {3, 5, 1}}, {{2, 0, 8}, {8}},
};

TEST(FftCudaTest, EveryTypeMatchesTheCpu) {
  GRAFT_REQUIRE_GPUS(1);
  uint64_t seed = 1;
  for (DType real_dtype : {DType::kF32, DType::kF64}) {
    const double tol = real_dtype == DType::kF64 ? 1e-12 : 1e-5;
    for (const Case& c : kCases) {
      const std::string what =
          std::string(dtype_name(real_dtype)) + " " + shape_str(c.shape) + " " + shape_str(c.lengths);
      const Array x = random_real(seed++, c.shape, real_dtype);
      const Array z = complex(x, random_real(seed++, c.shape, real_dtype));
      expect_close(lax_fft(on_gpu(z), FftType::kFft, c.lengths), lax_fft(z, FftType::kFft, c.lengths),
                   tol, "fft " + what);
      expect_close(lax_fft(on_gpu(z), FftType::kIfft, c.lengths),
                   lax_fft(z, FftType::kIfft, c.lengths), tol, "ifft " + what);
      const Array spectrum = lax_fft(x, FftType::kRfft, c.lengths);
      expect_close(lax_fft(on_gpu(x), FftType::kRfft, c.lengths), spectrum, tol, "rfft " + what);
      const Array g = on_gpu(spectrum);
      expect_close(lax_fft(g, FftType::kIrfft, c.lengths),
                   lax_fft(spectrum, FftType::kIrfft, c.lengths), tol, "irfft " + what);
      // cuFFT's C2R overwrites its input: the kernel transforms a copy.
      EXPECT_EQ(astype(g, DType::kC128).to_vector<std::complex<double>>(),
                astype(spectrum, DType::kC128).to_vector<std::complex<double>>())
          << "irfft operand unchanged " << what;
    }
  }
}

TEST(FftCudaTest, PlansAreReusedAcrossCalls) {
  GRAFT_REQUIRE_GPUS(1);
  // The same shape twice (the cached plan) and a new batch size (a new plan).
  const Array z = complex(random_real(40, {4, 32}, DType::kF32), random_real(41, {4, 32}, DType::kF32));
  const Array want = lax_fft(z, FftType::kFft, {32});
  for (int i = 0; i < 2; ++i) {
    expect_close(lax_fft(on_gpu(z), FftType::kFft, {32}), want, 1e-5, "call " + std::to_string(i));
  }
  expect_close(lax_fft(on_gpu(slice(z, {0, 0}, {3, 32})), FftType::kFft, {32}),
               slice(want, {0, 0}, {3, 32}), 1e-5, "batch 3");
}

TEST(FftCudaTest, NumpyFftFunctionsMatchTheCpu) {
  GRAFT_REQUIRE_GPUS(1);
  const Array x = random_real(50, {3, 10, 12}, DType::kF64);
  const Array g = on_gpu(x);
  expect_close(fft::fft(g, 16, 1), fft::fft(x, 16, 1), 1e-12, "fft n=16 axis 1");
  expect_close(fft::rfft2(g), fft::rfft2(x), 1e-12, "rfft2");
  expect_close(fft::irfftn(fft::rfftn(g)), fft::irfftn(fft::rfftn(x)), 1e-12, "irfftn(rfftn)");
  expect_close(fft::ifft(g, std::nullopt, -1, "ortho"), fft::ifft(x, std::nullopt, -1, "ortho"),
               1e-12, "ifft ortho");
}

}  // namespace
}  // namespace graft
