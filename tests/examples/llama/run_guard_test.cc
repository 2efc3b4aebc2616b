// The training run's guards, on the tiny config of the other tests: divergence stops before
// anything of the diverging step is saved; plans that cannot work (fewer steps than the
// checkpoint's, a load_step with later steps beside it, a top_k above the vocabulary) are
// refused before the first step; a stop request checkpoints the step it finishes; a padded
// vocabulary samples only tokenizer ids; the memory estimate counts what nn counts.
#include <signal.h>

#include <atomic>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "checkpoint/manager.h"
#include "core/device/device.h"
#include "examples/llama/memory_estimate.h"
#include "examples/llama/model.h"
#include "examples/llama/trainer.h"
#include "examples/train/train_config.h"
#include "gtest/gtest.h"
#include "nn/llama.h"
#include "nn/moe_llama.h"
#include "tests/examples/llama/tiny_run.h"

namespace graft::llama_train {
namespace {

namespace fs = std::filesystem;

train::TrainConfig tiny_config(const std::string& dir) {
  train::TrainConfig c = tiny_run_config(dir, /*dim=*/32, /*ffn_dim=*/64);
  c.training.data_dir = fresh_test_dir("guard_data");  // prepared once, reused by every run
  c.training.batch_size = 4;
  c.training.seq_len = 32;
  c.training.steps = 8;
  c.lr_scheduler.warmup_steps = 3;
  c.metrics.log_freq = 1;
  c.metrics.eval_freq = 0;
  c.metrics.enable_tensorboard = false;
  c.sample.max_new_tokens = 0;
  return c;
}

std::unique_ptr<checkpoint::CheckpointManager> open_manager(const train::TrainConfig& c) {
  auto m = checkpoint::CheckpointManager::open(c.job.dump_folder + "/checkpoint");
  EXPECT_TRUE(m.ok()) << m.status();
  return std::move(*m);
}

bool any_progress_line(const std::string& log) {
  return log.find("\nstep ") != std::string::npos || log.rfind("step ", 0) == 0;
}

TEST(RunGuardTest, DivergenceSavesNothingOfTheStepAndLeavesAGoodCheckpointToResume) {
  train::TrainConfig c = tiny_config(fresh_test_dir("diverge"));
  c.optimizer.lr = 1e6;
  c.lr_scheduler.warmup_steps = 20;
  c.checkpoint.enable = true;
  c.checkpoint.interval = 1;
  c.checkpoint.keep_latest_k = 1;  // a bad save would leave no good one behind
  c.checkpoint.export_hf = "hf";
  std::ostringstream log;
  auto r = run_training(c, log);
  ASSERT_FALSE(r.ok()) << log.str();
  const std::string msg(r.status().message());
  const size_t at = msg.find("training diverged at step ");
  ASSERT_NE(at, std::string::npos) << msg;
  const int64_t step = std::atoi(msg.c_str() + at + 26);
  EXPECT_GE(step, 2) << msg;
  EXPECT_NE(msg.find("optimizer.lr"), std::string::npos) << msg;
  EXPECT_FALSE(fs::exists(c.job.dump_folder + "/hf"));

  // The latest checkpoint is older than the params that gave the non-finite value, and it
  // is finite.
  auto manager = open_manager(c);
  ASSERT_TRUE(manager->latest_step().has_value()) << msg;
  const int64_t latest = *manager->latest_step();
  EXPECT_LT(latest, step - 1) << msg;
  EXPECT_NE(msg.find("latest checkpoint is step " + std::to_string(latest)), std::string::npos)
      << msg;
  auto items = manager->restore(latest);
  ASSERT_TRUE(items.ok()) << items.status();
  for (const Array& leaf : items->at("params").leaves()) {
    for (float v : leaf.to_vector<float>()) ASSERT_TRUE(std::isfinite(v));
  }
  manager.reset();

  // Resumed with a sane lr, it trains to the end.
  c.optimizer.lr = 1e-3;
  auto resumed = run_training(c, log);
  ASSERT_TRUE(resumed.ok()) << resumed.status() << log.str();
  EXPECT_EQ(resumed->first_step, latest);
  EXPECT_EQ(resumed->steps_done, 8);
  for (double loss : resumed->step_losses) EXPECT_TRUE(std::isfinite(loss));
}

TEST(RunGuardTest, DivergenceOnTheLastStepExportsNothing) {
  // lr 1e6 for 3 steps once exited 0 with a non-finite export.
  train::TrainConfig c = tiny_config(fresh_test_dir("diverge_last"));
  c.training.steps = 3;
  c.optimizer.lr = 1e6;
  c.lr_scheduler.warmup_steps = 20;
  c.checkpoint.export_hf = "hf";
  std::ostringstream log;
  auto r = run_training(c, log);
  ASSERT_FALSE(r.ok()) << log.str();
  EXPECT_NE(r.status().message().find("training diverged at step 3"), std::string::npos)
      << r.status();
  EXPECT_FALSE(fs::exists(c.job.dump_folder + "/hf"));
}

// checkpoint.export_hf is a folder the export replaces whole: paths it cannot write are
// refused before the first step, and nothing that was there is touched. (Permissions:
// tests/checkpoint:hf_folder_test; tests run as root here, which file modes do not stop.)
TEST(RunGuardTest, ExportPathThatCannotBeWrittenIsRefusedBeforeTraining) {
  train::TrainConfig c = tiny_config(fresh_test_dir("export_path"));
  fs::create_directories(c.job.dump_folder + "/mine");
  std::ofstream(c.job.dump_folder + "/file") << "keep";
  std::ofstream(c.job.dump_folder + "/mine/notes.txt") << "keep";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"file", "exists and is not a folder"},
      {"file/hf", "Not a directory"},
      {"mine", "holds \"notes.txt\", which an export does not write"},
      {"hf/model.safetensors", "names a file, but the export is a folder"},
  };
  for (const auto& [path, why] : cases) {
    c.checkpoint.export_hf = path;
    std::ostringstream log;
    auto r = run_training(c, log);
    ASSERT_FALSE(r.ok()) << path;
    EXPECT_NE(r.status().message().find("checkpoint.export_hf = \"" + path + "\""),
              std::string::npos)
        << r.status();
    EXPECT_NE(r.status().message().find(why), std::string::npos) << r.status();
    EXPECT_FALSE(any_progress_line(log.str())) << log.str();
  }
  std::ifstream file(c.job.dump_folder + "/file"), notes(c.job.dump_folder + "/mine/notes.txt");
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(file), {}), "keep");
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(notes), {}), "keep");
  EXPECT_FALSE(fs::exists(c.job.dump_folder + "/hf"));
}

