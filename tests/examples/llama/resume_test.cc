// Checkpointing in the training program: a run that is interrupted and resumed from its
// latest checkpoint reproduces the uninterrupted run's losses bit for bit (params, optimizer
// state, data-loader position and RNG are all saved); and the final params export to, and
// import from, a Hugging Face Llama folder (its config.json checked against [model], or taken
// as [model] with model.from_hf_config).
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include "checkpoint/safetensors.h"
#include "examples/llama/trainer.h"
#include "examples/train/train_config.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/examples/llama/tiny_run.h"

namespace graft::llama_train {
namespace {

train::TrainConfig tiny_config(const std::string& dir) {
  train::TrainConfig c = tiny_run_config(dir, /*dim=*/32, /*ffn_dim=*/64);
  c.training.data_dir = fresh_test_dir("shared_data");  // prepared once, reused by every run
  c.training.batch_size = 4;
  c.training.seq_len = 32;
  c.training.steps = 12;
  c.lr_scheduler.warmup_steps = 3;
  c.metrics.log_freq = 4;
  c.metrics.eval_freq = 0;
  c.metrics.enable_tensorboard = false;
  c.sample.max_new_tokens = 0;
  return c;
}

// The losses as bits: "bit for bit" means the f32 values the step returned are identical.
uint32_t bits(double loss) {
  const float f = static_cast<float>(loss);
  uint32_t b;
  std::memcpy(&b, &f, 4);
  return b;
}

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in.good()) << path;
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

void expect_resume_is_exact(const std::string& async_mode) {
  std::ostringstream log;
  train::TrainConfig base = tiny_config(fresh_test_dir("uninterrupted_" + async_mode));
  base.checkpoint.enable = true;  // only the final step (12) is saved: interval 100
  base.checkpoint.interval = 100;
  auto full = run_training(base, log);
  ASSERT_TRUE(full.ok()) << full.status() << log.str();
  ASSERT_EQ(full->step_losses.size(), 12u);

  train::TrainConfig c = tiny_config(fresh_test_dir("interrupted_" + async_mode));
  c.training.data_dir = base.training.data_dir;
  c.checkpoint.enable = true;
  c.checkpoint.interval = 4;
  c.checkpoint.keep_latest_k = 2;
  c.checkpoint.async_mode = async_mode;
  auto first = run_training(c, log, {.stop_after_step = 6});  // "dies" after step 6
  ASSERT_TRUE(first.ok()) << first.status() << log.str();
  ASSERT_EQ(first->step_losses.size(), 6u);
  auto second = run_training(c, log);  // a new process would do the same: resume at 6
  ASSERT_TRUE(second.ok()) << second.status() << log.str();
  EXPECT_EQ(second->first_step, 6);
  ASSERT_EQ(second->step_losses.size(), 6u);
  for (int i = 0; i < 6; ++i) {
    EXPECT_EQ(bits(first->step_losses[i]), bits(full->step_losses[i])) << "step " << i + 1;
    EXPECT_EQ(bits(second->step_losses[i]), bits(full->step_losses[6 + i])) << "step " << i + 7;
  }
  // keep_latest_k = 2 of the saves at 4, 6 (the interrupted run's last), 8 and 12 (final).
  const auto ckpt_dir = std::filesystem::path(c.job.dump_folder) / "checkpoint";
  EXPECT_TRUE(std::filesystem::exists(ckpt_dir / "12" / "_COMMITTED"));
  EXPECT_TRUE(std::filesystem::exists(ckpt_dir / "8" / "_COMMITTED"));
  EXPECT_FALSE(std::filesystem::exists(ckpt_dir / "4"));
  // The resumed run ends with exactly the uninterrupted run's params and optimizer state.
  const auto full_dir = std::filesystem::path(base.job.dump_folder) / "checkpoint" / "12";
  for (const char* item : {"params.safetensors", "opt_state.safetensors"}) {
    EXPECT_EQ(read_file(ckpt_dir / "12" / item), read_file(full_dir / item)) << item;
  }
}

// The baseline for the resume tests: two identical runs in one process (fresh jit caches,
// the buffer cache warm from the first) report the same losses.
TEST(ResumeTest, TwoIdenticalRunsAgreeBitForBit) {
  std::ostringstream log;
  train::TrainConfig c = tiny_config(fresh_test_dir("same_a"));
  auto a = run_training(c, log);
  c.job.dump_folder = fresh_test_dir("same_b");
  auto b = run_training(c, log);
  ASSERT_TRUE(a.ok() && b.ok()) << log.str();
  for (int i = 0; i < 12; ++i) {
    EXPECT_EQ(bits(a->step_losses[i]), bits(b->step_losses[i]))
        << "step " << i + 1 << std::hexfloat << " " << a->step_losses[i] << " "
        << b->step_losses[i];
  }
}

TEST(ResumeTest, ResumedRunEndsWithTheUninterruptedParamsBitForBit) {
  expect_resume_is_exact("disabled");
}

TEST(ResumeTest, SameWithAsyncCheckpoints) { expect_resume_is_exact("async"); }

TEST(ResumeTest, HuggingFaceExportThenImportGivesTheSameModel) {
  std::ostringstream log;
  train::TrainConfig a = tiny_config(fresh_test_dir("hf_export"));
  a.training.steps = 3;
  a.metrics.eval_freq = 1000;  // only the final validation
  a.model.rope_theta = 5000;
  a.checkpoint.export_hf = "hf";
  auto trained = run_training(a, log);
  ASSERT_TRUE(trained.ok()) << trained.status() << log.str();

  // A folder transformers' from_pretrained loads (tests/examples/llama:hf_export_test checks
  // that against transformers itself): config.json from [model], the weights in one file.
  const std::string dir = a.job.dump_folder + "/hf";
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    files.push_back(e.path().filename().string());
  }
  std::sort(files.begin(), files.end());
  EXPECT_EQ(files, (std::vector<std::string>{"config.json", "generation_config.json",
                                             "model.safetensors"}));
  const auto config = nlohmann::json::parse(read_file(dir + "/config.json"));
  EXPECT_EQ(config["vocab_size"], 257);  // the byte tokenizer's (model.vocab_size = 0)
  EXPECT_EQ(config["hidden_size"], 32);
  EXPECT_EQ(config["num_key_value_heads"], 2);
  EXPECT_EQ(config["rope_theta"], 5000.0);
  EXPECT_EQ(config["max_position_embeddings"], 32);  // training.seq_len
  EXPECT_EQ(config["eos_token_id"], 256);            // the tokenizer's eot
  const std::string weights = read_file(dir + "/model.safetensors");
  auto header = checkpoint::parse_safetensors_bytes(weights);
  ASSERT_TRUE(header.ok()) << header.status();
  std::map<std::string, Shape> shapes;
  for (const auto& t : header->tensors) shapes[t.name] = t.shape;
  EXPECT_EQ(shapes.size(), 3u + 2 * 9u);  // embed, norm, lm_head + 9 tensors per layer
  EXPECT_EQ(shapes["model.embed_tokens.weight"], (Shape{257, 32}));
  EXPECT_EQ(shapes["lm_head.weight"], (Shape{257, 32}));  // [out, in] like torch
  EXPECT_EQ(shapes["model.layers.1.self_attn.k_proj.weight"], (Shape{16, 32}));
  EXPECT_EQ(shapes["model.layers.0.mlp.down_proj.weight"], (Shape{32, 64}));

