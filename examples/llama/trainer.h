// The training run that examples/llama performs, as a library so tests can run it small.
//
// run_training: prepares the data ([training].dataset -> tokenizer + token files, reused when
// already there), builds the model ([model]: dense, or MoE when n_routed_experts > 0) and the
// optimizer, jits the whole train step (forward, backward, clipping, optimizer update;
// params and optimizer state donated), then loops: a progress line every log_freq steps,
// validation every eval_freq steps and at the end (against the unigram baseline),
// TensorBoard scalars, and finally a text sample from the trained model.
//
// Before the first step it validates everything that needs the tokenizer (model.vocab_size,
// sample.top_k), prints the parameter count and the estimated memory, and checks the
// checkpoint plan (memory_estimate.h, checkpointing.h), the Hugging Face folders
// (hf_config.h: checkpoint.initial_load_hf's config.json against [model], or [model] taken
// from it with model.from_hf_config; checkpoint.export_hf writable). A non-finite loss,
// grad norm or updated param norm stops the run before anything of that step is saved (an
// error naming the step); the latest checkpoint stays the last good one.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "examples/train/train_config.h"

namespace graft::llama_train {

struct TrainResult {
  std::vector<double> step_losses;                     // every step's training loss, in order
  std::vector<std::pair<int64_t, double>> val_losses;  // (step, mean val loss)
  double unigram_nats = 0;                             // the baseline on the same val tokens
  int64_t first_step = 0;                              // 0, or the step a checkpoint resumed at
  int64_t steps_done = 0;                              // the step reached (time limits stop early)
  double tokens_per_second = 0;                        // over the whole run, compile excluded
  std::string sample;                                  // generated text (prompt included)
  std::string tensorboard_file;                        // "" when disabled
  int stop_signal = 0;  // the signal that stopped the run after steps_done (0: none)
  // Bytes one device holds at the train step's planned peak (placement.h,
  // step_bytes_per_device); -1 when not known (no step run).
  double memory_per_device = -1;
  int64_t train_step_compiles = 0;  // jit cache misses of the train step (1: no recompile)
  // The trained params' layouts: per leaf path, its PartitionSpec text ("" on one device).
  std::map<std::string, std::string> param_layouts;
};

struct RunOptions {
  // Tests: stop right after this step (and its checkpoint) as if the process had died there;
  // no final validation or sample. -1: run to the end.
  int64_t stop_after_step = -1;
  // Polled after every step (stop_signal.h): non-zero = checkpoint this step and stop, with
  // TrainResult::stop_signal set; nothing more is trained, exported, validated or sampled.
  const std::atomic<int>* stop_signal = nullptr;
};

// Everything it prints goes to `out`. Bad configs, missing corpora, I/O errors, divergence
// and failed allocations (std::bad_alloc: ResourceExhausted with the estimate) come back as a
// Status; nothing aborts.
absl::StatusOr<TrainResult> run_training(const train::TrainConfig& config, std::ostream& out,
                                         const RunOptions& options = {});

}  // namespace graft::llama_train
