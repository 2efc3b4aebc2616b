#include "examples/train/mfu_peak.h"

#include <cstdio>

namespace graft::train {
namespace {

std::string gflops(double flops_per_second) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.1f GFLOP/s", flops_per_second / 1e9);
  return buf;
}

std::string percent(double p) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f%%", p);
  return buf;
}

}  // namespace

MfuPeak::MfuPeak(double configured_peak, double flops_per_token, std::string what,
                 std::ostream& out, Measure measure)
    : flops_per_token_(flops_per_token), what_(std::move(what)), out_(out) {
  if (configured_peak > 0) {
    peak_ = configured_peak;
    out_ << "peak for MFU: " << gflops(peak_) << " (metrics.peak_flops)";
  } else {
    measure_ = std::move(measure);
    const PeakFlops p = measure_();
    peak_ = p.flops_per_second;
    out_ << "peak " << what_ << " measured now: " << gflops(peak_) << " (n=" << p.n << ", best of "
         << p.runs << " runs; measured again at the end, the higher kept)";
  }
  out_ << "; MFU = " << flops_per_token_
       << " FLOPs/token (6N + 12 L H d_head T) x tokens/s / peak\n";
}

MfuPeak MfuPeak::for_training(double configured_peak, DType dtype, double flops_per_token,
                              std::ostream& out) {
  return MfuPeak(
      configured_peak, flops_per_token, std::string(dtype_name(dtype)) + " matmul", out, [dtype] {
        return measure_peak_flops(dtype, {.sizes = {1024}, .seconds_per_size = 0.4, .repeats = 4});
      });
}

double MfuPeak::mfu_percent(double tokens_per_second) {
  const double achieved = flops_per_token_ * tokens_per_second;
  if (achieved > peak_) {
    if (!raised_noted_) {
      out_ << "mfu: the run reached " << gflops(achieved) << ", above the peak of " << gflops(peak_)
           << " (measured on a busy machine?); the peak is raised to it, so "
           << "MFU reads at most 100%\n";
      raised_noted_ = true;
    }
    peak_ = achieved;
  }
  return mfu(flops_per_token_, tokens_per_second, peak_);
}

void MfuPeak::finish(double run_tokens_per_second) {
  if (measure_) {
    const double before = peak_;
    const double again = measure_().flops_per_second;
    if (again > peak_) peak_ = again;
    out_ << "peak " << what_ << " measured again at the end: " << gflops(again) << " (in use "
         << gflops(before) << "); kept " << gflops(peak_);
  } else {
    out_ << "peak for MFU: " << gflops(peak_);
  }
  if (run_tokens_per_second > 0) {
    out_ << "; mfu over the run " << percent(mfu_percent(run_tokens_per_second));
  }
  out_ << "\n";
}

}  // namespace graft::train
