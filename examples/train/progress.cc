#include "examples/train/progress.h"

#include <cmath>
#include <cstdio>
#include <string>

#include "core/array.h"
#include "core/buffer.h"
#include "core/error.h"
#include "core/ops.h"
#include "core/random/random.h"

namespace graft::train {
namespace {

template <typename... Args>
std::string printf_string(const char* format, Args... args) {
  char buf[256];
  std::snprintf(buf, sizeof(buf), format, args...);
  return buf;
}

int digits(int64_t v) { return static_cast<int>(std::to_string(v < 0 ? -v : v).size()); }

std::string step_text(int64_t step, int64_t total) {
  return printf_string("%*lld/%lld", digits(total), static_cast<long long>(step),
                       static_cast<long long>(total));
}

}  // namespace

std::string format_duration(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0 || seconds > 1e15) return "-:--:--";
  auto total = static_cast<long long>(std::llround(seconds));
  return printf_string("%lld:%02lld:%02lld", total / 3600, total / 60 % 60, total % 60);
}

std::string format_thousands(double value) {
  if (!std::isfinite(value) || std::fabs(value) > 9e18) return printf_string("%g", value);
  long long v = std::llround(value);
  std::string digits_only = std::to_string(v < 0 ? -v : v);
  std::string out;
  for (size_t i = 0; i < digits_only.size(); ++i) {
    if (i > 0 && (digits_only.size() - i) % 3 == 0) out += ',';
    out += digits_only[i];
  }
  return (v < 0 ? "-" : "") + out;
}

std::string format_progress(const ProgressStats& s) {
  std::string line = "step " + step_text(s.step, s.total_steps);
  line += printf_string(" | loss %.4f | lr %.2e | gnorm %.3f | ", s.loss, s.lr, s.grad_norm);
  line += format_thousands(s.tokens_per_second) + " tok/s";
  if (s.mfu_percent >= 0) line += printf_string(" | mfu %.2f%%", s.mfu_percent);
  if (s.memory_bytes_per_device >= 0) line += " | mem/dev " + bytes_str(s.memory_bytes_per_device);
  if (s.peak_bytes >= 0) line += " | peak " + bytes_str(s.peak_bytes);
  if (s.rss_bytes >= 0) line += " | rss " + bytes_str(s.rss_bytes);
  line += " | elapsed " + format_duration(s.elapsed_seconds);
  line += " | eta " + format_duration(s.eta_seconds);
  return line;
}

std::string format_validation(const ValidationStats& s) {
  // "val " + the same step column as the progress line, so the two align in a log.
  double ppl = std::exp(s.loss);
  std::string ppl_text = ppl < 1e5 ? printf_string("%.2f", ppl) : printf_string("%.3e", ppl);
  return "val  " + step_text(s.step, s.total_steps) + printf_string(" | loss %.4f", s.loss) +
         " | ppl " + ppl_text + " | " + std::to_string(s.batches) + " batches in " +
         format_duration(s.seconds);
}

double mfu(double flops_per_token, double tokens_per_second, double peak_flops) {
  if (peak_flops <= 0) return 0;
  return 100.0 * flops_per_token * tokens_per_second / peak_flops;
}

double transformer_flops_per_token(double n_params, int64_t n_layers, int64_t dim,
                                   int64_t seq_len) {
  return 6.0 * n_params + 12.0 * static_cast<double>(n_layers) * static_cast<double>(dim) *
                              static_cast<double>(seq_len);
}

PeakFlops measure_peak_flops(DType dtype, const PeakFlopsOptions& options) {
  if (dtype != DType::kF32 && dtype != DType::kBF16 && dtype != DType::kF16 &&
      dtype != DType::kF64) {
    fail("measure_peak_flops", "needs a float dtype, got ", dtype_name(dtype));
  }
  if (options.sizes.empty()) fail("measure_peak_flops", "no sizes given");
  if (options.repeats < 1)
    fail("measure_peak_flops", "repeats must be >= 1, got ", options.repeats);
  PeakFlops best;
  best.runs = options.repeats;
  Array key = random::key(0);
  for (int64_t n : options.sizes) {
    if (n <= 0) fail("measure_peak_flops", "sizes must be positive, got ", n);
    Array a = random::normal(random::fold_in(key, 0), {n, n}, dtype);
    Array b = random::normal(random::fold_in(key, 1), {n, n}, dtype);
    eval(a, b);
    eval(matmul(a, b));  // warm-up: kernel selection, first-touch of the output pages
    for (int run = 0; run < options.repeats; ++run) {
      int64_t iterations = 0;
      Stopwatch watch;
      do {
        eval(matmul(a, b));
        ++iterations;
      } while (watch.seconds() < options.seconds_per_size / options.repeats);
      const double rate = 2.0 * n * n * n * iterations / watch.seconds();
      if (rate > best.flops_per_second) best = {rate, n, options.repeats};
    }
  }
  return best;
}

void Stopwatch::reset() { start_ = lap_ = Clock::now(); }

double Stopwatch::seconds() const {
  return std::chrono::duration<double>(Clock::now() - start_).count();
}

double Stopwatch::lap() {
  Clock::time_point now = Clock::now();
  double s = std::chrono::duration<double>(now - lap_).count();
  lap_ = now;
  return s;
}

void Ema::add(double x) {
  value_ = count_ == 0 ? x : alpha_ * x + (1 - alpha_) * value_;
  ++count_;
}

void StepTimer::record(int64_t steps, double seconds) {
  if (steps <= 0) return;
  double per_step = seconds / static_cast<double>(steps);
  if (seen_++ < skip_) {
    first_ = per_step;
    return;
  }
  ema_.add(per_step);
}

double StepTimer::seconds_per_step() const { return ema_.empty() ? first_ : ema_.value(); }

double StepTimer::eta_seconds(int64_t steps_left) const {
  if (seen_ == 0) return -1;
  return seconds_per_step() * static_cast<double>(steps_left < 0 ? 0 : steps_left);
}

}  // namespace graft::train
