// [optimizer] and [lr_scheduler] as an optim::GradientTransformation:
//   chain(clip_by_global_norm(max_norm), <adamw | adam | lion | sgd>(schedule))
// Weight decay (adamw, lion) skips the norm scales (leaf paths containing "norm"), as is
// usual for Llama training; everything else, embeddings included, decays.
#pragma once

#include <cstdint>

#include "examples/train/train_config.h"
#include "optim/optim.h"

namespace graft::llama_train {

// Linear warmup from 0 to lr over warmup_steps, then decay_type over the remaining steps
// down to lr * min_lr_ratio ("wsd": constant, then linear decay over the last decay_ratio).
optim::Schedule make_schedule(const train::TrainConfig& config);

optim::GradientTransformation make_optimizer(const train::TrainConfig& config,
                                             const optim::Schedule& schedule);

}  // namespace graft::llama_train
