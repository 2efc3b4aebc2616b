// conv_general_dilated on cuda:0 (cuDNN, core/backend/cuda/conv) against graft's CPU kernel on
// the same inputs: 1-D / 2-D / 3-D, strides, asymmetric and cropping padding, lhs and rhs
// dilation, feature and batch groups, NHWC / HWIO / other dimension numbers, f32 / f64 / bf16 /
// f16 (and bf16 into f32). GPU tests: they skip without a device or a CUDA build.
#include <optional>
#include <string>
#include <vector>

#include "core/ops.h"
#include "core/random/random.h"
#include "transforms/autodiff.h"
#include "tests/cuda/gpu_vs_cpu.h"

namespace graft {
namespace {

using cuda_testing::gpu;
using cuda_testing::normalized_error;

struct ConvCase {
  std::string name;
  Shape lhs, rhs, strides;
  WindowPadding padding;
  Shape lhs_dilation, rhs_dilation;
  ConvDims dims;
  int64_t feature_groups = 1, batch_groups = 1;
};

std::vector<ConvCase> cases() {
  return {
      {"2-D NCHW SAME", {2, 3, 9, 8}, {4, 3, 3, 3}, {1, 1}, "SAME", {}, {}, {}},
      {"2-D NHWC / HWIO, strides, asymmetric and cropping padding, rhs dilation",
       {2, 10, 9, 3},
       {3, 2, 3, 5},
       {2, 1},
       std::vector<std::pair<int64_t, int64_t>>{{1, 0}, {2, -1}},
       {},
       {1, 2},
       ConvDims("NHWC", "HWIO", "NHWC")},
      {"1-D lhs dilation (a transposed convolution)",
       {2, 3, 7},
       {4, 3, 3},
       {1},
       std::vector<std::pair<int64_t, int64_t>>{{2, 2}},
       {2},
       {},
       {}},
      {"3-D feature groups", {1, 4, 5, 6, 4}, {6, 2, 2, 3, 2}, {1, 2, 1}, "VALID", {}, {}, {}, 2},
      {"2-D batch groups", {4, 3, 6, 5}, {6, 3, 3, 2}, {1, 1}, "VALID", {}, {}, {}, 1, 2},
      {"2-D output layout NHWC from NCHW / OIHW",
       {2, 3, 7, 6},
       {5, 3, 2, 2},
       {1, 2},
       "SAME",
       {},
       {},
       ConvDims("NCHW", "OIHW", "NHWC")},
      {"no spatial dims",
       {3, 4},
       {5, 4},
       {},
       std::vector<std::pair<int64_t, int64_t>>{},
       {},
       {},
       {}},
  };
}

// Runs every case on the GPU and the CPU with operands of dtype `dt`.
void check_cases(DType dt, std::optional<DType> preferred, double tol, size_t count = 99) {
  std::vector<ConvCase> all = cases();
  for (size_t i = 0; i < all.size() && i < count; ++i) {
    const ConvCase& c = all[i];
    const Array l = astype(random::normal(random::key(2 * i), c.lhs), dt);
    const Array r = astype(random::normal(random::key(2 * i + 1), c.rhs), dt);
    auto conv = [&](const Array& a, const Array& b) {
      return conv_general_dilated(a, b, c.strides, c.padding, c.lhs_dilation, c.rhs_dilation,
                                  c.dims, c.feature_groups, c.batch_groups, preferred);
    };
    const Array want = conv(l, r);
    const Array got = conv(device_put(l, gpu()), device_put(r, gpu()));
    EXPECT_FALSE(got.buffer()->on_host()) << c.name;
    EXPECT_EQ(got.dtype(), want.dtype()) << c.name;
    EXPECT_LE(normalized_error(got, want), tol) << c.name << " (" << dtype_name(dt) << ")";
  }
}

TEST(ConvCudaTest, F32MatchesTheCpu) {
  GRAFT_REQUIRE_GPUS(1);
  check_cases(DType::kF32, std::nullopt, 1e-5);
}

TEST(ConvCudaTest, F64MatchesTheCpu) {
  GRAFT_REQUIRE_GPUS(1);
  check_cases(DType::kF64, std::nullopt, 1e-12);
}

// Halves accumulate in f32 on both sides; the output's one rounding is the difference.
TEST(ConvCudaTest, HalvesMatchTheCpu) {
  GRAFT_REQUIRE_GPUS(1);
  check_cases(DType::kBF16, std::nullopt, 1e-2);
  check_cases(DType::kF16, std::nullopt, 2e-3);
}

TEST(ConvCudaTest, Bf16IntoF32MatchesTheCpu) {
  GRAFT_REQUIRE_GPUS(1);
  check_cases(DType::kBF16, DType::kF32, 1e-5);
}

// Under grad: the backward convolutions are conv_general_dilated too, with lhs dilation and
// batch groups.
TEST(ConvCudaTest, GradientMatchesTheCpu) {
  GRAFT_REQUIRE_GPUS(1);
  const Array x = random::normal(random::key(40), {2, 4, 8, 8});
  const Array w = random::normal(random::key(41), {6, 2, 3, 3});
  auto loss = [](const Array& x, const Array& w) {
    return sum(square(conv_general_dilated(x, w, {2, 1}, "SAME", {}, {1, 2}, {}, 2)));
  };
  auto g = grad(loss, argnums<0, 1>);
  const auto [want_x, want_w] = g(x, w);
  const auto [got_x, got_w] = g(device_put(x, gpu()), device_put(w, gpu()));
  EXPECT_LE(normalized_error(got_x, want_x), 1e-5);
  EXPECT_LE(normalized_error(got_w, want_w), 1e-5);
}

}  // namespace
}  // namespace graft
