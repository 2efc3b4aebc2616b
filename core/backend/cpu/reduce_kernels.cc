// CPU kernels of the reduce family.
#include "core/backend/cpu/kernel.h"

namespace graft::cpu {

void register_reduce_kernels(KernelTable&) {}

}  // namespace graft::cpu
