// fused_elementwise's CUDA kernel: the group compiled with NVRTC on first use (launch.h keeps
// the loaded kernel per group structure and architecture, in its own cache rather than the
// primitive's backend-data slot, which the CPU backend uses for its compiled loop: one
// primitive may run on both backends) and launched on the call's stream.
#include <absl/container/inlined_vector.h>

#include "core/backend/cuda/fusion/launch.h"
#include "core/backend/cuda/kernel.h"
#include "core/primitives/fusion.h"

namespace graft::cuda {
namespace {

void fused_kernel(Call& c) {
  const auto& f = c.params<FusedElementwise>();
  absl::InlinedVector<void*, 8> outs;
  for (int o = 0; o < c.num_outputs(); ++o) outs.push_back(c.out_raw(o));
  const int64_t n = numel(f.shape());
  if (n == 0) return;
  absl::InlinedVector<const void*, 16> ins;
  for (int i = 0; i < c.num_inputs(); ++i) ins.push_back(c.in_raw(i));
  const fusion::LoadedKernel& k = fusion::kernel_for(f, c.device());
  fusion::launch(k, n, ins.data(), outs.data(), c.device(), c.stream());
}

}  // namespace

void register_fusion_kernels(KernelTable& table) {
  table[static_cast<int>(PrimitiveId::kFusedElementwise)] = &fused_kernel;
}

}  // namespace graft::cuda
