// The CUDA kernel of conv_general_dilated (core/primitives/conv.h): the plan of conv_plan.h
// (every case the primitive allows with 0 to 3 spatial dims), carried out with the
// rearranging kernel (conv_device.h) around one cuDNN forward convolution (cudnn_conv.h).
#include <cuda_runtime_api.h>

#include "core/backend/cuda/conv/conv_device.h"
#include "core/backend/cuda/conv/conv_plan.h"
#include "core/backend/cuda/conv/cudnn_conv.h"
#include "core/backend/cuda/kernel.h"
#include "core/backend/cuda/runtime/check.h"
#include "core/primitives/conv.h"

namespace graft::cuda {
namespace {

static_assert(static_cast<int>(DType::kF16) == 5 && static_cast<int>(DType::kBF16) == 6 &&
                  static_cast<int>(DType::kF32) == 7 && static_cast<int>(DType::kF64) == 8,
              "conv_device.cu numbers dtypes as graft::DType does");

// conv_device.cu's rearranging copy, or an error naming the dtypes it has no kernel for.
void arrange_or_fail(const void* src, DType from, void* dst, DType to, const conv::Arrange& a,
                     cudaStream_t stream) {
  if (!conv::arrange(src, static_cast<int>(from), dst, static_cast<int>(to), a, stream)) {
    graft::fail("conv_general_dilated", "has no CUDA kernel to rearrange ", dtype_name(from),
                " into ", dtype_name(to));
  }
}

// `src` rearranged by `a` into scratch memory of dtype `to`.
const void* arranged(Call& call, const void* src, DType from, DType to, const conv::Arrange& a) {
  void* buf = call.scratch(a.elements() * dtype_size(to));
  arrange_or_fail(src, from, buf, to, a, call.stream());
  return buf;
}

void conv_kernel(Call& call) {
  const ConvParams& p = call.params<ConvGeneralDilated>().conv();
  const Aval &la = call.in_aval(0), &ra = call.in_aval(1), &oa = call.out_aval();
  void* out = call.out_raw();
  if (numel(oa.shape) == 0) return;
  if (numel(la.shape) == 0 || numel(ra.shape) == 0) {  // an empty sum everywhere
    check(cudaMemsetAsync(out, 0, numel(oa.shape) * dtype_size(oa.dtype), call.stream()),
          "cudaMemsetAsync");
    return;
  }
  const conv::ConvPlan plan = conv::plan_conv(p, la, ra, oa);
  const DType ct = plan.conv.type;
  const void* x = call.in_raw(0);
  const void* w = call.in_raw(1);
  if (plan.arrange_lhs) x = arranged(call, x, la.dtype, ct, plan.lhs);
  if (plan.arrange_rhs) w = arranged(call, w, ra.dtype, ct, plan.rhs);
  void* y = plan.arrange_out ? call.scratch(plan.out.elements() * dtype_size(ct)) : out;
  conv::cudnn_convolve(call, plan.conv, x, w, y);
  if (plan.arrange_out) {
    arrange_or_fail(y, ct, out, oa.dtype, plan.out, call.stream());
  }
}

}  // namespace

void register_conv_kernels(KernelTable& table) {
  table[static_cast<int>(PrimitiveId::kConvGeneralDilated)] = &conv_kernel;
}

}  // namespace graft::cuda
