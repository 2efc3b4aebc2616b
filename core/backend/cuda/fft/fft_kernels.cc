// The CUDA kernel of lax.fft (core/primitives/fft.h) through cuFFT, with the CPU kernel's
// conventions (core/backend/cpu/fft_kernel.cc): FFT / IFFT / RFFT / IRFFT over the 1 to 3
// trailing dims, the leading dims one batch of a single cuFFT plan (fft_plan.h), IFFT and
// IRFFT scaled by 1 / (n_1 * ... * n_k). c64 / f32 run in single precision, c128 / f64 in
// double. Nothing synchronizes.
#include <cufft.h>

#include "core/backend/cuda/fft/cufft_plans.h"
#include "core/backend/cuda/fft/fft_device.h"
#include "core/backend/cuda/fft/fft_plan.h"
#include "core/backend/cuda/kernel.h"
#include "core/backend/cuda/runtime/check.h"
#include "core/primitives/fft.h"

namespace graft::cuda {
namespace {

using fft::FftKind;
using fft::FftPlan;

// cuFFT's element types for one precision (std::complex and cufft(Double)Complex share their
// layout: two reals, real part first).
template <bool kDouble>
struct Types;
template <>
struct Types<false> {
  using R = cufftReal;
  using C = cufftComplex;
};
template <>
struct Types<true> {
  using R = cufftDoubleReal;
  using C = cufftDoubleComplex;
};

cufftResult exec(cufftHandle h, cufftComplex* in, cufftComplex* out, bool forward) {
  return cufftExecC2C(h, in, out, forward ? CUFFT_FORWARD : CUFFT_INVERSE);
}
cufftResult exec(cufftHandle h, cufftDoubleComplex* in, cufftDoubleComplex* out, bool forward) {
  return cufftExecZ2Z(h, in, out, forward ? CUFFT_FORWARD : CUFFT_INVERSE);
}
cufftResult exec(cufftHandle h, cufftReal* in, cufftComplex* out, bool) {
  return cufftExecR2C(h, in, out);
}
cufftResult exec(cufftHandle h, cufftDoubleReal* in, cufftDoubleComplex* out, bool) {
  return cufftExecD2Z(h, in, out);
}
cufftResult exec(cufftHandle h, cufftComplex* in, cufftReal* out, bool) {
  return cufftExecC2R(h, in, out);
}
cufftResult exec(cufftHandle h, cufftDoubleComplex* in, cufftDoubleReal* out, bool) {
  return cufftExecZ2D(h, in, out);
}

template <bool kDouble, typename In, typename Out>
void transform(Call& call, const FftPlan& p) {
  using R = typename Types<kDouble>::R;
  In* in = const_cast<In*>(call.in<In>(0));
  Out* out = call.out<Out>();
  if (p.copy_input) {  // cuFFT's C2R overwrites its input
    In* copy = static_cast<In*>(call.scratch(sizeof(In) * p.in_elements));
    check(cudaMemcpyAsync(copy, in, sizeof(In) * p.in_elements, cudaMemcpyDeviceToDevice,
                          call.stream()),
          "cudaMemcpyAsync (fft input)");
    in = copy;
  }
  fft::PlanLease lease(call.device(), p);
  lease.bind(call.stream(), lease.work_bytes() > 0 ? call.scratch(lease.work_bytes()) : nullptr);
  check(exec(lease.handle(), in, out, p.forward), "cufftExec");
  if (p.scale != 1) {
    const int64_t reals = p.out_elements * static_cast<int64_t>(sizeof(Out) / sizeof(R));
    fft::scale(reinterpret_cast<R*>(out), reals, p.scale, call.stream());
  }
}

template <bool kDouble>
void run(Call& call, const FftPlan& p) {
  using R = typename Types<kDouble>::R;
  using C = typename Types<kDouble>::C;
  switch (p.kind) {
    case FftKind::kC2C:
      return transform<kDouble, C, C>(call, p);
    case FftKind::kR2C:
      return transform<kDouble, R, C>(call, p);
    case FftKind::kC2R:
      return transform<kDouble, C, R>(call, p);
  }
}

void fft_kernel(Call& call) {
  const auto& prim = call.params<Fft>();
  const FftPlan p = fft::plan_fft(prim.type(), prim.lengths(), call.in_aval(0), call.out_aval());
  if (p.empty_output) return;
  if (p.zero_output) {
    const Aval& o = call.out_aval();
    check(cudaMemsetAsync(call.out_raw(), 0, numel(o.shape) * dtype_size(o.dtype), call.stream()),
          "cudaMemsetAsync (fft of an empty operand)");
    return;
  }
  if (p.double_precision) return run<true>(call, p);
  return run<false>(call, p);
}

}  // namespace

void register_fft_kernels(KernelTable& table) { table[int(PrimitiveId::kFft)] = &fft_kernel; }

}  // namespace graft::cuda
