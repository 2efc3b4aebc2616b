#include "core/backend/cpu/executable.h"

#include <absl/container/inlined_vector.h>

#include <utility>

#include "core/backend/cpu/kernel.h"
#include "core/error.h"

namespace graft {

bool is_one_instruction(const Program& p) {
  if (p.instrs.size() != 1 || !p.constants.empty()) return false;
  const Instr& instr = p.instrs[0];
  return instr.in == p.inputs && instr.out == p.outputs;
}

namespace {

// Per-instruction scratch: kept on the stack for the common arities (no heap allocation per
// instruction; eager ops are one-instruction runs, so this is on their hot path).
template <typename T>
using Small = absl::InlinedVector<T, 6>;
using OutSlots = Small<std::shared_ptr<Buffer>>;

bool taken_by(const OutSlots& outs, const std::shared_ptr<Buffer>& b) {
  for (const std::shared_ptr<Buffer>& o : outs) {
    if (o && o == b) return true;
  }
  return false;
}

// After a kernel threw: each argument buffer still in the table that the failed kernel did
// not take over goes back to `args`; one written in place (gone from the table, or taken by
// the failed kernel) is null.
void give_back(const Program& p, Buffers& env, const OutSlots& partial, Buffers& args) {
  for (size_t j = 0; j < p.inputs.size(); ++j) {
    std::shared_ptr<Buffer>& b = env[p.inputs[j]];
    args[j] = taken_by(partial, b) ? nullptr : std::move(b);
  }
}

// Runs `instr` over the slots `in` point at, into `outs` (resized to its outputs; an output
// the plan lets `dests` place starts as its destination).
void run_instr(const Program& p, const BufferPlan& plan, size_t i,
               Small<std::shared_ptr<Buffer>*>& in, OutSlots& outs, InstrRunner run,
               const void* ctx, const Buffers* dests) {
  const Instr& instr = p.instrs[i];
  const uint64_t reusable = plan.reusable[i];
  if (run != nullptr) {
    outs.assign(instr.out.size(), nullptr);
    run(ctx, p, instr, reusable, in.data(), outs.data());
    return;
  }
  Small<const Aval*> in_avals, out_avals;
  for (int v : instr.in) in_avals.push_back(&p.avals[v]);
  for (int v : instr.out) out_avals.push_back(&p.avals[v]);
  outs.assign(instr.out.size(), nullptr);
  if (dests != nullptr) {
    for (size_t k = 0; k < outs.size(); ++k) {
      const int o = plan.output_index[instr.out[k]];
      if (o >= 0 && static_cast<size_t>(o) < dests->size()) outs[k] = (*dests)[o];
    }
  }
  cpu::Call call(*instr.prim, in.data(), in_avals.data(), static_cast<int>(in.size()),
                 out_avals.data(), outs.data(), static_cast<int>(outs.size()), reusable);
  cpu::run_kernel(*instr.prim, call);
}

Buffers execute_one(const Program& p, const BufferPlan& plan, Buffers& args, InstrRunner run,
                    const void* ctx, const Buffers* dests) {
  Small<std::shared_ptr<Buffer>*> in;
  for (std::shared_ptr<Buffer>& a : args) in.push_back(&a);
  OutSlots outs;
  try {
    run_instr(p, plan, 0, in, outs, run, ctx, dests);
  } catch (...) {
    for (std::shared_ptr<Buffer>& a : args) {
      if (taken_by(outs, a)) a = nullptr;  // written in place (donated) before the throw
    }
    throw;
  }
  return Buffers(std::make_move_iterator(outs.begin()), std::make_move_iterator(outs.end()));
}

}  // namespace

InstrAvals::InstrAvals(const Program& p, const Instr& instr) {
  for (int v : instr.in) in.push_back(&p.avals[v]);
  for (int v : instr.out) out.push_back(&p.avals[v]);
}

void execute_one_reading(const Instr& instr, const InstrAvals& avals,
                         std::shared_ptr<Buffer>* const* args, Buffers& outputs) {
  outputs.assign(avals.out.size(), nullptr);
  cpu::Call call(*instr.prim, args, avals.in.data(), static_cast<int>(avals.in.size()),
                 avals.out.data(), outputs.data(), static_cast<int>(outputs.size()));
  cpu::run_kernel(*instr.prim, call);
}

Buffers execute(const Program& p, const BufferPlan& plan, Buffers& args, InstrRunner run,
                const void* ctx, const Buffers* dests) {
  if (args.size() != p.inputs.size()) {
    fail("jit", "program takes ", p.inputs.size(), " arrays, got ", args.size());
  }
  if (is_one_instruction(p)) return execute_one(p, plan, args, run, ctx, dests);
  Buffers env(p.avals.size());
  for (size_t i = 0; i < args.size(); ++i) env[p.inputs[i]] = std::move(args[i]);
  for (size_t i = 0; i < p.constants.size(); ++i) {
    env[p.constants[i]] = p.constant_values[i].buffer();  // evaluated when the program was made
  }
  Small<std::shared_ptr<Buffer>*> in;
  OutSlots outs;
  // In program order: the order liveness was computed in, so an in-place write happens only
  // after every other reader ran.
  for (size_t i = 0; i < p.instrs.size(); ++i) {
    const Instr& instr = p.instrs[i];
    in.clear();
    for (int v : instr.in) in.push_back(&env[v]);
    try {
      run_instr(p, plan, i, in, outs, run, ctx, dests);
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
