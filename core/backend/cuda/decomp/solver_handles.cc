#include "core/backend/cuda/decomp/solver_handles.h"

#include <map>
#include <memory>
#include <string>

#include "core/backend/cuda/runtime/blaslt_matmul.h"  // check(cublasStatus_t)
#include "core/backend/cuda/runtime/check.h"
#include "core/backend/cuda/runtime/stream.h"

namespace graft::cuda {

void check(cusolverStatus_t status, std::string_view call) {
  if (status == CUSOLVER_STATUS_SUCCESS) return;
  const char* name = "unknown status";
  switch (status) {
    case CUSOLVER_STATUS_NOT_INITIALIZED: name = "NOT_INITIALIZED"; break;
    case CUSOLVER_STATUS_ALLOC_FAILED: name = "ALLOC_FAILED"; break;
    case CUSOLVER_STATUS_INVALID_VALUE: name = "INVALID_VALUE"; break;
    case CUSOLVER_STATUS_ARCH_MISMATCH: name = "ARCH_MISMATCH"; break;
    case CUSOLVER_STATUS_EXECUTION_FAILED: name = "EXECUTION_FAILED"; break;
    case CUSOLVER_STATUS_INTERNAL_ERROR: name = "INTERNAL_ERROR"; break;
    case CUSOLVER_STATUS_NOT_SUPPORTED: name = "NOT_SUPPORTED"; break;
    default: break;
  }
  fail("cuSOLVER", call, static_cast<long>(status), name);
}

namespace decomp {
namespace {

struct Handles {
  std::mutex mu;
  cusolverDnHandle_t solver = nullptr;
  cublasHandle_t blas = nullptr;
};

Handles& handles_of(int device) {
  static std::mutex mu;
  static auto* all = new std::map<int, std::unique_ptr<Handles>>;  // leaked on purpose
  std::lock_guard<std::mutex> lock(mu);
  std::unique_ptr<Handles>& h = (*all)[device];
  if (!h) {
    auto fresh = std::make_unique<Handles>();
    DeviceGuard guard(device);
    check(cusolverDnCreate(&fresh->solver), "cusolverDnCreate");
    check(cublasCreate(&fresh->blas), "cublasCreate");
    h = std::move(fresh);
  }
  return *h;
}

}  // namespace

Lease::Lease(int device, cudaStream_t stream) {
  Handles& h = handles_of(device);
  lock_ = std::unique_lock<std::mutex>(h.mu);
  solver_ = h.solver;
  blas_ = h.blas;
  check(cusolverDnSetStream(solver_, stream), "cusolverDnSetStream");
  check(cublasSetStream(blas_, stream), "cublasSetStream");
}

}  // namespace decomp
}  // namespace graft::cuda
