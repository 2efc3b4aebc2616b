// Collectives, shard_map and pmap on a mesh of two GPUs (GPU tests: they skip without two
// devices or without a CUDA build), each against the same program on two of the CPU's
// virtual devices (GRAFT_CPU_DEVICES=2, BUILD.bazel). The inputs are device_put on cuda:0, so
// the shard_map runs on the CUDA backend: member k on GPU k, its collectives over NCCL
// (core/backend/cuda/shard_map_kernel.cc, collective_kernels.cc). f32 throughout: NCCL takes
// f32 sums, and both sides add two terms, so the results agree to rounding.
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "core/backend/cuda/device.h"
#include "core/device.h"
#include "core/ops.h"
#include "core/sharding.h"
#include "gtest/gtest.h"
#include "tests/cuda/collectives_compare.h"
#include "transforms/jit.h"
#include "transforms/pmap.h"
#include "transforms/shard_map.h"

namespace graft {
namespace {

#ifdef GRAFT_CUDA
#define REQUIRE_TWO_GPUS()                                                                     \
  if (cuda::device_count() < 2)                                                                \
  GTEST_SKIP() << "needs 2 GPUs, there are " << cuda::device_count() << " (" << cuda::status() \
               << ")"
#else
#define REQUIRE_TWO_GPUS() GTEST_SKIP() << "built without CUDA (--config=cuda)"
#endif

using cuda_testing::expect_close;
using cuda_testing::expect_gpu_matches_cpu;
using cuda_testing::on_gpu;
using cuda_testing::rnd;

TEST(CollectivesGpuTest, PsumPmaxAxisIndex) {
  REQUIRE_TWO_GPUS();
  Mesh mesh({2}, {"i"});
  auto f = shard_map(
      [](const Array& x) {
        return std::tuple{psum(x, {"i"}), pmax(x, {"i"}), x * astype(axis_index("i"), DType::kF32)};
      },
      mesh, {P("i", none)}, {P(), P(), P("i", none)});
  Array x = rnd({4, 3}, 0.1);
  auto [s, m, idx] = f(on_gpu(x));
  auto [s_cpu, m_cpu, idx_cpu] = f(x);
  expect_close(s, s_cpu, "psum");
  expect_close(m, m_cpu, "pmax");
  expect_close(idx, idx_cpu, "axis_index");
}

TEST(CollectivesGpuTest, AllGatherAlongAnInnerDimension) {
  REQUIRE_TWO_GPUS();
  Mesh mesh({2}, {"i"});
  // Gathering along dimension 1 goes through the scratch transpose (outer > 1).
  auto f = shard_map([](const Array& x) { return all_gather(x, "i", 1, /*tiled=*/true); }, mesh,
                     {P("i", none)}, {P("i", none)});
  expect_gpu_matches_cpu(f, rnd({4, 3}, 0.2), "all_gather(axis 1, tiled)");
  auto g = shard_map([](const Array& x) { return all_gather(x, "i"); }, mesh, {P("i", none)},
                     {P("i", none, none)});
  expect_gpu_matches_cpu(g, rnd({4, 3}, 0.3), "all_gather(axis 0)");
}

TEST(CollectivesGpuTest, PsumScatterAndAllToAll) {
  REQUIRE_TWO_GPUS();
  Mesh mesh({2}, {"i"});
  auto scatter = shard_map([](const Array& x) { return psum_scatter(x, "i", 1, /*tiled=*/true); },
                           mesh, {P("i", none)}, {P("i", none)});
  expect_gpu_matches_cpu(scatter, rnd({4, 6}, 0.4), "psum_scatter(dim 1, tiled)");
  auto a2a = shard_map([](const Array& x) { return all_to_all(x, "i", 1, 0, /*tiled=*/true); },
                       mesh, {P("i", none)}, {P("i", none)});
  expect_gpu_matches_cpu(a2a, rnd({4, 6}, 0.5), "all_to_all(split 1, concat 0, tiled)");
}

TEST(CollectivesGpuTest, PpermuteRotatesAndZeroFills) {
  REQUIRE_TWO_GPUS();
  Mesh mesh({2}, {"i"});
  auto swap = shard_map(
      [](const Array& x) {
        return ppermute(x, "i", {{0, 1}, {1, 0}});
      },
      mesh, {P("i", none)}, {P("i", none)});
  expect_gpu_matches_cpu(swap, rnd({4, 3}, 0.6), "ppermute swap");
  auto one_way = shard_map(
      [](const Array& x) {
        return ppermute(x, "i", {{0, 1}});
      },
      mesh, {P("i", none)}, {P("i", none)});
  expect_gpu_matches_cpu(one_way, rnd({4, 3}, 0.7), "ppermute 0 -> 1 (member 0 gets zeros)");
}

// Megatron-style tensor parallel: w1 split by columns, w2 by rows, partial products summed.
TEST(CollectivesGpuTest, ShardMapMatmulUnderJit) {
  REQUIRE_TWO_GPUS();
  Mesh mesh({2}, {"model"});
  auto block =
      shard_map([](const Array& x, const Array& w1,
                   const Array& w2) { return psum(matmul(tanh(matmul(x, w1)), w2), {"model"}); },
                mesh, {P(), P(none, "model"), P("model", none)}, {P()});
  auto f = jit([&](const Array& x, const Array& w1, const Array& w2) { return block(x, w1, w2); });
  Array x = rnd({8, 16}, 0.1), w1 = rnd({16, 32}, 0.2) * 0.3, w2 = rnd({32, 4}, 0.3) * 0.3;
  Array got = f(on_gpu(x), on_gpu(w1), on_gpu(w2));
  EXPECT_FALSE(got.buffer()->on_host());
  expect_close(got, matmul(tanh(matmul(x, w1)), w2), "tensor-parallel MLP vs unsharded");
}

TEST(CollectivesGpuTest, PmapPsum) {
  REQUIRE_TWO_GPUS();
  auto f = pmap([](const Array& x) { return x / psum(x, {"i"}); }, "i");
  expect_gpu_matches_cpu(f, rnd({2, 5}, 0.8) + 2.0, "pmap x / psum(x)");
}

}  // namespace
}  // namespace graft
