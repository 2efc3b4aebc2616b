// CPU kernels of the call primitives: a custom_jvp_call or custom_vjp_call runs fun (or fwd,
// when its outputs include fwd's residuals) and remat its body, through the executor with a
// plan made once per primitive (core/backend/control_kernels.h). checkpoint_name shares its
// input's buffer.
#include "core/backend/control_kernels.h"
#include "core/backend/cpu/host_control.h"
#include "core/backend/cpu/kernel.h"

namespace graft::cpu {
namespace {

void call_kernel(Call& c) { control::call(c, HostControl{}); }
void checkpoint_name_kernel(Call& c) { c.alias(0, 0); }

}  // namespace

void register_call_kernels(KernelTable& table) {
  table[static_cast<int>(PrimitiveId::kCustomJvpCall)] = &call_kernel;
  table[static_cast<int>(PrimitiveId::kCustomVjpCall)] = &call_kernel;
  table[static_cast<int>(PrimitiveId::kRemat)] = &call_kernel;
  table[static_cast<int>(PrimitiveId::kCheckpointName)] = &checkpoint_name_kernel;
}

}  // namespace graft::cpu
