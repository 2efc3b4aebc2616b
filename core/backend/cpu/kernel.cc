#include "core/backend/cpu/kernel.h"

#include "core/backend/cpu/kernel_profile.h"
#include "core/error.h"

namespace graft::cpu {

void* Call::out_raw(int i) {
  for (int k = 0; !outputs_[i] && reusable_ != 0 && k < num_inputs(); ++k) {
    if (!(reusable_ >> k & 1) || in_aval(k).shape != out_aval(i).shape ||
        in_aval(k).dtype != out_aval(i).dtype)
      continue;
    std::shared_ptr<Buffer>& b = *inputs_[k];
    if (b.use_count() != 1) continue;  // aliased (reshape, a held buffer()): not ours
    if (b->is_view()) continue;        // a window into another array (scan's x slices)
    reusable_ &= ~(uint64_t{1} << k);
    outputs_[i] = b;
  }
  if (!outputs_[i]) {
    const Aval& a = out_aval(i);
    const auto bytes = static_cast<size_t>(numel(a.shape) * dtype_size(a.dtype));
    try {
      outputs_[i] = Buffer::make(bytes);
    } catch (const AllocError&) {  // name the kernel that asked (the string only on failure)
      throw AllocError(bytes, str_cat("the output ", a.str(), " of ", prim.name()));
    }
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
    register_decomp_kernels(k);
    register_conv_kernels(k);
    register_attention_kernels(k);
    register_random_kernels(k);
    register_call_kernels(k);
    register_control_kernels(k);
    register_fusion_kernels(k);
    register_debug_kernels(k);
    register_callback_kernels(k);
    register_collective_kernels(k);
    register_complex_kernels(k);
    register_fft_kernels(k);
    register_eig_kernels(k);
  }
};
}  // namespace

const KernelTable& kernels() {
  static const Table table;
  return table.k;
}

bool runs_in_place(PrimitiveId p) {
  // The kInPlace rows of core/primitives/list.h: elementwise ops, and fused groups (which copy
  // an aliased input's tile before writing it, fusion_kernels.cc).
  return primitive_facts(p).has(kInPlace);
}

void run_kernel(const Primitive& p, Call& call) {
  Kernel k = kernels()[static_cast<int>(p.id())];
  if (k == nullptr) fail(p.name(), "has no CPU kernel");
  if (profiling_enabled()) {
    KernelTimer timer(call);
    k(call);
  } else {
    k(call);
  }
  for (int i = 0; i < call.num_outputs(); ++i) {
    if (!call.has_output(i)) call.out_raw(i);  // zero-sized or untouched outputs
  }
}

}  // namespace graft::cpu
