// CPU kernels of the control-flow primitives (core/backend/control_kernels.h): bodies run
// through the executor (executable.h) with a buffer plan made once per primitive (no tracing
// or shape rules per iteration; intermediates freed, elementwise steps in place).
#include "core/backend/control_kernels.h"

#include <cstring>

#include "core/backend/cpu/host_control.h"
#include "core/backend/cpu/kernel.h"

namespace graft::cpu {
namespace {

void scan_kernel(Call& c) { control::scan(c, HostControl{}); }
void cond_kernel(Call& c) { control::cond(c, HostControl{}); }
void while_kernel(Call& c) { control::while_loop(c, HostControl{}); }

}  // namespace

void register_control_kernels(KernelTable& table) {
  table[static_cast<int>(PrimitiveId::kScan)] = &scan_kernel;
  table[static_cast<int>(PrimitiveId::kCond)] = &cond_kernel;
  table[static_cast<int>(PrimitiveId::kWhileLoop)] = &while_kernel;
}

}  // namespace graft::cpu
