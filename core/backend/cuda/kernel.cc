#include "core/backend/cuda/kernel.h"

#include "core/backend/cuda/runtime/allocator.h"
#include "core/error.h"

namespace graft::cuda {

void* Call::out_raw(int i) {
  std::shared_ptr<Buffer>& slot = outputs_[i];
  if (!slot) {
    const Aval& a = out_aval(i);
    const size_t bytes = static_cast<size_t>(numel(a.shape) * dtype_size(a.dtype));
    slot = allocate_buffer(device_, bytes, prim.name());
  }
  return slot->data();
}

void* Call::scratch(size_t bytes) {
  scratch_.push_back(allocate_buffer(device_, bytes, "scratch"));
  return scratch_.back()->data();
}

const KernelTable& kernels() {
  struct Table {
    KernelTable k{};
  };
  static const Table* table = [] {
    auto* t = new Table();  // never destroyed: kernels may run during static destruction
    register_elementwise_kernels(t->k);
    register_reduce_kernels(t->k);
    register_shape_kernels(t->k);
    register_index_kernels(t->k);
    register_linalg_kernels(t->k);
    register_attention_kernels(t->k);
    register_conv_kernels(t->k);
    register_decomp_kernels(t->k);
    register_eig_kernels(t->k);
    register_fft_kernels(t->k);
    register_complex_kernels(t->k);
    register_random_kernels(t->k);
    register_fusion_kernels(t->k);
    register_control_kernels(t->k);
    register_collective_kernels(t->k);
    return t;
  }();
  return table->k;
}

}  // namespace graft::cuda