TEST(RunGuardTest, FewerStepsThanTheCheckpointIsRefused) {
  train::TrainConfig c = tiny_config(fresh_test_dir("fewer_steps"));
  c.training.steps = 6;
  c.checkpoint.enable = true;
  c.checkpoint.interval = 100;  // only the final step
  std::ostringstream log;
  ASSERT_TRUE(run_training(c, log).ok()) << log.str();
  c.training.steps = 3;
  std::ostringstream refused;
  auto r = run_training(c, refused);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition) << r.status();
  EXPECT_NE(r.status().message().find("training.steps = 3 is below step 6"), std::string::npos)
      << r.status();
  EXPECT_FALSE(any_progress_line(refused.str())) << refused.str();
  // The same step count again, or 0 (evaluate only), is fine and says there is nothing to do.
  for (int64_t steps : {6, 0}) {
    c.training.steps = steps;
    std::ostringstream again;
    auto ok = run_training(c, again);
    ASSERT_TRUE(ok.ok()) << ok.status();
    EXPECT_EQ(ok->first_step, 6);
    EXPECT_TRUE(ok->step_losses.empty());
  }
}

// training.device = "cuda" moves params and optimizer state to the first GPU (or over a mesh
// of the first GPUs: tests/examples/llama:gpu_mesh_train_test); without one (a CPU build, or
// no device) the run is refused before any step, with [parallelism] degrees or without.
TEST(RunGuardTest, CudaDeviceWithoutAGpuIsRefused) {
  if (!devices("cuda").empty()) GTEST_SKIP() << "a GPU is present";
  train::TrainConfig c = tiny_config(fresh_test_dir("cuda_device"));
  c.training.device = "cuda";
  std::ostringstream log;
  auto r = run_training(c, log);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition) << r.status();
  EXPECT_NE(r.status().message().find("training.device = \"cuda\": no GPU"), std::string::npos)
      << r.status();
  EXPECT_FALSE(any_progress_line(log.str())) << log.str();
  c.parallelism.data_parallel_shard_degree = 2;
  auto v = run_training(c, log);
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.status().code(), absl::StatusCode::kFailedPrecondition) << v.status();
  EXPECT_NE(v.status().message().find("training.device = \"cuda\": no GPU"), std::string::npos)
      << v.status();
}

