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
#include "core/device/device.h"
#include "core/ops.h"
#include "core/sharding/device_put.h"
#include "gtest/gtest.h"
#include "tests/cuda/collectives_compare.h"
#include "tests/cuda/gpu_skip.h"
#include "transforms/jit.h"
#include "transforms/pmap.h"
#include "transforms/shard_map.h"

namespace graft {
namespace {

TEST(CollectivesGpuTest, PsumPmaxAxisIndex) {
  GRAFT_REQUIRE_GPUS(2);
  cuda_testing::check_psum_pmax_axis_index();
}

TEST(CollectivesGpuTest, AllGatherAlongAnInnerDimension) {
  GRAFT_REQUIRE_GPUS(2);
  cuda_testing::check_all_gather();
}

TEST(CollectivesGpuTest, PsumScatterAndAllToAll) {
  GRAFT_REQUIRE_GPUS(2);
  cuda_testing::check_psum_scatter_and_all_to_all();
}

TEST(CollectivesGpuTest, PpermuteRotatesAndZeroFills) {
  GRAFT_REQUIRE_GPUS(2);
  cuda_testing::check_ppermute();
}

TEST(CollectivesGpuTest, ShardMapMatmulUnderJit) {
  GRAFT_REQUIRE_GPUS(2);
  cuda_testing::check_tensor_parallel_mlp();
}

TEST(CollectivesGpuTest, PmapPsum) {
  GRAFT_REQUIRE_GPUS(2);
  cuda_testing::check_pmap_psum();
}

}  // namespace
}  // namespace graft
