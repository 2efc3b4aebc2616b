#include "examples/llama/checkpointing.h"

#include <filesystem>
#include <string>
#include <vector>

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
  // A run that only evaluates saves nothing (training.steps 0, or not above checkpoint.
  // load_step): it may read a read-only copy. Any other run must be able to save, which
  // open() checks before training.
  const int64_t steps = config.training.steps, load_step = config.checkpoint.load_step;
  std::error_code ec;
  options.read_only = (steps == 0 || (load_step >= 0 && steps <= load_step)) &&
                      std::filesystem::is_directory(dir, ec);
  auto manager = checkpoint::CheckpointManager::open(dir, options);
  if (!manager.ok()) return manager.status();
  out << "checkpoint: " << dir << " (every " << options.save_interval_steps << " steps, keep "
      << options.max_to_keep << ", " << config.checkpoint.async_mode << ")\n";
  return std::unique_ptr<RunCheckpoints>(new RunCheckpoints(config, std::move(*manager), out));
}

absl::StatusOr<int64_t> RunCheckpoints::resume_step() const {
  const int64_t load_step = config_.checkpoint.load_step;
  const int64_t steps = config_.training.steps;
  const std::string& dir = manager_->directory();
  std::optional<int64_t> step = manager_->latest_step();
  if (load_step >= 0) {
    // Training on from an older step would save steps that exist already (the final save
    // fails with AlreadyExists after all the work) and mix two runs in one folder.
    std::vector<int64_t> later;
    for (int64_t s : manager_->all_steps()) {
      if (s > load_step) later.push_back(s);
    }
    if (!later.empty() && steps > load_step) {
      std::string list;
      for (int64_t s : later) list += (list.empty() ? "" : ", ") + std::to_string(s);
      return absl::FailedPreconditionError(
          "checkpoint.load_step = " + std::to_string(load_step) + ": " + dir +
          " also holds later step(s) " + list + ", which training to step " +
          std::to_string(steps) +
          " would collide with; move or delete them, or resume into another "
          "checkpoint.folder (copy step " +
          std::to_string(load_step) +
          " there), or set training.steps = " + std::to_string(load_step) + " to evaluate only");
    }
    step = load_step;
  }
  // Step folders the manager cannot use: loud when one is newer than the step resumed from,
  // refused up front when this run would save that step (its save would fail after training).
  const int64_t from = step.value_or(0);
  for (const checkpoint::CheckpointManager::SkippedStep& k : manager_->skipped_on_open()) {
    if (k.step <= from) continue;
    const bool saves = steps > from && k.step <= steps &&
                       (k.step == steps || k.step % config_.checkpoint.interval == 0);
    if (saves) {
      return absl::FailedPreconditionError(
          k.path + " is " + k.why + ", and this run would save step " + std::to_string(k.step) +
          " there (training.steps = " + std::to_string(steps) + ", checkpoint.interval = " +
          std::to_string(config_.checkpoint.interval) + "): move or delete it first");
    }
    out_ << "checkpoint: skipping step " << k.step << " (" << k.path << "): " << k.why << "; "
         << (step ? "resuming from step " + std::to_string(*step) : "starting from step 0")
         << "\n";
  }
  if (!step) return 0;
  if (steps > 0 && steps < *step) {
    return absl::FailedPreconditionError(
        "training.steps = " + std::to_string(steps) + " is below step " + std::to_string(*step) +
        " that this run resumes from (" + dir +
        "): nothing to train. Raise training.steps to train on, set it to 0 to only evaluate "
        "and sample, or pick another checkpoint.folder / checkpoint.load_step");
  }
  return *step;
}

checkpoint::SaveArgs RunCheckpoints::save_args(double loss) const {
  checkpoint::SaveArgs args;
  args.metrics = {{"loss", loss}};
  args.user_metadata = {{"config", train::to_toml(config_)}};
  args.force = true;  // the interval was checked when the step was taken
  return args;
}

absl::Status RunCheckpoints::confirm() {
  if (!held_) return absl::OkStatus();
  Held h = std::move(*held_);
  held_.reset();
  return manager_->save(h.step, h.items, save_args(h.loss));
}

std::optional<int64_t> RunCheckpoints::discard() {
  std::optional<int64_t> step;
  if (held_) step = held_->step;
  held_.reset();
  return step;
}

absl::Status RunCheckpoints::restore_loader(const checkpoint::Item& item,
                                            data::TokenLoader& loader) const {
  if (!item.is_json()) return absl::DataLossError("checkpoint item 'loader' is not JSON");
  auto state = data::LoaderState::from_json(item.json_value().dump());
  if (!state.ok()) return state.status();
  return loader.restore(*state);
}

}  // namespace graft::llama_train
