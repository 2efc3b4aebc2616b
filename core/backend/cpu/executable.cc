#include "core/backend/cpu/executable.h"

#include <utility>

#include "core/backend/cpu/kernel.h"
#include "core/error.h"

namespace graft {
namespace {

bool taken_by(const Buffers& outs, const std::shared_ptr<Buffer>& b) {
  for (const std::shared_ptr<Buffer>& o : outs) {
    if (o && o == b) return true;
  }
  return false;
}

// After a kernel threw: each argument buffer still in the table that the failed kernel did
// not take over goes back to `args`; one written in place (gone from the table, or taken by
// the failed kernel) is null.
void give_back(const Program& p, Buffers& env, const Buffers& partial, Buffers& args) {
  for (size_t j = 0; j < p.inputs.size(); ++j) {
    std::shared_ptr<Buffer>& b = env[p.inputs[j]];
    args[j] = taken_by(partial, b) ? nullptr : std::move(b);
  }
}

}  // namespace

Buffers execute(const Program& p, const BufferPlan& plan, Buffers& args) {
  if (args.size() != p.inputs.size()) {
    fail("jit", "program takes ", p.inputs.size(), " arrays, got ", args.size());
  }
  Buffers env(p.avals.size());
  for (size_t i = 0; i < args.size(); ++i) env[p.inputs[i]] = std::move(args[i]);
  for (size_t i = 0; i < p.constants.size(); ++i) {
    env[p.constants[i]] = p.constant_values[i].buffer();  // evaluated when the program was made
  }
  // Scratch reused by every instruction: the kernel's view of its slots.
  std::vector<std::shared_ptr<Buffer>*> in;
  std::vector<const Aval*> in_avals, out_avals;
  // In program order: the order liveness was computed in, so an in-place write happens only
  // after every other reader ran.
  for (size_t i = 0; i < p.instrs.size(); ++i) {
    const Instr& instr = p.instrs[i];
    in.clear();
    in_avals.clear();
    out_avals.clear();
    for (int v : instr.in) {
      in.push_back(&env[v]);
      in_avals.push_back(&p.avals[v]);
    }
    for (int v : instr.out) out_avals.push_back(&p.avals[v]);
    Buffers outs(instr.out.size());
    cpu::Call call(*instr.prim, in.data(), in_avals.data(), static_cast<int>(in.size()),
                   out_avals.data(), outs, plan.reusable[i]);
    try {
      cpu::run_kernel(*instr.prim, call);
    } catch (...) {
      give_back(p, env, outs, args);
      throw;
    }
    for (int v : instr.in) {
      if (plan.last_use[v] != static_cast<int>(i) || plan.keep[v]) continue;
      // An argument stays until the run ends (to be given back if a later kernel throws),
      // unless this instruction took it over (in place, or aliased by a reshape).
      if (plan.input_index[v] >= 0 && !taken_by(outs, env[v])) continue;
      env[v].reset();
    }
    for (size_t k = 0; k < instr.out.size(); ++k) {
      const int v = instr.out[k];
      if (plan.last_use[v] >= 0 || plan.keep[v]) env[v] = std::move(outs[k]);  // else unused
    }
  }
  Buffers result;
  result.reserve(p.outputs.size());
  for (int v : p.outputs) result.push_back(env[v]);
  return result;
}

}  // namespace graft