  train::TrainConfig b = tiny_config(fresh_test_dir("hf_import"));
  b.training.data_dir = a.training.data_dir;
  b.training.steps = 0;  // evaluate only
  b.metrics.eval_freq = 1000;
  b.model.rope_theta = 5000;
  b.checkpoint.initial_load_hf = dir;
  auto loaded = run_training(b, log);
  ASSERT_TRUE(loaded.ok()) << loaded.status() << log.str();
  ASSERT_FALSE(loaded->val_losses.empty());
  EXPECT_EQ(loaded->val_losses.back().second, trained->val_losses.back().second);

  // The same tensor shapes with another rope_theta would be another model: refused before
  // anything runs, naming the key and both values.
  b.model.rope_theta = 10000;
  std::ostringstream refused;
  auto other = run_training(b, refused);
  ASSERT_FALSE(other.ok());
  EXPECT_NE(other.status().message().find("rope_theta = 5000, model.rope_theta = 10000"),
            std::string::npos)
      << other.status();
  EXPECT_EQ(refused.str().find("model: "), std::string::npos) << refused.str();  // not built

  // model.from_hf_config takes [model] from the folder, whatever [model] said.
  b.model.from_hf_config = true;
  b.model.dim = 48;
  b.model.n_heads = 2;
  auto from_config = run_training(b, log);
  ASSERT_TRUE(from_config.ok()) << from_config.status() << log.str();
  EXPECT_EQ(from_config->val_losses.back().second, trained->val_losses.back().second);

  // A tensor the Llama does not use (old checkpoints carry rotary_emb.inv_freq buffers) is an
  // error that names the config key ignoring it; with the key the folder loads.
  const std::string extra = fresh_test_dir("hf_extra");
  std::filesystem::copy(dir, extra);
  {
    std::vector<std::string> bytes;
    bytes.reserve(header->tensors.size());
    std::vector<checkpoint::TensorView> views;
    for (const auto& t : header->tensors) {
      bytes.push_back(weights.substr(header->data_start + t.begin, t.end - t.begin));
      views.push_back({t.name, t.dtype, t.shape, bytes.back().data()});
    }
    const float inv_freq[2] = {1.0f, 0.5f};
    views.push_back({"model.layers.0.self_attn.rotary_emb.inv_freq", DType::kF32, {2}, inv_freq});
    ASSERT_TRUE(checkpoint::write_safetensors(extra + "/model.safetensors", views).ok());
  }
  b.model.from_hf_config = false;
  b.model.dim = 32;
  b.model.n_heads = 4;
  b.model.rope_theta = 5000;
  b.checkpoint.initial_load_hf = extra;
  auto unused = run_training(b, log);
  ASSERT_FALSE(unused.ok());
  EXPECT_NE(unused.status().message().find(
                "(model.layers.0.self_attn.rotary_emb.inv_freq); set "
                "checkpoint.initial_load_hf_allow_unused = true to ignore them"),
            std::string::npos)
      << unused.status();
  b.checkpoint.initial_load_hf_allow_unused = true;
  auto ignored = run_training(b, log);
  ASSERT_TRUE(ignored.ok()) << ignored.status();
  EXPECT_EQ(ignored->val_losses.back().second, trained->val_losses.back().second);

  // Exporting into the same folder again replaces the earlier export (1 step: other params).
  a.training.steps = 1;
  auto again = run_training(a, log);
  ASSERT_TRUE(again.ok()) << again.status() << log.str();
  const std::string replaced = read_file(dir + "/model.safetensors");
  EXPECT_EQ(replaced.size(), weights.size());
  EXPECT_NE(replaced, weights);
}

}  // namespace
}  // namespace graft::llama_train
