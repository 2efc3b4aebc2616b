// Shared by the training-program tests: a fresh output directory, and the tiny run they
// start from (2 layers, 4 heads / 2 kv heads, byte tokenizer on the default corpus, no peak
// FLOP/s measurement); each test sets the widths, batch, lengths and metrics.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "examples/train/train_config.h"

namespace graft::llama_train {

// `name` under TEST_TMPDIR (or /tmp), emptied.
inline std::string fresh_test_dir(const std::string& name) {
  const char* base = std::getenv("TEST_TMPDIR");
  auto dir = std::filesystem::path(base ? base : "/tmp") / name;
  std::filesystem::remove_all(dir);
  return dir.string();
}

inline train::TrainConfig tiny_run_config(const std::string& dir, int64_t dim, int64_t ffn_dim) {
  train::TrainConfig c;
  c.job.dump_folder = dir;
  c.model.dim = dim;
  c.model.n_layers = 2;
  c.model.n_heads = 4;
  c.model.n_kv_heads = 2;
  c.model.ffn_dim = ffn_dim;
  c.training.tokenizer = "byte";
  c.metrics.peak_flops = 1e11;  // skip the peak measurement
  return c;
}

}  // namespace graft::llama_train
