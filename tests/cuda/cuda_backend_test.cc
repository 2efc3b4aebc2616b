// The CUDA backend end to end (GPU tests; they skip without a device or a CUDA build): arrays
// device_put on cuda:0 round-trip, and eager ops, jit, grad, scan, cond, while_loop and a small
// Llama's train steps over them give what the CPU gives (normalized error).
#include <algorithm>
#include <cmath>

#include "core/backend/backend.h"
#include "core/backend/cuda/device.h"
#include "core/device/device.h"
#include "core/ops.h"
#include "core/random/random.h"
#include "core/sharding/device_put.h"
#include "core/tree/tree.h"
#include "examples/llama/model.h"
#include "examples/llama/train_step.h"
#include "gtest/gtest.h"
#include "tests/cuda/gpu_skip.h"
#include "optim/optim.h"
#include "transforms/autodiff.h"
#include "transforms/control_flow.h"
#include "transforms/jit.h"

namespace graft {
namespace {

Device gpu() { return devices("cuda")[0]; }

double normalized_error(const Array& got, const Array& want) {
  std::vector<double> g = got.to_vector<double>(), w = want.to_vector<double>();
  double scale = 1, err = 0;
  for (double v : w) scale = std::max(scale, std::abs(v));
  for (size_t i = 0; i < w.size(); ++i) err = std::max(err, std::abs(g[i] - w[i]) / scale);
  return err;
}

TEST(CudaBackendTest, DevicePutRoundTrips) {
  GRAFT_REQUIRE_GPUS(1);
  Array x = random::normal(random::key(0), {1000, 37});
  Array on = device_put(x, gpu());
  EXPECT_FALSE(on.buffer()->on_host());
  EXPECT_EQ(on.to_vector<float>(), x.to_vector<float>());
  EXPECT_EQ(device_put(on, devices()[0]).to_vector<float>(), x.to_vector<float>());
}

TEST(CudaBackendTest, EagerOpsMatchTheCpu) {
  GRAFT_REQUIRE_GPUS(1);
  Array a = random::normal(random::key(1), {64, 128});
  Array b = random::normal(random::key(2), {128, 32});
  auto f = [](const Array& a, const Array& b) {
    return sum(tanh(matmul(a, b)) * 0.5 + exp(-abs(matmul(a, b))), {1});
  };
  Array got = f(device_put(a, gpu()), device_put(b, gpu()));
  EXPECT_FALSE(got.buffer()->on_host());
  EXPECT_LE(normalized_error(got, f(a, b)), 1e-5);
}

TEST(CudaBackendTest, JitAndGradMatchTheCpu) {
  GRAFT_REQUIRE_GPUS(1);
  auto loss = [](const Array& w, const Array& x) { return mean(square(tanh(matmul(x, w)))); };
  auto g = jit(grad(loss));
  Array w = random::normal(random::key(3), {16, 8}), x = random::normal(random::key(4), {32, 16});
  Array got = g(device_put(w, gpu()), device_put(x, gpu()));
  EXPECT_FALSE(got.buffer()->on_host());
  EXPECT_LE(normalized_error(got, g(w, x)), 1e-5);
}

TEST(CudaBackendTest, ControlFlowMatchesTheCpu) {
  GRAFT_REQUIRE_GPUS(1);
  auto f = [](const Array& xs) {
    auto [last, ys] = scan(
        [](const Array& c, const Array& x) { return std::pair{c * 0.9 + x, c}; },
        zeros({xs.shape()[1]}), xs);
    Array r = cond(
        sum(last) > 0.0, [](const Array& a) { return a * 2.0; },
        [](const Array& a) { return -a; }, last);
    Array n = while_loop([](const Array& c) { return sum(c) < 1000.0; },
                         [](const Array& c) { return c * 2.0 + 1.0; }, abs(r));
    return sum(ys, {0}) + n;
  };
  Array xs = random::normal(random::key(5), {12, 5});
  Array got = jit(f)(device_put(xs, gpu()));
  EXPECT_LE(normalized_error(got, f(xs)), 1e-5);
}

// Three train steps of a tiny Llama (scan over layers, flash attention, fused elementwise,
// AdamW) on the GPU give the CPU's losses.
TEST(CudaBackendTest, LlamaTrainStepsMatchTheCpu) {
  GRAFT_REQUIRE_GPUS(1);
  nn::LlamaConfig c;  // the defaults: vocab 256, dim 64, 2 layers
  llama_train::DenseLlama model{c};
  auto opt = optim::adamw({.learning_rate = 1e-3});
  auto step = llama_train::make_train_step(model, opt);
  auto put = [&](const Array& a) { return device_put(a, gpu()); };
  auto p_cpu = model.init(random::key(0));
  optim::State s_cpu = opt.init(p_cpu);
  auto p_gpu = tree_map(put, p_cpu);
  optim::State s_gpu = tree_map(put, s_cpu);
  for (int i = 0; i < 3; ++i) {
    Array tokens = random::randint(random::key(100 + i), {1, 4, 33}, 0, c.vocab_size);
    Array x = slice_axis(tokens, 2, 0, 32), y = slice_axis(tokens, 2, 1, 33);
    auto [p1, s1, m1] = step(p_cpu, s_cpu, x, y);
    auto [p2, s2, m2] = step(p_gpu, s_gpu, put(x), put(y));
    const float want = m1.at("loss").item<float>(), got = m2.at("loss").item<float>();
    EXPECT_NEAR(got, want, 1e-4 * std::abs(want)) << "step " << i;
    p_cpu = p1;
    s_cpu = s1;
    p_gpu = p2;
    s_gpu = s2;
  }
}

}  // namespace
}  // namespace graft
