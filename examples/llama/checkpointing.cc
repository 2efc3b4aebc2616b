#include "examples/llama/checkpointing.h"

#include "examples/llama/data_setup.h"

namespace graft::llama_train {

absl::StatusOr<std::unique_ptr<RunCheckpoints>> RunCheckpoints::open(
    const train::TrainConfig& config, std::ostream& out) {
  if (!config.checkpoint.enable) return std::unique_ptr<RunCheckpoints>();
  checkpoint::CheckpointManagerOptions options;
  options.max_to_keep = static_cast<int>(config.checkpoint.keep_latest_k);
  options.save_interval_steps = config.checkpoint.interval;
  options.enable_async = config.checkpoint.async_mode == "async";
  const std::string dir = under_dump_folder(config, config.checkpoint.folder);
  auto manager = checkpoint::CheckpointManager::open(dir, options);
  if (!manager.ok()) return manager.status();
  out << "checkpoint: " << dir << " (every " << options.save_interval_steps << " steps, keep "
      << options.max_to_keep << ", " << config.checkpoint.async_mode << ")\n";
  return std::unique_ptr<RunCheckpoints>(new RunCheckpoints(config, std::move(*manager), out));
}

absl::Status RunCheckpoints::restore_loader(const checkpoint::Item& item,
                                            data::TokenLoader& loader) const {
  if (!item.is_json()) return absl::DataLossError("checkpoint item 'loader' is not JSON");
  auto state = data::LoaderState::from_json(item.json_value().dump());
  if (!state.ok()) return state.status();
  return loader.restore(*state);
}

}  // namespace graft::llama_train