TEST(RunGuardTest, LoadStepWithLaterStepsIsRefusedUpFront) {
  train::TrainConfig c = tiny_config(fresh_test_dir("load_step"));
  c.training.steps = 10;
  c.checkpoint.enable = true;
  c.checkpoint.interval = 5;
  c.checkpoint.keep_latest_k = 0;
  std::ostringstream log;
  ASSERT_TRUE(run_training(c, log).ok()) << log.str();
  c.checkpoint.load_step = 5;
  std::ostringstream refused;
  auto r = run_training(c, refused);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition) << r.status();
  EXPECT_NE(r.status().message().find("checkpoint.load_step = 5"), std::string::npos);
  EXPECT_NE(r.status().message().find("later step(s) 10"), std::string::npos) << r.status();
  EXPECT_FALSE(any_progress_line(refused.str())) << refused.str();  // refused, not retrained
  // Evaluating step 5 (training.steps = 5) collides with nothing.
  c.training.steps = 5;
  auto eval = run_training(c, log);
  ASSERT_TRUE(eval.ok()) << eval.status();
  EXPECT_EQ(eval->first_step, 5);
}

// A step folder the checkpoint manager cannot use: a stray one at a step this run would save
// is refused before training (its save would fail at the end); a committed step whose
// metadata is lost is named in the log when the run resumes from an earlier step.
TEST(RunGuardTest, UnusableStepFoldersAreFoundAtStart) {
  const std::string dir = fresh_test_dir("unusable_steps");
  train::TrainConfig c = tiny_config(dir);
  c.checkpoint.enable = true;
  c.checkpoint.interval = 4;
  c.checkpoint.keep_latest_k = 0;
  std::ostringstream log;
  ASSERT_TRUE(run_training(c, log).ok()) << log.str();  // steps 4 and 8
  const std::string ckpt = dir + "/checkpoint";
  fs::create_directories(ckpt + "/12");
  c.training.steps = 16;
  std::ostringstream refused;
  auto r = run_training(c, refused);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition) << r.status();
  EXPECT_NE(r.status().message().find(ckpt + "/12 is not a committed checkpoint"),
            std::string::npos)
      << r.status();
  EXPECT_NE(r.status().message().find("would save step 12"), std::string::npos) << r.status();
  EXPECT_FALSE(any_progress_line(refused.str())) << refused.str();
  // Up to step 11 nothing collides with it: the run trains, naming the folder it skips.
  c.training.steps = 11;
  std::ostringstream past;
  auto ok = run_training(c, past);
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_EQ(ok->first_step, 8);
  EXPECT_NE(past.str().find("checkpoint: skipping step 12"), std::string::npos) << past.str();
  fs::remove_all(ckpt + "/12");
  fs::remove_all(ckpt + "/11");
  // Step 8's metadata lost: resuming falls back to step 4 and says why.
  ASSERT_TRUE(fs::remove(ckpt + "/8/_CHECKPOINT_METADATA"));
  c.training.steps = 6;
  std::ostringstream fallback;
  auto back = run_training(c, fallback);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->first_step, 4);
  EXPECT_NE(fallback.str().find("checkpoint: skipping step 8 (" + ckpt +
                                "/8): committed, but its _CHECKPOINT_METADATA is missing; "
                                "resuming from step 4"),
            std::string::npos)
      << fallback.str();
}

