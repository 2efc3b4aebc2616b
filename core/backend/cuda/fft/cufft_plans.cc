#include "core/backend/cuda/fft/cufft_plans.h"

#include <map>
#include <memory>
#include <tuple>
#include <vector>

#include "core/backend/cuda/runtime/check.h"
#include "core/backend/cuda/runtime/stream.h"

namespace graft::cuda {

void check(cufftResult status, std::string_view call) {
  if (status == CUFFT_SUCCESS) return;
  const char* name = "unknown status";
  switch (status) {
    case CUFFT_INVALID_PLAN: name = "INVALID_PLAN"; break;
    case CUFFT_ALLOC_FAILED: name = "ALLOC_FAILED"; break;
    case CUFFT_INVALID_TYPE: name = "INVALID_TYPE"; break;
    case CUFFT_INVALID_VALUE: name = "INVALID_VALUE"; break;
    case CUFFT_INTERNAL_ERROR: name = "INTERNAL_ERROR"; break;
    case CUFFT_EXEC_FAILED: name = "EXEC_FAILED"; break;
    case CUFFT_SETUP_FAILED: name = "SETUP_FAILED"; break;
    case CUFFT_INVALID_SIZE: name = "INVALID_SIZE"; break;
    case CUFFT_UNALIGNED_DATA: name = "UNALIGNED_DATA"; break;
    case CUFFT_NOT_SUPPORTED: name = "NOT_SUPPORTED"; break;
    default: break;
  }
  fail("cuFFT", call, static_cast<long>(status), name);
}

namespace fft {
namespace {

cufftType type_of(const FftPlan& p) {
  switch (p.kind) {
    case FftKind::kR2C:
      return p.double_precision ? CUFFT_D2Z : CUFFT_R2C;
    case FftKind::kC2R:
      return p.double_precision ? CUFFT_Z2D : CUFFT_C2R;
    case FftKind::kC2C:
      break;
  }
  return p.double_precision ? CUFFT_Z2Z : CUFFT_C2C;
}

// Everything cufftMakePlanMany64 is given (the direction of a C2C plan is chosen at exec).
using Key = std::tuple<int, int, std::vector<int64_t>, std::vector<int64_t>, std::vector<int64_t>,
                       int64_t, int64_t, int64_t, int64_t, int64_t>;

Key key_of(int device, const FftPlan& p) {
  return {device,  static_cast<int>(type_of(p)), p.n, p.inembed, p.onembed, p.istride,
          p.idist, p.ostride,                    p.odist, p.batch};
}

struct Cached {
  std::mutex mu;
  cufftHandle handle = 0;
  size_t work_bytes = 0;
};

Cached& plan_for(int device, const FftPlan& p) {
  static std::mutex mu;
  static auto* all = new std::map<Key, std::unique_ptr<Cached>>;  // leaked on purpose
  std::lock_guard<std::mutex> lock(mu);
  std::unique_ptr<Cached>& slot = (*all)[key_of(device, p)];
  if (!slot) {
    auto fresh = std::make_unique<Cached>();
    DeviceGuard guard(device);
    std::vector<long long> n(p.n.begin(), p.n.end()), in(p.inembed.begin(), p.inembed.end()),
        out(p.onembed.begin(), p.onembed.end());
    check(cufftCreate(&fresh->handle), "cufftCreate");
    // The work area comes from graft's allocator per call (stream-ordered), not from cuFFT.
    check(cufftSetAutoAllocation(fresh->handle, 0), "cufftSetAutoAllocation");
    const cufftResult made = cufftMakePlanMany64(
        fresh->handle, static_cast<int>(n.size()), n.data(), in.data(), p.istride, p.idist,
        out.data(), p.ostride, p.odist, type_of(p), p.batch, &fresh->work_bytes);
    if (made != CUFFT_SUCCESS) {
      cufftDestroy(fresh->handle);
      check(made, "cufftMakePlanMany64");
    }
    slot = std::move(fresh);
  }
  return *slot;
}

}  // namespace

PlanLease::PlanLease(int device, const FftPlan& plan) {
  Cached& c = plan_for(device, plan);
  lock_ = std::unique_lock<std::mutex>(c.mu);
  handle_ = c.handle;
  work_bytes_ = c.work_bytes;
}

void PlanLease::bind(cudaStream_t stream, void* work) {
  check(cufftSetStream(handle_, stream), "cufftSetStream");
  if (work_bytes_ > 0) check(cufftSetWorkArea(handle_, work), "cufftSetWorkArea");
}

}  // namespace fft
}  // namespace graft::cuda
