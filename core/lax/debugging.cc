// debug_print (core/primitives/debug.h).
#include "core/lax/lax.h"
#include "core/primitives/debug.h"

namespace graft {

std::vector<Array> debug_print(const std::string& fmt, const std::vector<Array>& arrays) {
  for (size_t i = 0; i < arrays.size(); ++i) {
    if (!arrays[i].valid()) fail("debug_print", "argument ", i, " is an empty Array handle");
  }
  if (arrays.empty()) {  // nothing to bind: a plain print
    debug_print_emit(fmt);
    return {};
  }
  // bind prints now, or records the node for jit when tracing.
  std::vector<Array> outs = graft::bind(std::make_shared<const DebugPrint>(fmt), arrays);
  return outs;
}

}  // namespace graft
