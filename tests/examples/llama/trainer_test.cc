// examples/llama's training run, shrunk to seconds: on the default corpus (fortunes, byte
// tokenizer) a tiny Llama must learn more than token frequencies, i.e. its validation loss
// must fall below the unigram baseline computed from the same split.
#include "examples/llama/trainer.h"

#include <cstdlib>
#include <filesystem>
#include <numeric>
#include <sstream>

#include "examples/train/train_config.h"
#include "gtest/gtest.h"
#include "tests/examples/llama/tiny_run.h"

namespace graft::llama_train {
namespace {

train::TrainConfig tiny_config(const std::string& dir) {
  train::TrainConfig c = tiny_run_config(dir, /*dim=*/64, /*ffn_dim=*/192);
  c.training.batch_size = 8;
  c.training.seq_len = 64;
  c.training.steps = 120;
  c.optimizer.lr = 3e-3;
  c.lr_scheduler.warmup_steps = 10;
  c.metrics.log_freq = 40;
  c.metrics.eval_freq = 60;
  c.metrics.eval_batches = 4;
  c.sample.prompt = "The ";
  c.sample.max_new_tokens = 16;
  return c;
}

double mean(const std::vector<double>& v, size_t begin, size_t end) {
  return std::accumulate(v.begin() + begin, v.begin() + end, 0.0) / double(end - begin);
}

TEST(TrainerTest, TinyRunBeatsTheUnigramBaseline) {
  train::TrainConfig config = tiny_config(fresh_test_dir("tiny_run"));
  std::ostringstream log;
  auto result = run_training(config, log);
  ASSERT_TRUE(result.ok()) << result.status() << "\n" << log.str();
  ASSERT_EQ(result->step_losses.size(), 120u);
  EXPECT_EQ(result->steps_done, 120);
  EXPECT_LT(mean(result->step_losses, 110, 120), mean(result->step_losses, 0, 10) - 1.0)
      << log.str();
  ASSERT_EQ(result->val_losses.size(), 2u);  // step 60 and the end
  EXPECT_GT(result->unigram_nats, 2.0);      // English bytes: ~3 nats
  EXPECT_LT(result->val_losses.back().second, result->unigram_nats - 0.2) << log.str();
  EXPECT_EQ(result->sample.rfind("The ", 0), 0u) << "the sample starts with its prompt";
  EXPECT_GT(result->sample.size(), 4u);
  EXPECT_TRUE(std::filesystem::exists(result->tensorboard_file));
  EXPECT_NE(log.str().find("tok/s"), std::string::npos) << log.str();
}

TEST(TrainerTest, TinyMoeRunLearnsAndReportsRouterMetrics) {
  train::TrainConfig config = tiny_config(fresh_test_dir("tiny_moe"));
  config.model.n_routed_experts = 4;
  config.model.top_k = 2;
  config.model.moe_every = 2;
  config.model.expert_ffn_dim = 64;
  config.model.n_shared_experts = 1;
  config.training.steps = 60;
  config.metrics.log_freq = 30;
  config.metrics.eval_freq = 1000;  // only the final validation
  std::ostringstream log;
  auto result = run_training(config, log);
  ASSERT_TRUE(result.ok()) << result.status() << "\n" << log.str();
  EXPECT_LT(mean(result->step_losses, 50, 60), mean(result->step_losses, 0, 10) - 0.7) << log.str();
  EXPECT_NE(log.str().find("MoE Llama"), std::string::npos) << log.str();
  EXPECT_NE(log.str().find("moe/expert_load ["), std::string::npos) << log.str();
  EXPECT_NE(log.str().find("moe/aux_loss"), std::string::npos) << log.str();
  ASSERT_EQ(result->val_losses.size(), 1u);
  EXPECT_LT(result->val_losses.back().second, result->unigram_nats) << log.str();
}

TEST(TrainerTest, GradientAccumulationMatchesTheFullBatch) {
  // Two micro-batches of 4 average to the same gradient as one batch of 8 (up to rounding),
  // so the first losses agree closely.
  train::TrainConfig full = tiny_config(fresh_test_dir("accum_full"));
  full.training.steps = 3;
  full.metrics.eval_freq = 0;
  full.sample.max_new_tokens = 0;
  train::TrainConfig accum = full;
  accum.job.dump_folder = fresh_test_dir("accum_two");
  accum.training.gradient_accumulation_steps = 2;
  std::ostringstream log;
  auto a = run_training(full, log);
  auto b = run_training(accum, log);
  ASSERT_TRUE(a.ok() && b.ok()) << log.str();
  for (int i = 0; i < 3; ++i) EXPECT_NEAR(a->step_losses[i], b->step_losses[i], 2e-4) << i;
}

TEST(TrainerTest, DataParallelMatchesOneDevice) {
  // [parallelism] data_parallel_replicate_degree = 4 (GRAFT_CPU_DEVICES=4, BUILD.bazel): each
  // device takes 2 of the 8 rows, the loss is averaged over the devices, and the replicated
  // parameters get the global gradient, so the losses follow the one-device run.
  train::TrainConfig one = tiny_config(fresh_test_dir("dp_one"));
  one.training.steps = 3;
  one.metrics.eval_freq = 0;
  one.sample.max_new_tokens = 0;
  train::TrainConfig four = one;
  four.job.dump_folder = fresh_test_dir("dp_four");
  four.parallelism.data_parallel_replicate_degree = 4;
  std::ostringstream log;
  auto a = run_training(one, log);
  auto b = run_training(four, log);
  ASSERT_TRUE(a.ok() && b.ok()) << log.str();
  for (int i = 0; i < 3; ++i) EXPECT_NEAR(a->step_losses[i], b->step_losses[i], 2e-4) << i;
  EXPECT_NE(log.str().find("data parallel over 4 devices: 2 rows per device"), std::string::npos)
      << log.str();
  // mem/dev is known under shard_map data parallelism too: the step's replicated values plus
  // the largest per-device body (before, -1: not known).
  RecordProperty("bytes_one_device", std::to_string(a->memory_per_device));
  RecordProperty("bytes_dp4", std::to_string(b->memory_per_device));
  ASSERT_GT(a->memory_per_device, 0);
  EXPECT_GT(b->memory_per_device, 0) << "no mem/dev under data parallelism";

  four.parallelism.data_parallel_replicate_degree = 8;  // more than the devices
  four.job.dump_folder = fresh_test_dir("dp_eight");
  auto c = run_training(four, log);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().message(),
            "parallelism.data_parallel_replicate_degree = 8 needs 8 devices, there are 4 (set "
            "GRAFT_CPU_DEVICES=8)");
}

TEST(TrainerTest, FsdpMatchesOneDevice) {
  // [parallelism] data_parallel_shard_degree = 2 x data_parallel_replicate_degree = 2 (HSDP on
  // 4 devices): parameters and AdamW state split over dp_shard, the batch over both axes; the
  // step is partitioned by jit from those shardings and follows the one-device run.
  train::TrainConfig one = tiny_config(fresh_test_dir("fsdp_one"));
  one.training.steps = 3;
  one.metrics.eval_freq = 0;
  one.sample.max_new_tokens = 0;
  train::TrainConfig four = one;
  four.job.dump_folder = fresh_test_dir("fsdp_four");
  four.parallelism.data_parallel_shard_degree = 2;
  four.parallelism.data_parallel_replicate_degree = 2;
  std::ostringstream log;
  auto a = run_training(one, log);
  auto b = run_training(four, log);
  ASSERT_TRUE(a.ok() && b.ok()) << log.str() << (b.ok() ? "" : b.status().ToString());
  for (int i = 0; i < 3; ++i) EXPECT_NEAR(a->step_losses[i], b->step_losses[i], 2e-4) << i;
  EXPECT_EQ(b->train_step_compiles, 1);  // params and state keep their layouts: no recompile
  EXPECT_EQ(b->param_layouts.at("layers.wq"), "P(None, None, 'dp_shard')");
  EXPECT_GT(b->memory_per_device, 0);
  EXPECT_LT(b->memory_per_device, a->memory_per_device);
  EXPECT_NE(log.str().find("FSDP over 4 devices (2 sharded x 2 replicated, jit shardings): 2 "
                           "rows per device"),
            std::string::npos)
      << log.str();
  four.parallelism.data_parallel_shard_degree = 4;  // 2 x 4 = 8 > 4 devices
  four.job.dump_folder = fresh_test_dir("fsdp_eight");
  auto c = run_training(four, log);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().message(),
            "parallelism.data_parallel_replicate_degree x data_parallel_shard_degree = 2 x 4 "
            "needs 8 devices, there are 4 (set GRAFT_CPU_DEVICES=8)");
}

