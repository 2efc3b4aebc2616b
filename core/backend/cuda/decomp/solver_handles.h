// cuSOLVER (dense) and cuBLAS handles for the factorizations: one of each per device, created
// on first use with the device current and never destroyed (kernels may run during static
// destruction). A Lease holds the device's lock for one kernel call and binds both handles to
// the call's stream, so concurrent calls on one device take turns. Built only with --config=cuda.
#pragma once

#include <cublas_v2.h>
#include <cusolverDn.h>

#include <mutex>
#include <string_view>

namespace graft::cuda {

// Throws graft::Error "[cuda] <call>: cuSOLVER error <code>: <name>" unless successful.
void check(cusolverStatus_t status, std::string_view call);

namespace decomp {

class Lease {
 public:
  Lease(int device, cudaStream_t stream);
  cusolverDnHandle_t solver() const { return solver_; }
  cublasHandle_t blas() const { return blas_; }

 private:
  std::unique_lock<std::mutex> lock_;
  cusolverDnHandle_t solver_ = nullptr;
  cublasHandle_t blas_ = nullptr;
};

}  // namespace decomp
}  // namespace graft::cuda
