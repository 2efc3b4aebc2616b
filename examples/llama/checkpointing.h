// [checkpoint] for a training run: save params, optimizer state, the data loader's position
// and the RNG key every `interval` steps (and at the end), keep the latest keep_latest_k,
// and resume from the latest committed step (or load_step) on start. Because the loader
// position and every piece of state come back exactly, a resumed run continues with the
// same batches and reproduces the uninterrupted run's losses bit for bit.
//
// A step's params are only trusted once they have given a finite loss and gradient: an
// interval save of step k is held (its buffers referenced, nothing written) until step k + 1
// has shown that, then written by confirm(); a diverging step k + 1 discards it instead.
// So the latest checkpoint is never the one a run diverged from, and resuming it with a
// lower lr does not fail again. The last step of a run (the end, a time limit, a signal) is
// written at once.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <ostream>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "checkpoint/manager.h"
#include "core/random/random.h"
#include "data/loader.h"
#include "examples/train/train_config.h"
#include "optim/optim.h"

namespace graft::llama_train {

class RunCheckpoints {
 public:
  // nullptr when [checkpoint] enable is false.
  static absl::StatusOr<std::unique_ptr<RunCheckpoints>> open(const train::TrainConfig& config,
                                                              std::ostream& out);

  // The step this run resumes from (the latest, or load_step; 0 when there is none), checked
  // against the plan before anything is allocated: FailedPrecondition when training.steps is
  // below it (and not 0, "evaluate only"), when load_step has later steps beside it that
  // training on would collide with, or when a step folder the manager cannot use (lost
  // metadata, not a committed checkpoint) is one this run would save; such a folder newer than
  // the step resumed from is named in the log.
  absl::StatusOr<int64_t> resume_step() const;

  // Restores checkpoint `step` (from resume_step(), > 0) into params / state / loader.
  template <class Params>
  absl::Status restore(int64_t step, Params& params, optim::State& state,
                       data::TokenLoader& loader);

  // Step `step`'s state: with `last`, written now (after confirm()); otherwise held for
  // confirm() when the interval says to save it.
  template <class Params>
  absl::Status save(int64_t step, const Params& params, const optim::State& state,
                    const data::TokenLoader& loader, double loss, bool last);
  // Writes the held step, if any (the step after it went well).
  absl::Status confirm();
  // Drops the held step (the step after it diverged); returns it.
  std::optional<int64_t> discard();

  std::optional<int64_t> latest_step() const { return manager_->latest_step(); }
  const std::string& directory() const { return manager_->directory(); }
  absl::Status finish() { return manager_->wait_until_finished(); }

 private:
  RunCheckpoints(const train::TrainConfig& config, std::unique_ptr<checkpoint::CheckpointManager> m,
                 std::ostream& out)
      : config_(config), manager_(std::move(m)), out_(out) {}
  absl::Status restore_loader(const checkpoint::Item& item, data::TokenLoader& loader) const;
  checkpoint::SaveArgs save_args(double loss) const;

  struct Held {
    int64_t step;
    checkpoint::Composite items;
    double loss;
  };

  const train::TrainConfig& config_;
  std::unique_ptr<checkpoint::CheckpointManager> manager_;
  std::ostream& out_;
  std::optional<Held> held_;
};

template <class Params>
absl::Status RunCheckpoints::restore(int64_t step, Params& params, optim::State& state,
                                     data::TokenLoader& loader) {
  using checkpoint::Item;
  auto got = manager_->restore(step, {{"params", Item::tree(params)},
                                      {"opt_state", Item::tree(state)},
                                      {"loader", Item::json({})}});
  if (!got.ok()) return got.status();
  params = got->at("params").template as<Params>();
  state = got->at("opt_state").template as<optim::State>();
  if (auto s = restore_loader(got->at("loader"), loader); !s.ok()) return s;
  out_ << "checkpoint: resumed from step " << step << " in " << manager_->directory() << "\n";
  return absl::OkStatus();
}

template <class Params>
absl::Status RunCheckpoints::save(int64_t step, const Params& params, const optim::State& state,
                                  const data::TokenLoader& loader, double loss, bool last) {
  if (auto s = confirm(); !s.ok()) return s;
  if (!last && !manager_->should_save(step)) return absl::OkStatus();
  using checkpoint::Item;
  checkpoint::Composite items = {
      {"params", Item::tree(params)},
      {"opt_state", Item::tree(state)},
      {"rng", Item::tree(random::key(config_.training.seed))},
      {"loader", Item::json(nlohmann::json::parse(loader.state().to_json()))}};
  if (!last) {  // the next step donates these arrays: hold their buffers under new names
    for (const char* name : {"params", "opt_state"}) {
      std::vector<Array> leaves;
      for (const Array& a : items[name].leaves()) {
        leaves.push_back(Array::from_buffer(a.buffer(), a.shape(), a.dtype()));
        // With its placement: a sharded leaf is written as its blocks, each by its process.
        leaves.back().node()->sharding = a.node()->sharding;
      }
      items[name] = Item::from_leaves(items[name].def(), std::move(leaves));
    }
    held_ = Held{step, std::move(items), loss};
    return absl::OkStatus();
  }
  return manager_->save(step, items, save_args(loss));
}

}  // namespace graft::llama_train
