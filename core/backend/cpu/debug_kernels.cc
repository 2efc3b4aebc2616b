// CPU kernel of debug_print: prints, then passes every input through (no copy).
#include "core/backend/cpu/kernel.h"
#include "core/primitives/debug.h"

namespace graft::cpu {
namespace {

void debug_print_kernel(Call& c) {
  debug_print_emit(c.params<DebugPrint>().format(c.input_arrays()));
  for (int i = 0; i < c.num_inputs(); ++i) c.alias(i, i);
}

}  // namespace

void register_debug_kernels(KernelTable& table) {
  table[static_cast<int>(PrimitiveId::kDebugPrint)] = &debug_print_kernel;
}

}  // namespace graft::cpu
