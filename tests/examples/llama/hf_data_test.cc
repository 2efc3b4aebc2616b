// The training program on a JSON Lines dataset (.jsonl.zst, the fortunes as documents) with a
// Hugging Face tokenizer.json (the Llama-3-style one of tests/data/testdata/hf): the data is
// prepared with the hf tokenizer's 1007 ids, a tiny Llama learns (its validation loss falls
// below the unigram baseline), the sample decodes through the same tokenizer, and a second
// start reuses the prepared files.
#include <zstd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <numeric>
#include <sstream>

#include "data/corpus.h"
#include "examples/llama/trainer.h"
#include "examples/train/train_config.h"
#include "gtest/gtest.h"
#include "tests/examples/llama/tiny_run.h"

namespace graft::llama_train {
namespace {

std::string write_fortunes_jsonl_zst(const std::string& dir) {
  auto fortunes = data::load_fortunes();
  EXPECT_TRUE(fortunes.ok()) << fortunes.status();
  std::string text;
  for (const auto& d : fortunes->docs) text += nlohmann::json{{"text", d}}.dump() + "\n";
  std::string z(ZSTD_compressBound(text.size()), '\0');
  z.resize(ZSTD_compress(z.data(), z.size(), text.data(), text.size(), 3));
  std::filesystem::create_directories(dir);
  const std::string path = dir + "/fortunes.jsonl.zst";
  std::ofstream(path, std::ios::binary) << z;
  return path;
}

TEST(HfDataTest, TrainsOnJsonlWithAnHfTokenizer) {
  const std::string dir = fresh_test_dir("hf_data");
  train::TrainConfig c = tiny_run_config(dir, /*dim=*/64, /*ffn_dim=*/192);
  c.training.dataset = write_fortunes_jsonl_zst(dir + "/dataset");
  c.training.tokenizer = "hf:tests/data/testdata/hf/llama3_style.json";
  c.training.batch_size = 8;
  c.training.seq_len = 64;
  c.training.steps = 150;
  c.optimizer.lr = 3e-3;
  c.lr_scheduler.warmup_steps = 10;
  c.metrics.log_freq = 50;
  c.metrics.eval_freq = 75;
  c.metrics.eval_batches = 4;
  c.sample.prompt = "The ";
  c.sample.max_new_tokens = 8;
  std::ostringstream log;
  auto result = run_training(c, log);
  ASSERT_TRUE(result.ok()) << result.status() << "\n" << log.str();
  EXPECT_EQ(result->steps_done, 150);
  EXPECT_NE(log.str().find("hf:tests/data/testdata/hf/llama3_style.json tokenizer of 1007 ids"),
            std::string::npos)
      << log.str();
  EXPECT_NE(log.str().find("prepare: 15"), std::string::npos) << "progress line\n" << log.str();
  const auto& l = result->step_losses;
  const double first = std::accumulate(l.begin(), l.begin() + 10, 0.0) / 10;
  const double last = std::accumulate(l.end() - 10, l.end(), 0.0) / 10;
  EXPECT_LT(last, first - 1.0) << log.str();
  ASSERT_EQ(result->val_losses.size(), 2u);  // step 75 and the end
  EXPECT_LT(result->val_losses.back().second, result->unigram_nats) << log.str();
  EXPECT_EQ(result->sample.rfind("The ", 0), 0u) << result->sample;

  std::ostringstream again_log;
  c.training.steps = 1;
  c.sample.max_new_tokens = 0;
  auto again = run_training(c, again_log);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_NE(again_log.str().find("(reused)"), std::string::npos) << again_log.str();
}

TEST(HfDataTest, BadTokenizerOrDatasetIsAStatus) {
  const std::string dir = fresh_test_dir("hf_data_bad");
  train::TrainConfig c = tiny_run_config(dir, /*dim=*/32, /*ffn_dim=*/64);
  c.training.steps = 1;
  c.training.tokenizer = "hf:" + dir + "/missing/tokenizer.json";
  std::ostringstream log;
  auto r = run_training(c, log);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("missing/tokenizer.json"), std::string::npos) << r.status();

  c.training.tokenizer = "hf:tests/data/testdata/hf/llama3_style.json";
  c.training.tokenizer_eot = "<|no such token|>";
  r = run_training(c, log);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("<|no such token|>"), std::string::npos) << r.status();

  c.training.tokenizer_eot = "";
  std::filesystem::create_directories(dir + "/bad");
  std::ofstream(dir + "/bad/part.jsonl") << "{\"text\": \"fine\"}\n{\"text\": 7}\n";
  c.training.dataset = dir + "/bad";
  r = run_training(c, log);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("part.jsonl:2"), std::string::npos) << r.status();
}

}  // namespace
}  // namespace graft::llama_train
