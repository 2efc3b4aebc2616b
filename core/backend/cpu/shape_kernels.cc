// CPU kernels of the shape family.
#include "core/backend/cpu/kernel.h"

namespace graft::cpu {

void register_shape_kernels(KernelTable&) {}

}  // namespace graft::cpu