TEST(TrainerTest, FsdpCheckpointResumesUnderAnotherMesh) {
  // Saved at step 2 by an FSDP run on 2 x 2 devices, resumed by a run on 2 devices and then
  // by one on 1: the losses follow an uninterrupted one-device run.
  train::TrainConfig one = tiny_config(fresh_test_dir("mesh_one"));
  one.training.steps = 4;
  one.metrics.eval_freq = 0;
  one.sample.max_new_tokens = 0;
  std::ostringstream log;
  auto full = run_training(one, log);
  ASSERT_TRUE(full.ok()) << log.str();
  train::TrainConfig c = one;
  c.job.dump_folder = fresh_test_dir("mesh_change");
  c.checkpoint.enable = true;
  c.checkpoint.interval = 1;
  c.parallelism.data_parallel_shard_degree = 2;
  c.parallelism.data_parallel_replicate_degree = 2;
  auto first = run_training(c, log, {.stop_after_step = 2});
  ASSERT_TRUE(first.ok()) << first.status() << log.str();
  c.parallelism.data_parallel_replicate_degree = 1;
  auto second = run_training(c, log, {.stop_after_step = 3});
  ASSERT_TRUE(second.ok()) << second.status() << log.str();
  EXPECT_EQ(second->first_step, 2);
  c.parallelism.data_parallel_shard_degree = 1;
  auto third = run_training(c, log);
  ASSERT_TRUE(third.ok()) << third.status() << log.str();
  EXPECT_EQ(third->first_step, 3);
  std::vector<double> resumed = first->step_losses;
  resumed.insert(resumed.end(), second->step_losses.begin(), second->step_losses.end());
  resumed.insert(resumed.end(), third->step_losses.begin(), third->step_losses.end());
  ASSERT_EQ(resumed.size(), 4u);
  for (int i = 0; i < 4; ++i) EXPECT_NEAR(resumed[i], full->step_losses[i], 2e-4) << i;
}

TEST(TrainerTest, BadInputsAreStatusErrors) {
  train::TrainConfig c = tiny_config(fresh_test_dir("bad"));
  c.training.steps = 1;
  c.model.vocab_size = 100;  // smaller than the byte tokenizer's 257 ids
  std::ostringstream log;
  auto r = run_training(c, log);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("vocab_size"), std::string::npos) << r.status();

  c = tiny_config(fresh_test_dir("bad2"));
  c.training.dataset = "/nonexistent/corpus.txt";
  r = run_training(c, log);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("/nonexistent/corpus.txt"), std::string::npos) << r.status();
}

}  // namespace
}  // namespace graft::llama_train
