// [checkpoint] for a training run: save params, optimizer state, the data loader's position
// and the RNG key every `interval` steps (and at the end), keep the latest keep_latest_k,
// and resume from the latest committed step (or load_step) on start. Because the loader
// position and every piece of state come back exactly, a resumed run continues with the
// same batches and reproduces the uninterrupted run's losses bit for bit.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <ostream>

#include "absl/status/statusor.h"
#include "checkpoint/manager.h"
#include "core/random.h"
#include "data/loader.h"
#include "examples/train/train_config.h"
#include "optim/optim.h"

namespace graft::llama_train {

class RunCheckpoints {
 public:
  // nullptr when [checkpoint] enable is false.
  static absl::StatusOr<std::unique_ptr<RunCheckpoints>> open(const train::TrainConfig& config,
                                                              std::ostream& out);

  // Restores the latest (or load_step) checkpoint into params / state / loader and returns
  // its step; 0 (and nothing changed) when there is none.
  template <class Params>
  absl::StatusOr<int64_t> restore(Params& params, optim::State& state, data::TokenLoader& loader);

  // Saves when the manager's interval says so, or always with force (the last step).
  template <class Params>
  absl::Status save(int64_t step, const Params& params, const optim::State& state,
                    const data::TokenLoader& loader, double loss, bool force);

  absl::Status finish() { return manager_->wait_until_finished(); }

 private:
  RunCheckpoints(const train::TrainConfig& config, std::unique_ptr<checkpoint::CheckpointManager> m,
                 std::ostream& out)
      : config_(config), manager_(std::move(m)), out_(out) {}
  absl::Status restore_loader(const checkpoint::Item& item, data::TokenLoader& loader) const;

  const train::TrainConfig& config_;
  std::unique_ptr<checkpoint::CheckpointManager> manager_;
  std::ostream& out_;
};

template <class Params>
absl::StatusOr<int64_t> RunCheckpoints::restore(Params& params, optim::State& state,
                                                data::TokenLoader& loader) {
  std::optional<int64_t> step = config_.checkpoint.load_step >= 0
                                    ? std::optional<int64_t>(config_.checkpoint.load_step)
                                    : manager_->latest_step();
  if (!step) return 0;
  using checkpoint::Item;
  auto got = manager_->restore(*step, {{"params", Item::tree(params)},
                                       {"opt_state", Item::tree(state)},
                                       {"loader", Item::json({})}});
  if (!got.ok()) return got.status();
  params = got->at("params").template as<Params>();
  state = got->at("opt_state").template as<optim::State>();
  if (auto s = restore_loader(got->at("loader"), loader); !s.ok()) return s;
  out_ << "checkpoint: resumed from step " << *step << " in " << manager_->directory() << "\n";
  return *step;
}

template <class Params>
absl::Status RunCheckpoints::save(int64_t step, const Params& params, const optim::State& state,
                                  const data::TokenLoader& loader, double loss, bool force) {
  if (!force && !manager_->should_save(step)) return absl::OkStatus();
  using checkpoint::Item;
  checkpoint::SaveArgs args;
  args.metrics = {{"loss", loss}};
  args.user_metadata = {{"config", train::to_toml(config_)}};
  args.force = force;
  return manager_->save(step,
                        {{"params", Item::tree(params)},
                         {"opt_state", Item::tree(state)},
                         {"rng", Item::tree(random::key(config_.training.seed))},
                         {"loader", Item::json(nlohmann::json::parse(loader.state().to_json()))}},
                        args);
}

}  // namespace graft::llama_train