// GRAFT_CPU_DEVICES that is not a device count is the user's setting: InvalidArgument naming
// it, before any step (not an internal error from the first op).
TEST(RunGuardTest, BadCpuDeviceCountIsRefused) {
  train::TrainConfig c = tiny_config(fresh_test_dir("bad_devices"));
  const char* before = std::getenv("GRAFT_CPU_DEVICES");
  const std::string saved = before ? before : "";
  ASSERT_EQ(setenv("GRAFT_CPU_DEVICES", "abc", 1), 0);
  std::ostringstream log;
  auto r = run_training(c, log);
  if (before) {
    setenv("GRAFT_CPU_DEVICES", saved.c_str(), 1);
  } else {
    unsetenv("GRAFT_CPU_DEVICES");
  }
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument) << r.status();
  EXPECT_NE(r.status().message().find("GRAFT_CPU_DEVICES=abc is not a device count"),
            std::string::npos)
      << r.status();
  EXPECT_FALSE(any_progress_line(log.str())) << log.str();
}

TEST(RunGuardTest, StopRequestCheckpointsTheStepItFinishes) {
  train::TrainConfig c = tiny_config(fresh_test_dir("stop_flag"));
  c.checkpoint.enable = true;
  c.checkpoint.interval = 100;
  std::atomic<int> stop{SIGTERM};  // as if the signal came during start-up
  std::ostringstream log;
  auto r = run_training(c, log, {.stop_signal = &stop});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->stop_signal, SIGTERM);
  EXPECT_EQ(r->steps_done, 1);
  EXPECT_EQ(r->step_losses.size(), 1u);
  EXPECT_TRUE(fs::exists(c.job.dump_folder + "/checkpoint/1/_COMMITTED"));
  EXPECT_NE(log.str().find("stopped by SIGTERM after step 1: checkpoint of step 1 committed"),
            std::string::npos)
      << log.str();
  auto resumed = run_training(c, log);
  ASSERT_TRUE(resumed.ok()) << resumed.status();
  EXPECT_EQ(resumed->first_step, 1);
  EXPECT_EQ(resumed->stop_signal, 0);
}

TEST(RunGuardTest, PaddedVocabularySamplesOnlyTokenizerIds) {
  train::TrainConfig c = tiny_config(fresh_test_dir("padded_vocab"));
  c.training.steps = 2;
  c.model.vocab_size = 1000;  // 743 ids the byte tokenizer does not have
  c.sample.max_new_tokens = 32;
  c.sample.top_k = 0;
  c.sample.temperature = 1.0;
  std::ostringstream log;
  auto r = run_training(c, log);
  ASSERT_TRUE(r.ok()) << r.status() << log.str();
  EXPECT_GT(r->sample.size(), c.sample.prompt.size());
}

TEST(RunGuardTest, TopKAboveTheVocabularyIsRefusedBeforeTraining) {
  train::TrainConfig c = tiny_config(fresh_test_dir("top_k"));
  c.sample.max_new_tokens = 8;
  c.sample.top_k = 100000;
  std::ostringstream log;
  auto r = run_training(c, log);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("sample.top_k = 100000"), std::string::npos) << r.status();
  EXPECT_NE(r.status().message().find("257"), std::string::npos) << r.status();
  EXPECT_FALSE(any_progress_line(log.str())) << log.str();
}

TEST(MemoryEstimateTest, CountsWhatNnCounts) {
  train::TrainConfig c;
  for (bool tied : {false, true}) {
    c.model.tied_embeddings = tied;
    c.model.n_routed_experts = 0;
    auto dense = llama_config(c.model, 2048);
    ASSERT_TRUE(dense.ok());
    EXPECT_EQ(estimate_params(c.model, 2048), double(nn::count_params(*dense))) << tied;
    c.model.n_routed_experts = 4;
    c.model.moe_every = 2;
    c.model.n_shared_experts = 1;
    auto moe = moe_llama_config(c.model, 2048);
    ASSERT_TRUE(moe.ok());
    EXPECT_EQ(estimate_params(c.model, 2048), double(nn::count_params(*moe))) << tied;
  }
  c = train::TrainConfig{};
  const double n = estimate_params(c.model, 257);
  EXPECT_EQ(estimate_memory(c, 257).bytes, n * 4 * 4);  // adamw: param, grad, mu, nu
  c.optimizer.name = "lion";
  EXPECT_EQ(estimate_memory(c, 257).bytes, n * 4 * 3);
  c.optimizer.name = "sgd";
  c.optimizer.momentum = 0;
  EXPECT_EQ(estimate_memory(c, 257).bytes, n * 4 * 2);
}

}  // namespace
}  // namespace graft::llama_train
