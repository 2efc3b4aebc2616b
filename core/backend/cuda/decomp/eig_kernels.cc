// The CUDA kernel of eig (core/primitives/eig.h) through cuSOLVER's cusolverDnXgeev, one call
// per matrix of the leading batch (cuSOLVER has no batched geev), with the CPU kernel's
// conventions (core/backend/cpu/eig_kernel.cc, LAPACK's geev): eigenvalues in geev's order,
// right eigenvectors in the columns of a row-major v, each of unit 2-norm with its largest
// component real (geev's normalization, which Xgeev documents as its own), NaNs where geev
// reports a failure (info != 0, read on the device). graft's eig asks for right eigenvectors
// only, so Xgeev's jobvl is always NOVECTOR.
//
// cuSOLVER is column-major: a row-major matrix read column-major is its transpose, whose
// right eigenvectors are the matrix's left ones, so each input is transposed first (the shape
// family's copy engine). A real input takes Xgeev's real interface (W = [wr, wi], real VR with
// LAPACK's packing of conjugate pairs), unpacked to complex as the CPU does (eig_device.h).
//
// Xgeev wants host workspace besides device workspace; the host blocks must outlive the calls
// that use them, so when they are not empty the kernel waits for its stream before freeing
// them (the one CUDA kernel of graft that synchronizes).
#include <cuda_runtime_api.h>
#include <cusolverDn.h>
#include <library_types.h>

#include <algorithm>
#include <vector>

#include "core/backend/cuda/decomp/eig_device.h"
#include "core/backend/cuda/decomp/solver_handles.h"
#include "core/backend/cuda/kernel.h"
#include "core/backend/cuda/kernels/shape_launch.h"
#include "core/backend/cuda/runtime/check.h"
#include "core/primitives/eig.h"

namespace graft::cuda {
namespace {

// cusolverDnParams_t for one kernel call (default settings).
class SolverParams {
 public:
  SolverParams() { check(cusolverDnCreateParams(&p_), "cusolverDnCreateParams"); }
  ~SolverParams() { cusolverDnDestroyParams(p_); }
  SolverParams(const SolverParams&) = delete;
  SolverParams& operator=(const SolverParams&) = delete;
  cusolverDnParams_t get() const { return p_; }

 private:
  cusolverDnParams_t p_ = nullptr;
};

// R: the real type of the precision; kComplex: a c64 / c128 input (else f32 / f64).
template <typename R, bool kComplex>
void eig(Call& call) {
  const bool right = call.params<Eig>().compute_right();
  const Shape& s = call.in_aval(0).shape;
  const int64_t n = s.back(), nn = n * n, batch = n == 0 ? 0 : numel(s) / nn;
  if (batch == 0) return;
  constexpr int64_t kParts = kComplex ? 2 : 1;  // reals per input element
  constexpr bool kDouble = sizeof(R) == 8;
  const cudaDataType type = kComplex ? (kDouble ? CUDA_C_64F : CUDA_C_32F)
                                     : (kDouble ? CUDA_R_64F : CUDA_R_32F);
  // a: the inputs column-major (each matrix transposed), overwritten by Xgeev.
  R* a = static_cast<R*>(call.scratch(sizeof(R) * kParts * batch * nn));
  launch_transpose(static_cast<int64_t>(sizeof(R) * kParts), Shape{batch, n, n}, {0, 2, 1},
                   call.in_raw(0), a, call.stream());
  // wx: Xgeev's eigenvalues, 2n reals per matrix either way ([wr, wi] or n complex).
  R* wx = static_cast<R*>(call.scratch(sizeof(R) * 2 * batch * n));
  R* vr = static_cast<R*>(call.scratch(sizeof(R) * kParts * (right ? batch * nn : 1)));
  int* info = static_cast<int*>(call.scratch(sizeof(int) * batch));
  const cusolverEigMode_t jobvr = right ? CUSOLVER_EIG_MODE_VECTOR : CUSOLVER_EIG_MODE_NOVECTOR;
  const int64_t ldvr = right ? n : 1;

  decomp::Lease lease(call.device(), call.stream());
  SolverParams params;
  size_t device_bytes = 0, host_bytes = 0;
  check(cusolverDnXgeev_bufferSize(lease.solver(), params.get(), CUSOLVER_EIG_MODE_NOVECTOR,
                                   jobvr, n, type, a, n, type, wx, type, nullptr, 1, type, vr,
                                   ldvr, type, &device_bytes, &host_bytes),
        "cusolverDnXgeev_bufferSize");
  void* device_work = call.scratch(std::max<size_t>(device_bytes, 1));
  // One host block per matrix: nothing says a call is done with its block when it returns.
  std::vector<char> host_work(std::max<size_t>(host_bytes * batch, 1));
  const int64_t w_step = kComplex ? n : 2 * n;  // in Xgeev's W elements
  const size_t w_bytes = sizeof(R) * (kComplex ? 2 : 1);
  for (int64_t b = 0; b < batch; ++b) {
    check(cusolverDnXgeev(lease.solver(), params.get(), CUSOLVER_EIG_MODE_NOVECTOR, jobvr, n,
                          type, a + b * kParts * nn, n, type,
                          reinterpret_cast<char*>(wx) + b * w_step * w_bytes, type, nullptr, 1,
                          type, right ? vr + b * kParts * nn : vr, ldvr, type, device_work,
                          device_bytes, host_work.data() + b * host_bytes, host_bytes, info + b),
          "cusolverDnXgeev");
  }
  R* w = static_cast<R*>(call.out_raw(0));
  R* v = right ? static_cast<R*>(call.out_raw(1)) : nullptr;
  if constexpr (kComplex) {
    decomp::eig_outputs_complex(wx, right ? vr : nullptr, info, batch, n, w, v, call.stream());
  } else {
    decomp::eig_outputs_real(wx, right ? vr : nullptr, info, batch, n, w, v, call.stream());
  }
  check(cudaGetLastError(), "eig outputs kernel");
  if (host_bytes > 0) check(cudaStreamSynchronize(call.stream()), "cudaStreamSynchronize (eig)");
}

void eig_kernel(Call& call) {
  switch (call.in_aval(0).dtype) {
    case DType::kF32:
      return eig<float, false>(call);
    case DType::kF64:
      return eig<double, false>(call);
    case DType::kC64:
      return eig<float, true>(call);
    case DType::kC128:
      return eig<double, true>(call);
    default:
      graft::fail("eig", "has no CUDA kernel for ", call.in_aval(0).str());
  }
}

}  // namespace

void register_eig_kernels(KernelTable& table) { table[int(PrimitiveId::kEig)] = &eig_kernel; }

}  // namespace graft::cuda
