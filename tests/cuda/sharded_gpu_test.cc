// Arrays sharded over a mesh of two GPUs (core/backend/device_shards.h) and jit with shardings
// over it, each against the same program over two of the CPU's virtual devices
// (GRAFT_CPU_DEVICES=2, BUILD.bazel). GPU tests: they skip without two devices or without a
// CUDA build. tests/core/backend:device_backend_sharding_test checks the same placement and routing
// on the CPU in every build, with a fake device backend.
#include <cmath>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "core/backend/device_shards.h"
#include "core/device/device.h"
#include "core/ops.h"
#include "core/sharding/device_put.h"
#include "gtest/gtest.h"
#include "tests/cuda/gpu_skip.h"
#include "transforms/autodiff.h"
#include "transforms/jit.h"

#ifdef GRAFT_CUDA
#include "core/backend/cuda/device.h"
#endif

namespace graft {
namespace {

Array iota(const Shape& shape, double scale) {
  return reshape(arange(0.0, static_cast<double>(numel(shape)), 1.0), shape) * scale;
}

void expect_near(const std::vector<float>& got, const std::vector<float>& want, double tol) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_NEAR(got[i], want[i], tol * (1 + std::fabs(want[i]))) << i;
  }
}

TEST(ShardedGpuTest, DevicePutPutsEachBlockOnItsGpu) {
  GRAFT_REQUIRE_GPUS(2);
  const Array x = iota({4, 6}, 1.0);
  const Mesh gpus({1, 2}, {"a", "b"}, devices("cuda")), cpus({1, 2}, {"a", "b"});
  for (const PartitionSpec& spec : {P(none, "b"), P("b"), P()}) {
    SCOPED_TRACE(spec.str());
    const Array on_gpus = device_put(x, NamedSharding(gpus, spec));
    ASSERT_NE(device_shards(*on_gpus.buffer()), nullptr);
    const std::vector<Shard> g = on_gpus.addressable_shards();
    const std::vector<Shard> c = device_put(x, NamedSharding(cpus, spec)).addressable_shards();
    ASSERT_EQ(g.size(), 2u);
    for (int k = 0; k < 2; ++k) {
      EXPECT_EQ(g[k].device.str(), "cuda:" + std::to_string(k));
      EXPECT_EQ(g[k].data.buffer()->device(), k);
      EXPECT_EQ(g[k].index, c[k].index);
      EXPECT_EQ(g[k].data.to_vector<float>(), c[k].data.to_vector<float>());
    }
    EXPECT_EQ(on_gpus.to_vector<float>(), x.to_vector<float>());
    // An eager op over it runs on the first GPU.
    const Array y = exp(on_gpus * 0.01);
    EXPECT_EQ(y.buffer()->device(), 0);
    expect_near(y.to_vector<float>(), exp(x * 0.01).to_vector<float>(), 1e-6);
  }
}

// A Megatron MLP and its gradient, jit-partitioned over 2 GPUs and over 2 virtual CPU devices.
TEST(ShardedGpuTest, JitWithShardingsMatchesTheVirtualDevices) {
  GRAFT_REQUIRE_GPUS(2);
  const Array x = iota({8, 16}, 0.01), w1 = iota({16, 32}, 0.001), w2 = iota({32, 16}, 0.002);
  auto loss = [](const Array& a, const Array& b, const Array& c) {
    return mean(square(matmul(tanh(matmul(a, b)), c)));
  };
  auto step = [loss](const Array& a, const Array& b, const Array& c) {
    return value_and_grad(loss, argnums<1, 2>)(a, b, c);
  };
  auto run_on = [&](const Mesh& mesh) {
    const NamedSharding rows(mesh, P("x")), cols(mesh, P(none, "x"));
    auto f = jit(step, {.in_shardings = {rows, cols, rows}});
    return f(device_put(x, rows), device_put(w1, cols), device_put(w2, rows));
  };
  const auto [l_cpu, g_cpu] = run_on(Mesh({2}, {"x"}));
  const auto [l_gpu, g_gpu] = run_on(Mesh({2}, {"x"}, devices("cuda")));
  expect_near(l_gpu.to_vector<float>(), l_cpu.to_vector<float>(), 1e-5);
  const auto& [gw1_gpu, gw2_gpu] = g_gpu;
  const auto& [gw1_cpu, gw2_cpu] = g_cpu;
  for (const auto& [gpu, cpu] : {std::pair{gw1_gpu, gw1_cpu}, std::pair{gw2_gpu, gw2_cpu}}) {
    EXPECT_EQ(gpu.sharding().spec(), cpu.sharding().spec());
    EXPECT_EQ(gpu.sharding().mesh().platform(), "cuda");
    const std::vector<Shard> shards = gpu.addressable_shards();
    for (int k = 0; k < 2; ++k) EXPECT_EQ(shards[k].data.buffer()->device(), k);
    expect_near(gpu.to_vector<float>(), cpu.to_vector<float>(), 1e-5);
  }
}

}  // namespace
}  // namespace graft
