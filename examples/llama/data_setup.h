// The data side of a run: [training] -> prepared token files, tokenizer, loaders.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <ostream>
#include <string>

#include "absl/status/statusor.h"
#include "data/loader.h"
#include "data/prepare.h"
#include "data/tokenizer.h"
#include "examples/train/train_config.h"

namespace graft::llama_train {

struct RunData {
  data::PrepareResult prepared;
  std::unique_ptr<data::Tokenizer> tokenizer;
  std::optional<data::TokenLoader> train;     // batches of [batch_size, seq_len]
  std::optional<data::SequentialLoader> val;  // the first eval_batches validation batches
};

// Resolves a path of the config against job.dump_folder (absolute paths stay as they are).
std::string under_dump_folder(const train::TrainConfig& config, const std::string& path);

absl::StatusOr<RunData> setup_data(const train::TrainConfig& config, std::ostream& out);

}  // namespace graft::llama_train
