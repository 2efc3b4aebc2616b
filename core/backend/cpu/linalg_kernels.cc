// CPU kernels of the linalg family.
#include "core/backend/cpu/kernel.h"

namespace graft::cpu {

void register_linalg_kernels(KernelTable&) {}

}  // namespace graft::cpu
