// CPU kernel of debug_print: prints, then passes every input through (no copy).
#include "core/backend/cpu/kernel.h"
#include "core/primitives/debug.h"

namespace graft::cpu {
namespace {

void debug_print_kernel(Call& c) {
  std::vector<Array> ins;
  for (int i = 0; i < c.num_inputs(); ++i) ins.push_back(c.input(i));
  debug_print_emit(c.params<DebugPrint>().format(ins));
  for (int i = 0; i < c.num_inputs(); ++i) c.alias(i, i);
}

}  // namespace

void register_debug_kernels(KernelTable& table) {
  table[static_cast<int>(PrimitiveId::kDebugPrint)] = &debug_print_kernel;
}

}  // namespace graft::cpu
