// training.device = "cuda" with [parallelism] degrees above 1: the llama trainer places its
// params, optimizer state and batches over a mesh of the first GPUs with the placement code of
// the CPU run (examples/llama/placement.h), one buffer per shard on its GPU. No GPU here: this
// binary registers the fake device backend of tests/core/backend/host_device_backend.h (two "GPUs"
// whose memory is host memory, programs run by the CPU backend), so what it checks is the
// placement and the routing, against the same config over the CPU's two virtual devices
// (GRAFT_CPU_DEVICES=2, BUILD.bazel). tests/cuda:sharded_gpu_test runs the same kind of
// program on real GPUs.
#include <sstream>
#include <string>

#include "examples/llama/trainer.h"
#include "examples/train/train_config.h"
#include "gtest/gtest.h"
#include "tests/core/backend/host_device_backend.h"
#include "tests/examples/llama/tiny_run.h"

namespace graft::llama_train {
namespace {

const bool registered = host_device::register_host_device_backend();

// Under --config=cuda the trainer links the CUDA backend too, and either may be the one
// registered last: this test is about the fake one.
#define REQUIRE_FAKE_BACKEND()                                                       \
  if (device_backend()->name() != "hostdev")                                         \
  GTEST_SKIP() << "the CUDA backend is linked (--config=cuda): GPUs are covered by " \
                  "tests/cuda:sharded_gpu_test"

train::TrainConfig small_config(const std::string& dir) {
  train::TrainConfig c = tiny_run_config(dir, /*dim=*/64, /*ffn_dim=*/192);
  c.model.vocab_size = 260;  // tp 2 splits the output head too
  c.training.batch_size = 4;
  c.training.seq_len = 16;
  c.training.steps = 4;
  c.optimizer.lr = 3e-3;
  c.metrics.log_freq = 2;
  c.metrics.eval_freq = 0;
  c.metrics.enable_tensorboard = false;
  c.sample.max_new_tokens = 0;
  return c;
}

TEST(GpuMeshTrainTest, ShardedOverGpusFollowsTheVirtualDeviceRun) {
  REQUIRE_FAKE_BACKEND();
  for (const char* degree : {"fsdp", "tp"}) {
    SCOPED_TRACE(degree);
    train::TrainConfig cpu = small_config(fresh_test_dir(std::string("gpu_mesh_cpu_") + degree));
    if (std::string(degree) == "fsdp") {
      cpu.parallelism.data_parallel_shard_degree = 2;
    } else {
      cpu.parallelism.tensor_parallel_degree = 2;
    }
    train::TrainConfig gpu = cpu;
    gpu.job.dump_folder = fresh_test_dir(std::string("gpu_mesh_gpu_") + degree);
    gpu.training.device = "cuda";
    std::ostringstream cpu_log, gpu_log;
    auto a = run_training(cpu, cpu_log);
    ASSERT_TRUE(a.ok()) << a.status() << "\n" << cpu_log.str();
    const int before = host_device::runs;
    auto b = run_training(gpu, gpu_log);
    ASSERT_TRUE(b.ok()) << b.status() << "\n" << gpu_log.str();
    EXPECT_GE(host_device::runs - before, 4);  // the steps ran on the device backend
    EXPECT_NE(gpu_log.str().find("on cuda)"), std::string::npos) << gpu_log.str();
    ASSERT_EQ(a->step_losses.size(), 4u);
    // The same partitioned program over the same values: the same losses, bit for bit.
    EXPECT_EQ(a->step_losses, b->step_losses);
    EXPECT_EQ(a->param_layouts, b->param_layouts);
    EXPECT_EQ(b->train_step_compiles, 1);  // the outputs came back in the layouts they went in
  }
}

TEST(GpuMeshTrainTest, MoreGpusThanThereAreIsRefused) {
  REQUIRE_FAKE_BACKEND();
  train::TrainConfig c = small_config(fresh_test_dir("gpu_mesh_too_many"));
  c.training.device = "cuda";
  c.parallelism.data_parallel_shard_degree = 4;
  std::ostringstream log;
  auto r = run_training(c, log);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument) << r.status();
  EXPECT_NE(r.status().message().find("needs 4 GPUs, there are 2"), std::string::npos)
      << r.status();
}

}  // namespace
}  // namespace graft::llama_train
