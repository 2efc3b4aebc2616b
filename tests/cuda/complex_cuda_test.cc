// Complex values on cuda:0 against the CPU kernels: real, imag, conj and complex
// (kernels/elementwise_complex.cu), convert_element_type to, from and between c64 / c128,
// select_n, and the layout ops (16-byte elements for c128) — bit for bit, as they move or
// convert values without arithmetic — and arithmetic through the parts (mul, sum, matmul) to
// a tolerance. GPU tests: they skip without a device or a CUDA build.
#include <complex>
#include <string>
#include <vector>

#include "core/ops.h"
#include "core/random/random.h"
#include "tests/cuda/gpu_vs_cpu.h"

namespace graft {
namespace {

using cuda_testing::gpu;
using c64 = std::complex<float>;
using c128 = std::complex<double>;

const DType kComplex[] = {DType::kC64, DType::kC128};

Array random_complex(uint64_t seed, const Shape& s, DType d) {
  const DType part = d == DType::kC128 ? DType::kF64 : DType::kF32;
  return complex(astype(random::normal(random::key(seed), s), part),
                 astype(random::normal(random::key(seed + 1), s), part));
}
Array on_gpu(const Array& x) { return device_put(x, gpu()); }

// got (from the GPU) equals want bit for bit, compared as c128 (exact for c64 too).
void expect_same(const Array& got, const Array& want, const std::string& what) {
  EXPECT_FALSE(got.buffer()->on_host()) << what;
  ASSERT_EQ(got.shape(), want.shape()) << what;
  ASSERT_EQ(got.dtype(), want.dtype()) << what;
  if (is_complex(want.dtype())) {
    EXPECT_EQ(astype(got, DType::kC128).to_vector<c128>(),
              astype(want, DType::kC128).to_vector<c128>())
        << what;
  } else {
    EXPECT_EQ(got.to_vector<double>(), want.to_vector<double>()) << what;
  }
}

TEST(ComplexCudaTest, PartsMatchTheCpu) {
  GRAFT_REQUIRE_GPUS(1);
  for (DType d : kComplex) {
    const Array z = random_complex(1, {3, 37}, d);  // odd sizes: the vector loop's tail
    const Array g = on_gpu(z);
    const std::string t = dtype_name(d);
    expect_same(real(g), real(z), "real " + t);
    expect_same(imag(g), imag(z), "imag " + t);
    expect_same(conj(g), conj(z), "conj " + t);
    expect_same(complex(on_gpu(real(z)), on_gpu(imag(z))), z, "complex " + t);
  }
}

TEST(ComplexCudaTest, ConversionsMatchTheCpu) {
  GRAFT_REQUIRE_GPUS(1);
  const Array x = random::normal(random::key(3), {5, 9}) * 40.0;  // beyond i8 / f16 ranges
  for (DType to : kComplex) {
    for (DType from : {DType::kF32, DType::kF64, DType::kF16, DType::kBF16, DType::kI32,
                       DType::kU8, DType::kBool}) {
      const Array r = astype(x, from);
      expect_same(astype(on_gpu(r), to), astype(r, to),
                  std::string(dtype_name(from)) + " -> " + dtype_name(to));
    }
  }
  for (DType from : kComplex) {
    const Array z = random_complex(4, {5, 9}, from) * 40.0;
    for (DType to : {DType::kC64, DType::kC128, DType::kF32, DType::kF64, DType::kF16,
                     DType::kBF16, DType::kI32, DType::kU8, DType::kI64, DType::kBool}) {
      expect_same(astype(on_gpu(z), to), astype(z, to),
                  std::string(dtype_name(from)) + " -> " + dtype_name(to));
    }
  }
}

TEST(ComplexCudaTest, SelectAndLayoutOpsMatchTheCpu) {
  GRAFT_REQUIRE_GPUS(1);
  for (DType d : kComplex) {
    const std::string t = dtype_name(d);
    const Array z = random_complex(5, {4, 6, 5}, d), w = random_complex(7, {4, 6, 5}, d);
    const Array gz = on_gpu(z), gw = on_gpu(w);
    const Array pred = random::normal(random::key(9), {4, 6, 5}) > 0.0;
    expect_same(where(on_gpu(pred), gz, gw), where(pred, z, w), "where " + t);
    expect_same(transpose(gz, std::vector<int>{2, 0, 1}), transpose(z, std::vector<int>{2, 0, 1}), "transpose " + t);
    expect_same(transpose(gz, std::vector<int>{0, 2, 1}), transpose(z, std::vector<int>{0, 2, 1}), "inner transpose " + t);
    expect_same(reshape(gz, {6, 20}), reshape(z, {6, 20}), "reshape " + t);
    expect_same(broadcast_to(slice(gz, {0, 0, 0}, {1, 6, 5}), {3, 6, 5}),
                broadcast_to(slice(z, {0, 0, 0}, {1, 6, 5}), {3, 6, 5}), "broadcast " + t);
    expect_same(slice(gz, {1, 0, 1}, {4, 6, 5}, {2, 3, 1}), slice(z, {1, 0, 1}, {4, 6, 5}, {2, 3, 1}),
                "slice " + t);
    expect_same(flip(gz, {1, 2}), flip(z, {1, 2}), "rev " + t);
    expect_same(concatenate({gz, gw}, 1), concatenate({z, w}, 1), "concatenate " + t);
    const Array value = astype(array<c128>({c128(1.5, -2)}, Shape{}), d);
    const std::vector<std::array<int64_t, 3>> cfg = {{1, 2, 0}, {0, 0, 1}, {-1, 1, 2}};
    expect_same(lax_pad(gz, on_gpu(value), cfg), lax_pad(z, value, cfg), "pad " + t);
    const std::vector<Array> starts = {Array(int32_t{1}), Array(int32_t{-2}), Array(int32_t{3})};
    std::vector<Array> gstarts;
    for (const Array& s : starts) gstarts.push_back(on_gpu(s));
    expect_same(dynamic_slice(gz, gstarts, {2, 3, 2}), dynamic_slice(z, starts, {2, 3, 2}),
                "dynamic_slice " + t);
    const Array upd = random_complex(11, {2, 3, 2}, d);
    expect_same(dynamic_update_slice(gz, on_gpu(upd), gstarts),
                dynamic_update_slice(z, upd, starts), "dynamic_update_slice " + t);
  }
}

TEST(ComplexCudaTest, ArithmeticThroughThePartsMatchesTheCpu) {
  GRAFT_REQUIRE_GPUS(1);
  for (DType d : kComplex) {
    const double tol = d == DType::kC128 ? 1e-12 : 1e-4;
    const Array a = random_complex(13, {6, 8}, d), b = random_complex(15, {8, 5}, d);
    const Array ga = on_gpu(a), gb = on_gpu(b);
    for (const auto& [name, got, want] :
         std::vector<std::tuple<std::string, Array, Array>>{
             {"matmul", matmul(ga, gb), matmul(a, b)},
             {"mul", ga * conj(ga), a * conj(a)},
             {"sum", sum(ga, {0}), sum(a, {0})},
         }) {
      EXPECT_FALSE(got.buffer()->on_host()) << name;
      EXPECT_LE(cuda_testing::normalized_error(real(got), real(want)), tol) << name;
      EXPECT_LE(cuda_testing::normalized_error(imag(got), imag(want)), tol) << name;
    }
  }
}

}  // namespace
}  // namespace graft
