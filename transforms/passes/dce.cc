#include <vector>

#include "transforms/passes/passes.h"

namespace graft {

Program eliminate_dead_code(const Program& p) {
  std::vector<bool> live(p.avals.size(), false);
  for (int v : p.outputs) live[v] = true;
  std::vector<bool> keep(p.instrs.size(), false);
  for (size_t i = p.instrs.size(); i-- > 0;) {
    const Instr& instr = p.instrs[i];
    keep[i] = instr.prim->has_side_effects();  // debug_print: kept for its effect
    for (int v : instr.out) keep[i] = keep[i] || live[v];
    if (!keep[i]) continue;
    for (int v : instr.in) live[v] = true;
  }
  Program out;
  out.avals = p.avals;
  out.inputs = p.inputs;  // the signature stays, used or not
  out.outputs = p.outputs;
  for (size_t i = 0; i < p.constants.size(); ++i) {
    if (!live[p.constants[i]]) continue;
    out.constants.push_back(p.constants[i]);
    out.constant_values.push_back(p.constant_values[i]);
  }
  for (size_t i = 0; i < p.instrs.size(); ++i) {
    if (keep[i]) out.instrs.push_back(p.instrs[i]);
  }
  return out;
}

}  // namespace graft
