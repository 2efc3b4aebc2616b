// cuFFT plans, made once per (GPU, transform kind, precision, sizes, layouts, batch) and kept
// for the process (never destroyed: kernels may run during static destruction; a plan holds
// no work area, so a cached plan costs little GPU memory). A PlanLease locks its plan for one
// kernel call (a cufftHandle takes one stream and work area at a time) and binds both.
// Built only with --config=cuda.
#pragma once

#include <cufft.h>

#include <cstddef>
#include <mutex>
#include <string_view>

#include "core/backend/cuda/fft/fft_plan.h"

namespace graft::cuda {

// Throws graft::Error "[cuda] <call>: cuFFT error <code>: <name>" unless successful.
void check(cufftResult status, std::string_view call);

namespace fft {

class PlanLease {
 public:
  PlanLease(int device, const FftPlan& plan);
  cufftHandle handle() const { return handle_; }
  size_t work_bytes() const { return work_bytes_; }
  // Binds the call's stream and its work area (work_bytes() of device memory, stream-ordered).
  void bind(cudaStream_t stream, void* work);

 private:
  std::unique_lock<std::mutex> lock_;
  cufftHandle handle_ = 0;
  size_t work_bytes_ = 0;
};

}  // namespace fft
}  // namespace graft::cuda
