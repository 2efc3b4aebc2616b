// What a run's model will cost before anything is allocated: its parameter count and the
// bytes of params, gradients and optimizer state (f32 each; activations not included),
// computed in double so that an absurd config (model.dim = 1e9) gives an absurd number
// instead of an int64 overflow.
#pragma once

#include <cstdint>
#include <string>

#include "examples/train/train_config.h"

namespace graft::llama_train {

struct MemoryEstimate {
  double params = 0;         // parameter count
  int state_slots = 0;       // optimizer state arrays per parameter (adam: 2, lion: 1, ...)
  double bytes = 0;          // params + grads + optimizer state
  double machine_bytes = 0;  // this machine's memory, RAM + swap (0: unknown)
  // More than the machine has: no run can fit, so the trainer refuses before allocating
  // (touching gigabytes first and failing on a later tensor, or being OOM-killed).
  bool too_big() const { return machine_bytes > 0 && bytes > machine_bytes; }
};

// `vocab` is the model's vocabulary (model.vocab_size, or the tokenizer's when that is 0).
double estimate_params(const train::ModelConfig& model, int64_t vocab);
MemoryEstimate estimate_memory(const train::TrainConfig& config, int64_t vocab);

// "35040 parameters; params + grads + 2 adamw moments = 560640 bytes (547.5 KiB, ...)".
std::string describe(const MemoryEstimate& e, const train::TrainConfig& config);

}  // namespace graft::llama_train
