// What a training program prints while it runs: the progress line every log_freq steps, the
// validation line, model FLOPs utilisation against a peak measured in the same run, and a
// step-time average for the ETA.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "core/dtype/dtype.h"

namespace graft::train {

struct ProgressStats {
  int64_t step = 0;
  int64_t total_steps = 0;
  double loss = 0;
  double lr = 0;
  double grad_norm = 0;
  double tokens_per_second = 0;
  double mfu_percent = -1;  // < 0: not known, left out of the line
  // What one device holds at the step's planned peak (its blocks of params, optimizer state
  // and batch, plus the step's own buffers); < 0: not known, left out of the line.
  double memory_bytes_per_device = -1;
  // Measured: the allocator's high-water mark over the interval (graft's buffers of the
  // process, all its devices), and the process's peak resident set; < 0: left out.
  double peak_bytes = -1;
  double rss_bytes = -1;
  double elapsed_seconds = 0;
  double eta_seconds = -1;  // < 0: not known yet, printed as -:--:--
};

// "step  10/100 | loss 5.4321 | lr 3.00e-04 | gnorm 1.234 | 12,345 tok/s | mfu 12.34% |
//  mem/dev 123.4 MiB | peak 140.2 MiB | rss 310.5 MiB | elapsed 0:01:23 | eta 1:02:03" (one
// line). The step is padded to the width of the total.
std::string format_progress(const ProgressStats& stats);

struct ValidationStats {
  int64_t step = 0;
  int64_t total_steps = 0;
  double loss = 0;  // mean cross-entropy per token, nats
  int64_t batches = 0;
  double seconds = 0;
};

// "val   10/100 | loss 5.4321 | ppl 228.10 | 8 batches in 0:00:02".
std::string format_validation(const ValidationStats& stats);

// h:mm:ss, rounded to the nearest second (hours keep growing past 24); "-:--:--" for
// negative or non-finite input.
std::string format_duration(double seconds);

// 1234567 -> "1,234,567" (rounded to an integer).
std::string format_thousands(double value);

// Model FLOPs utilisation in percent (torchtitan's definition):
// 100 * flops_per_token * tokens_per_second / peak_flops; 0 when peak_flops <= 0.
double mfu(double flops_per_token, double tokens_per_second, double peak_flops);

// Training FLOPs per token of a decoder-only transformer (torchtitan / PaLM appendix B):
// 6 * params (forward + backward matmuls, active params for MoE; leave out the embedding
// table) + 12 * n_layers * dim * seq_len (attention scores and values).
double transformer_flops_per_token(double n_params, int64_t n_layers, int64_t dim, int64_t seq_len);

struct PeakFlopsOptions {
  std::vector<int64_t> sizes = {1024, 1536, 2048};  // square matmuls n x n @ n x n
  double seconds_per_size = 0.5;
  int repeats = 4;  // seconds_per_size is split into this many timed runs; the best counts
};

struct PeakFlops {
  double flops_per_second = 0;  // best over the sizes and runs
  int64_t n = 0;                // the size that reached it
  int runs = 0;                 // timed runs per size
};

// Times graft::matmul (after one warm-up per size) for each size, in `repeats` runs of
// seconds_per_size / repeats each; the best run's rate is the peak that MFU is reported
// against (a busy machine slows some runs, rarely all). dtype must be a float type and
// repeats >= 1 (graft::Error "[measure_peak_flops]" otherwise). See mfu_peak.h.
PeakFlops measure_peak_flops(DType dtype, const PeakFlopsOptions& options = {});

class Stopwatch {
 public:
  Stopwatch() { reset(); }
  void reset();
  double seconds() const;  // since construction / reset()
  double lap();            // since the previous lap() (or reset), and starts the next lap

 private:
  using Clock = std::chrono::steady_clock;
  Clock::time_point start_, lap_;
};

// Exponential moving average; the first sample sets the value.
class Ema {
 public:
  explicit Ema(double alpha = 0.1) : alpha_(alpha) {}
  void add(double x);
  double value() const { return value_; }
  bool empty() const { return count_ == 0; }
  int64_t count() const { return count_; }

 private:
  double alpha_;
  double value_ = 0;
  int64_t count_ = 0;
};

// Seconds per step for the ETA. Intervals are recorded as (steps, seconds); the first
// `skip_intervals` are used only until a later one arrives, because they include jit
// compilation and warm-up.
class StepTimer {
 public:
  explicit StepTimer(double alpha = 0.1, int skip_intervals = 1)
      : ema_(alpha), skip_(skip_intervals) {}
  void record(int64_t steps, double seconds);
  double seconds_per_step() const;               // 0 before any record
  double eta_seconds(int64_t steps_left) const;  // -1 before any record

 private:
  Ema ema_;
  int skip_;
  int seen_ = 0;
  double first_ = 0;  // per-step time of the latest skipped interval
};

}  // namespace graft::train
