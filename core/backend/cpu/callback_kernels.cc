// CPU kernel of pure_callback: the host function's results become the outputs as read-only
// views (no copy; a view is never overwritten in place, so arrays the function keeps stay
// as they are).
#include "core/backend/cpu/kernel.h"
#include "core/primitives/callback.h"

namespace graft::cpu {
namespace {

void pure_callback_kernel(Call& c) {
  std::vector<std::shared_ptr<const Buffer>> outs = c.params<PureCallback>().run(c.input_arrays());
  for (int o = 0; o < c.num_outputs(); ++o) {
    const size_t bytes = outs[o]->bytes();
    c.set_output(o, Buffer::view(std::move(outs[o]), 0, bytes));
  }
}

}  // namespace

void register_callback_kernels(KernelTable& table) {
  table[static_cast<int>(PrimitiveId::kPureCallback)] = &pure_callback_kernel;
}

}  // namespace graft::cpu
