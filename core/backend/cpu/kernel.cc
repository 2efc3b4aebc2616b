#include "core/backend/cpu/kernel.h"

#include "core/error.h"

namespace graft::cpu {

void* Call::out_raw(int i) {
  if (!outputs_[i]) {
    const Aval& a = avals_[i];
    outputs_[i] = Buffer::make(static_cast<size_t>(numel(a.shape) * dtype_size(a.dtype)));
  }
  return outputs_[i]->data();
}

namespace {
struct Table {
  KernelTable k{};
  Table() {
    register_elementwise_kernels(k);
    register_reduce_kernels(k);
    register_shape_kernels(k);
    register_index_kernels(k);
    register_linalg_kernels(k);
    register_random_kernels(k);
    register_call_kernels(k);
    register_control_kernels(k);
    register_fusion_kernels(k);
  }
};
}  // namespace

const KernelTable& kernels() {
  static const Table table;
  return table.k;
}

void run_kernel(Node& n) {
  Kernel k = kernels()[static_cast<int>(n.primitive->id())];
  if (k == nullptr) fail(n.primitive->name(), "has no CPU kernel");
  std::vector<std::shared_ptr<Buffer>> outputs(n.avals.size());
  Call call(*n.primitive, n.inputs, n.avals, outputs);
  k(call);
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (!outputs[i]) call.out_raw(static_cast<int>(i));  // zero-sized or untouched outputs
  }
  n.buffers = std::move(outputs);
}

}  // namespace graft::cpu
