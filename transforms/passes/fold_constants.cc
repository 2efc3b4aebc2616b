#include <vector>

#include "transforms/passes/passes.h"

namespace graft {

namespace {

int64_t bytes(const Aval& a) { return numel(a.shape) * dtype_size(a.dtype); }

}  // namespace

Program fold_constants(const Program& p) {
  Program out;
  out.avals = p.avals;
  out.inputs = p.inputs;
  out.outputs = p.outputs;
  out.constants = p.constants;
  out.constant_values = p.constant_values;
  std::vector<Array> known(p.avals.size());
  for (size_t i = 0; i < p.constants.size(); ++i) known[p.constants[i]] = p.constant_values[i];
  for (const Instr& instr : p.instrs) {
    std::vector<Array> args;
    for (int v : instr.in) {
      if (!known[v].valid()) break;
      args.push_back(known[v]);
    }
    int64_t in_bytes = 0, out_bytes = 0;
    for (int v : instr.in) in_bytes += bytes(p.avals[v]);
    for (int v : instr.out) out_bytes += bytes(p.avals[v]);
    // A collective runs only inside its pmap, never here, even on constants; a big inflating
    // result (too_big_to_fold) would cost memory for little gain.
    if (args.size() != instr.in.size() || has_effects(*instr.prim) ||
        instr.prim->axis_names() != 0 || too_big_to_fold(in_bytes, out_bytes)) {
      out.instrs.push_back(instr);
      continue;
    }
    // Evaluated now, once: the outputs become constants with the same ids.
    std::vector<Array> vals = graft::bind(instr.prim, std::move(args));
    eval(vals);
    for (size_t k = 0; k < vals.size(); ++k) {
      known[instr.out[k]] = vals[k];
      out.constants.push_back(instr.out[k]);
      out.constant_values.push_back(vals[k]);
    }
  }
  return out;
}

}  // namespace graft
