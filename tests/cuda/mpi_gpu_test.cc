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
#include "core/device/device.h"
#include "core/distributed/mpi.h"
#include "core/ops.h"
#include "core/sharding/device_put.h"
#include "gtest/gtest.h"
#include "tests/cuda/gpu_skip.h"
#include "tests/cuda/collectives_compare.h"
#include "transforms/jit.h"
#include "transforms/pmap.h"
#include "transforms/shard_map.h"

namespace graft {
namespace {

#ifdef GRAFT_CUDA
// gpu_skip.h's gate for this process's GPU (a driver error where a GPU is expected fails), then
// a second process.
#define REQUIRE_GPU_PER_PROCESS()                                                           \
  GRAFT_REQUIRE_GPUS(1);                                                                    \
  if (process_count() < 2)                                                                  \
  GTEST_SKIP() << "needs 2 processes with a GPU each; process " << process_index() << " of " \
               << process_count() << " has " << cuda::device_count() << " (" << cuda::status() \
               << ")"
#else
#define REQUIRE_GPU_PER_PROCESS() GTEST_SKIP() << "built without CUDA (--config=cuda)"
#endif

TEST(MpiGpuTest, PsumPmaxAxisIndex) {
  REQUIRE_GPU_PER_PROCESS();
  cuda_testing::check_psum_pmax_axis_index();
}

TEST(MpiGpuTest, AllGatherAlongAnInnerDimension) {
  REQUIRE_GPU_PER_PROCESS();
  cuda_testing::check_all_gather();
}

TEST(MpiGpuTest, PsumScatterAndAllToAll) {
  REQUIRE_GPU_PER_PROCESS();
  cuda_testing::check_psum_scatter_and_all_to_all();
}

TEST(MpiGpuTest, PpermuteRotatesAndZeroFills) {
  REQUIRE_GPU_PER_PROCESS();
  cuda_testing::check_ppermute();
}

TEST(MpiGpuTest, ShardMapMatmulUnderJit) {
  REQUIRE_GPU_PER_PROCESS();
  cuda_testing::check_tensor_parallel_mlp();
}

TEST(MpiGpuTest, PmapPsum) {
  REQUIRE_GPU_PER_PROCESS();
  cuda_testing::check_pmap_psum();
}

}  // namespace
}  // namespace graft
