// [parallelism] expert_parallel_degree on the llama trainer (GRAFT_CPU_DEVICES=8, BUILD.bazel):
// an MoE llama-tiny with its experts split over the 4 dp_shard devices (capacity dispatch,
// tokens exchanged by all_to_all) follows the one-device run of the same capacity config for
// 20 AdamW steps (so do HSDP 2 x 2 with the experts over the 2 dp_shard devices, and all 8
// devices as 2 replicas x 4 shards);
// misconfigurations are status errors.
#include <algorithm>
#include <cmath>
#include <sstream>
#include <string>

#include "examples/llama/trainer.h"
#include "examples/train/train_config.h"
#include "gtest/gtest.h"
#include "tests/examples/llama/tiny_run.h"

namespace graft::llama_train {
namespace {

train::TrainConfig moe_config(const std::string& dir) {
  train::TrainConfig c = tiny_run_config(dir, /*dim=*/64, /*ffn_dim=*/192);
  c.model.n_routed_experts = 4;
  c.model.top_k = 2;
  c.model.expert_ffn_dim = 64;
  c.model.n_shared_experts = 1;
  c.model.moe_capacity_factor = 1.25;  // C = 80 of the 128 tokens per group: some drop
  c.model.moe_token_groups = 4;
  c.training.batch_size = 8;
  c.training.seq_len = 64;
  c.training.steps = 20;
  c.optimizer.name = "adamw";
  c.optimizer.lr = 3e-3;
  c.lr_scheduler.warmup_steps = 5;
  c.metrics.log_freq = 10;
  c.metrics.eval_freq = 0;
  c.sample.max_new_tokens = 0;
  return c;
}

// Relative tolerance 2e-5 per step loss: the sharded step sums the same terms in another
// order (f32), and 20 AdamW steps carry the rounding along.
TEST(ExpertParallelTest, MoeWithExpertsOverFourDevicesFollowsOneDevice) {
  train::TrainConfig one = moe_config(fresh_test_dir("ep_one"));
  train::TrainConfig four = one;
  four.job.dump_folder = fresh_test_dir("ep_four");
  four.parallelism.data_parallel_shard_degree = 4;
  four.parallelism.expert_parallel_degree = 4;
  four.sample.prompt = "The ";
  four.sample.max_new_tokens = 8;  // sampling runs dropless over the split experts
  std::ostringstream log;
  auto a = run_training(one, log);
  ASSERT_TRUE(a.ok()) << a.status() << "\n" << log.str();
  auto b = run_training(four, log);
  ASSERT_TRUE(b.ok()) << b.status() << "\n" << log.str();
  ASSERT_EQ(a->step_losses.size(), 20u);
  ASSERT_EQ(b->step_losses.size(), 20u);
  double worst = 0;
  for (int i = 0; i < 20; ++i) {
    EXPECT_NEAR(b->step_losses[i], a->step_losses[i], 2e-5 * std::abs(a->step_losses[i])) << i;
    worst = std::max(worst, std::abs(b->step_losses[i] / a->step_losses[i] - 1));
  }
  std::ostringstream w;
  w << worst;
  RecordProperty("max_relative_loss_difference", w.str());
  EXPECT_LT(a->step_losses.back(), a->step_losses.front() - 0.3);  // it trains
  EXPECT_GE(b->sample.size(), 4u) << log.str();
  EXPECT_NE(log.str().find("experts split over the 4 dp_shard devices"), std::string::npos)
      << log.str();
  // HSDP with EP: 2 replicas x 2 shards, experts split over the 2 dp_shard devices.
  train::TrainConfig hsdp = four;
  hsdp.job.dump_folder = fresh_test_dir("ep_hsdp");
  hsdp.parallelism.data_parallel_replicate_degree = 2;
  hsdp.parallelism.data_parallel_shard_degree = 2;
  hsdp.parallelism.expert_parallel_degree = 2;
  hsdp.sample.max_new_tokens = 0;
  auto c = run_training(hsdp, log);
  ASSERT_TRUE(c.ok()) << c.status() << "\n" << log.str();
  ASSERT_EQ(c->step_losses.size(), 20u);
  for (int i = 0; i < 20; ++i) {
    EXPECT_NEAR(c->step_losses[i], a->step_losses[i], 2e-5 * std::abs(a->step_losses[i])) << i;
  }
  // All 8 devices: 2 replicas x 4 shards, experts split over the 4 dp_shard devices.
  train::TrainConfig eight = four;
  eight.job.dump_folder = fresh_test_dir("ep_eight");
  eight.parallelism.data_parallel_replicate_degree = 2;
  eight.sample.max_new_tokens = 0;
  auto e = run_training(eight, log);
  ASSERT_TRUE(e.ok()) << e.status() << "\n" << log.str();
  ASSERT_EQ(e->step_losses.size(), 20u);
  for (int i = 0; i < 20; ++i) {
    EXPECT_NEAR(e->step_losses[i], a->step_losses[i], 2e-5 * std::abs(a->step_losses[i])) << i;
  }
}

TEST(ExpertParallelTest, ConfigErrors) {
  std::ostringstream log;
  train::TrainConfig c = moe_config(fresh_test_dir("ep_bad"));
  c.parallelism.data_parallel_shard_degree = 4;
  c.parallelism.expert_parallel_degree = 2;
  auto r = run_training(c, log);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("parallelism.expert_parallel_degree = 2: must be 1 or "
                                      "equal to data_parallel_shard_degree = 4"),
            std::string::npos)
      << r.status();
  c.parallelism.expert_parallel_degree = 4;
  c.model.n_routed_experts = 0;  // dense
  r = run_training(c, log);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("needs an MoE model"), std::string::npos) << r.status();
  c.model.n_routed_experts = 4;
  c.model.moe_capacity_factor = 0;  // dropless
  r = run_training(c, log);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("needs model.moe_capacity_factor > 0"), std::string::npos)
      << r.status();
  c.model.moe_capacity_factor = 1.0;
  c.model.n_routed_experts = 6;
  r = run_training(c, log);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("must divide model.n_routed_experts = 6"), std::string::npos)
      << r.status();
}

}  // namespace
}  // namespace graft::llama_train
