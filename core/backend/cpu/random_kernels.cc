// CPU kernels of the random family.
#include "core/backend/cpu/kernel.h"

namespace graft::cpu {

void register_random_kernels(KernelTable&) {}

}  // namespace graft::cpu
