// CPU kernels of the index family.
#include "core/backend/cpu/kernel.h"

namespace graft::cpu {

void register_index_kernels(KernelTable&) {}

}  // namespace graft::cpu
