// jit's dot + bias + relu / gelu chains on the GPU: the CUDA executable's plan
// (core/backend/cuda/epilogue_run.h) hands them to cuBLASLt's epilogue; the results must be
// the CPU's (which runs the chain op by op). The plan is checked without a GPU; the runs skip
// without one.
#include <optional>
#include <vector>

#include "core/backend/cuda/device.h"
#include "core/device/device.h"
#include "core/ops.h"
#include "core/random/random.h"
#include "nn/activations.h"
#include "gtest/gtest.h"
#include "tests/cuda/gpu_skip.h"
#include "transforms/jit.h"
#include "transforms/passes/passes.h"
#ifdef GRAFT_CUDA
#include "core/backend/cuda/execute.h"
#endif

namespace graft {
namespace {

#ifdef GRAFT_CUDA
#define REQUIRE_CUDA_BUILD()
#else
#define REQUIRE_CUDA_BUILD() GTEST_SKIP() << "built without CUDA (--config=cuda)"
#endif

Array bias_relu(const Array& x, const Array& w, const Array& b) {
  return maximum(matmul(x, w) + b, 0.0f);
}
Array bias_only(const Array& x, const Array& w, const Array& b) { return matmul(x, w) + b; }
Array relu_only(const Array& x, const Array& w, const Array&) {
  return maximum(matmul(x, w), 0.0f);
}
Array bias_nn_relu(const Array& x, const Array& w, const Array& b) {
  return nn::relu(matmul(x, w) + b);
}
Array bias_gelu(const Array& x, const Array& w, const Array& b) {
  return nn::gelu(matmul(x, w) + b);
}
Array gelu_only(const Array& x, const Array& w, const Array&) { return nn::gelu(matmul(x, w)); }

// The program jit hands the backend for f over x [64, 48], w [48, 40], b [40] of `dtype`.
Program jit_program(Array (*f)(const Array&, const Array&, const Array&), DType dtype) {
  std::optional<Program> p = lower(trace_avals(
      [f](const std::vector<Array>& a) { return std::vector<Array>{f(a[0], a[1], a[2])}; },
      {Aval{{64, 48}, dtype, false}, Aval{{48, 40}, dtype, false}, Aval{{40}, dtype, false}}));
  EXPECT_TRUE(p.has_value());
  return optimize(*p);
}

TEST(MatmulEpilogueGpuTest, TheExecutablePlansOneGemmPerChain) {
  REQUIRE_CUDA_BUILD();
#ifdef GRAFT_CUDA
  for (DType d : {DType::kF32, DType::kBF16, DType::kF16}) {
    for (auto [f, act] : {std::pair{&bias_relu, MatmulEpilogue::Activation::kRelu},
                          std::pair{&bias_gelu, MatmulEpilogue::Activation::kGelu}}) {
      Program p = jit_program(f, d);
      cuda::EpiloguePlan plan = cuda::plan_epilogues(p);
      ASSERT_EQ(plan.matches.size(), 1u) << print_program(p);
      EXPECT_EQ(plan.matches[0].activation, act);
      int results = 0;
      for (const auto& part : plan.parts) results += part.role == cuda::EpiloguePlan::Role::kResult;
      EXPECT_EQ(results, 1);
    }
  }
  // f64: cuBLASLt's epilogues are not used for it.
  EXPECT_TRUE(cuda::plan_epilogues(jit_program(bias_relu, DType::kF64)).matches.empty());
#endif
}

TEST(MatmulEpilogueGpuTest, FusedResultsMatchTheCpu) {
  GRAFT_REQUIRE_GPUS(1);
  const Device gpu = devices("cuda")[0];
  for (auto f : {bias_relu, bias_only, relu_only, bias_nn_relu, bias_gelu, gelu_only}) {
    for (DType d : {DType::kF32, DType::kBF16}) {
      Array x = astype(random::normal(random::key(1), {64, 48}), d);
      Array w = astype(random::normal(random::key(2), {48, 40}) * 0.2, d);
      Array b = astype(random::normal(random::key(3), {40}), d);
      Array want = jit(f)(x, w, b);
      Array got = jit(f)(device_put(x, gpu), device_put(w, gpu), device_put(b, gpu));
      EXPECT_FALSE(got.buffer()->on_host());
      std::vector<double> g = got.to_vector<double>(), e = want.to_vector<double>();
      ASSERT_EQ(g.size(), e.size());
      // f32 without TF32 on both sides; bf16 rounds the product once (cuBLASLt) or twice
      // (the CPU: the dot, then the add). cuBLASLt's gelu is the same tanh approximation as
      // nn::gelu's, computed its own way (tolerances as for the bias).
      const double tol = d == DType::kF32 ? 1e-4 : 0.1;
      for (size_t i = 0; i < g.size(); ++i)
        ASSERT_NEAR(g[i], e[i], tol) << dtype_name(d) << " " << i;
    }
  }
}

}  // namespace
}  // namespace graft
