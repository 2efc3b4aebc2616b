// Dead-code elimination, backwards over the instructions. An instruction with side effects
// (debug_print, or one in its bodies) stays; one whose outputs are only partly used asks its
// primitive for a smaller version (Primitive::prune: a scan without the carries and ys nobody
// needs, a cond without unused outputs, a while_loop without dead carries, and without the
// inputs their bodies stopped reading), so only what it still reads stays live above it.
#include <algorithm>
#include <vector>

#include "transforms/passes/passes.h"

namespace graft {

Program eliminate_dead_code(const Program& p) {
  std::vector<bool> live(p.avals.size(), false);
  for (int v : p.outputs) live[v] = true;
  std::vector<Instr> kept;  // in reverse order
  std::vector<bool> used;
  for (size_t i = p.instrs.size(); i-- > 0;) {
    const Instr& instr = p.instrs[i];
    used.clear();
    bool any = false, all = true;
    for (int v : instr.out) {
      used.push_back(live[v]);
      any = any || live[v];
      all = all && live[v];
    }
    bool effects = has_effects(*instr.prim);  // debug_print: kept for its effect
    if (!any && !effects) continue;
    Instr out = instr;
    // Asked even when every output is used: a scan may still drop inputs it does not read.
    if (!instr.prim->sub_programs().empty() || !all) {
      if (std::optional<Pruned> r = instr.prim->prune(used, eliminate_dead_code)) {
        out.prim = r->prim;
        out.in.clear();
        out.out.clear();
        for (size_t k = 0; k < instr.in.size(); ++k) {
          if (r->kept_inputs[k]) out.in.push_back(instr.in[k]);
        }
        for (size_t k = 0; k < instr.out.size(); ++k) {
          if (r->kept_outputs[k]) out.out.push_back(instr.out[k]);
        }
      }
    }
    for (int v : out.in) live[v] = true;
    kept.push_back(std::move(out));
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
  std::reverse(kept.begin(), kept.end());
  out.instrs = std::move(kept);
  return out;
}

}  // namespace graft
