// The matmul peak that MFU is reported against, kept honest.
//
// A peak timed while the machine is busy reads low (133 GFLOP/s where a quiet run gives
// 466), and MFU against it reads high (88%). So the peak is the best of several short runs
// (measure_peak_flops), it is measured again at the end of training and the higher one
// kept, and a throughput above the peak (an MFU over 100%) proves the peak wrong: the peak
// is raised to that throughput, so MFU never reads above 100%, and a note says so once.
#pragma once

#include <functional>
#include <ostream>
#include <string>

#include "core/dtype/dtype.h"
#include "examples/train/progress.h"

namespace graft::train {

class MfuPeak {
 public:
  using Measure = std::function<PeakFlops()>;

  // configured_peak > 0 (metrics.peak_flops): that peak, never measured. Otherwise measure()
  // now and again at finish(). Prints the peak used, labelled `what` ("f32 matmul"), and the
  // MFU formula to out (which must outlive this object).
  MfuPeak(double configured_peak, double flops_per_token, std::string what, std::ostream& out,
          Measure measure);
  // The trainer's: measure_peak_flops(dtype) at the size and duration a training run pays.
  static MfuPeak for_training(double configured_peak, DType dtype, double flops_per_token,
                              std::ostream& out);

  double peak() const { return peak_; }
  // 100 * flops_per_token * tokens_per_second / peak, at most 100: a higher throughput
  // raises the peak to it (noted on out the first time).
  double mfu_percent(double tokens_per_second);
  // At the end of training: re-measures a measured peak and keeps the higher, then prints
  // the peak and the run's MFU against it (run_tokens_per_second <= 0: left out).
  void finish(double run_tokens_per_second);

 private:
  double flops_per_token_;
  std::string what_;
  std::ostream& out_;
  Measure measure_;  // empty for a configured peak
  double peak_ = 0;
  bool raised_noted_ = false;
};

}  // namespace graft::train
