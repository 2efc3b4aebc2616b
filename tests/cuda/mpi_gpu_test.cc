// A mesh of GPUs over two processes (mpi_gpu_test.sh: mpirun -np 2, one GPU per process, one
// CPU virtual device each): shard_map, pmap and the collectives with the operands device_put
// on each process's GPU run on the CUDA backend, members on the processes' GPUs, their
// collectives over NCCL communicators made per group from an id sent over MPI
// (core/backend/cuda/shard_map_kernel.cc, collective_kernels.cc, gpu_mesh.h). Each is compared
// with the same program on the CPU's virtual devices, which span the two processes the same
// way (the CPU's multi-process path, core/distributed/mpi.h). Every process must run the same
// tests in the same order (SPMD). GPU test: the script skips it with fewer than 2 GPUs, and
// each case skips without a GPU or without a second process.
#include <cstdio>
#include <string>
#include <tuple>
#include <vector>

#include "core/backend/cuda/device.h"
#include "core/device.h"
#include "core/distributed/mpi.h"
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
#define REQUIRE_GPU_PER_PROCESS()                                                           \
  if (cuda::device_count() < 1 || process_count() < 2)                                      \
  GTEST_SKIP() << "needs 2 processes with a GPU each; process " << process_index() << " of " \
               << process_count() << " has " << cuda::device_count() << " (" << cuda::status() \
               << ")"
#else
#define REQUIRE_GPU_PER_PROCESS() GTEST_SKIP() << "built without CUDA (--config=cuda)"
#endif

using cuda_testing::expect_close;
using cuda_testing::expect_gpu_matches_cpu;
using cuda_testing::on_gpu;
using cuda_testing::rnd;

TEST(MpiGpuTest, PsumPmaxAxisIndexAcrossProcesses) {
  REQUIRE_GPU_PER_PROCESS();
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
  // Member 1's block was computed on the other process: it arrives over MPI.
  expect_close(idx, idx_cpu, "axis_index");
}

TEST(MpiGpuTest, GatherScatterAllToAllPpermute) {
  REQUIRE_GPU_PER_PROCESS();
  Mesh mesh({2}, {"i"});
  auto gather = shard_map([](const Array& x) { return all_gather(x, "i", 1, /*tiled=*/true); },
                          mesh, {P("i", none)}, {P("i", none)});
  expect_gpu_matches_cpu(gather, rnd({4, 3}, 0.2), "all_gather(axis 1, tiled)");
  auto scatter = shard_map([](const Array& x) { return psum_scatter(x, "i", 1, /*tiled=*/true); },
                           mesh, {P("i", none)}, {P("i", none)});
  expect_gpu_matches_cpu(scatter, rnd({4, 6}, 0.4), "psum_scatter(dim 1, tiled)");
  auto a2a = shard_map([](const Array& x) { return all_to_all(x, "i", 1, 0, /*tiled=*/true); },
                       mesh, {P("i", none)}, {P("i", none)});
  expect_gpu_matches_cpu(a2a, rnd({4, 6}, 0.5), "all_to_all(split 1, concat 0, tiled)");
  auto swap = shard_map([](const Array& x) { return ppermute(x, "i", {{0, 1}, {1, 0}}); }, mesh,
                        {P("i", none)}, {P("i", none)});
  expect_gpu_matches_cpu(swap, rnd({4, 3}, 0.6), "ppermute swap");
}

TEST(MpiGpuTest, PmapAndJitAcrossProcesses) {
  REQUIRE_GPU_PER_PROCESS();
  auto f = pmap([](const Array& x) { return x / psum(x, {"i"}); }, "i");
  expect_gpu_matches_cpu(f, rnd({2, 5}, 0.8) + 2.0, "pmap x / psum(x)");
  Mesh mesh({2}, {"i"});
  // Column-split x times row-split w, summed: a tensor-parallel matmul under jit.
  auto block = shard_map([](const Array& a, const Array& b) { return psum(matmul(a, b), {"i"}); },
                         mesh, {P(none, "i"), P("i", none)}, {P()});
  auto tp = jit([&](const Array& x, const Array& w) { return block(x, w); });
  Array x = rnd({4, 6}, 0.9), w = rnd({6, 3}, 1.0);
  Array gpu = tp(on_gpu(x), on_gpu(w));
  EXPECT_FALSE(gpu.buffer()->on_host());
  expect_close(gpu, matmul(x, w), "tensor-parallel matmul under jit vs unsharded");
}

}  // namespace
}  // namespace graft

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  if (absl::Status s = graft::distributed::initialize(); !s.ok()) {
    std::fprintf(stderr, "distributed::initialize: %s\n", std::string(s.message()).c_str());
    return 1;
  }
  return RUN_ALL_TESTS();
}
