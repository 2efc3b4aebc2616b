// A graceful stop for the training program: the first SIGINT or SIGTERM only records the
// signal (the trainer polls it after every step: it finishes the step, checkpoints it and
// stops); a second one exits at once with 128 + signal, as a shell reports a killed job.
#pragma once

#include <atomic>

namespace graft::llama_train {

// 0, or the first SIGINT / SIGTERM received since install_stop_handlers().
std::atomic<int>& stop_signal();

// Installs the handlers (SA_RESTART, so interrupted reads and writes resume). The handler is
// async-signal-safe: an atomic store, write(2) and _exit(2).
void install_stop_handlers();

}  // namespace graft::llama_train
