#include "examples/llama/data_setup.h"

#include <cmath>
#include <filesystem>

namespace graft::llama_train {

std::string under_dump_folder(const train::TrainConfig& config, const std::string& path) {
  if (!path.empty() && path[0] == '/') return path;
  return (std::filesystem::path(config.job.dump_folder) / path).string();
}

absl::StatusOr<RunData> setup_data(const train::TrainConfig& config, std::ostream& out) {
  const auto& t = config.training;
  data::PrepareOptions options;
  options.input = t.dataset;
  options.out_dir = under_dump_folder(config, t.data_dir.empty() ? "data" : t.data_dir);
  options.tokenizer = t.tokenizer;
  options.vocab_size = static_cast<int32_t>(t.tokenizer_vocab_size);
  options.seed = t.seed;
  options.eot_token = t.tokenizer_eot;
  options.progress = &out;  // a large JSON Lines dataset takes a while
  RunData d;
  auto prepared = data::prepare(options);
  if (!prepared.ok()) return prepared.status();
  d.prepared = *prepared;
  out << "data: " << d.prepared.source << " -> " << options.out_dir << " ("
      << (d.prepared.reused ? "reused" : "prepared") << "): " << d.prepared.train_docs << " / "
      << d.prepared.val_docs << " train / val documents, " << d.prepared.train_tokens << " / "
      << d.prepared.val_tokens << " tokens, " << t.tokenizer << " tokenizer of "
      << d.prepared.vocab_size << " ids; unigram baseline " << d.prepared.unigram_nats
      << " nats/token\n";
  auto tok = data::load_tokenizer(d.prepared.tokenizer_path);
  if (!tok.ok()) return tok.status();
  d.tokenizer = std::move(*tok);
  auto train = data::TokenLoader::open(d.prepared.train_path, t.batch_size, t.seq_len, t.seed);
  if (!train.ok()) return train.status();
  d.train.emplace(std::move(*train));
  if (config.metrics.eval_freq > 0 || config.training.steps == 0) {
    auto val = data::SequentialLoader::open(d.prepared.val_path, t.batch_size, t.seq_len,
                                            config.metrics.eval_batches);
    if (!val.ok()) return val.status();
    d.val.emplace(std::move(*val));
  }
  return d;
}

}  // namespace graft::llama_train
