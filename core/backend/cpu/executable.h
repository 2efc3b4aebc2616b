// The CPU executor of a program (core/ir/program.h) and its buffer plan: the instructions run
// in order over a table of buffers (one slot per value), values are freed after their last
// use, and elementwise instructions compute in place into inputs that die there or that the
// caller donated. jit's executables, eager ops (one-equation programs) and the control-flow
// kernels' bodies (planned once per primitive) all run through it.
#pragma once

#include <cstdint>
#include <vector>

#include "core/backend/backend.h"
#include "core/ir/program.h"

namespace graft {

// Liveness of every value and the memory the executor will use. Only values the program's
// instructions define are counted (arguments belong to the caller, constants to the
// program). A value's buffer is freed after its last use; an elementwise instruction writes
// an output into the buffer of an input of the same shape and dtype that dies there (an
// intermediate, or an argument the caller donated). Aliasing kernels (reshape...) are
// counted as allocating, so the figures are an upper bound.
struct BufferPlan {
  std::vector<int> last_use;       // per value: last instruction reading it, -1 if none
  std::vector<int> input_index;    // per value: its position in p.inputs, or -1
  std::vector<bool> keep;          // per value: a program output or a constant (never reused)
  // per value: its position in p.outputs when an instruction computes it and it is no other
  // output (execute's `dests` may place it), else -1
  std::vector<int> output_index;
  std::vector<uint64_t> reusable;  // per instruction: reusable_inputs under the donation
  int64_t peak_bytes = 0;          // max over the schedule of live bytes
  int64_t total_bytes = 0;         // sum of every defined value's bytes (no freeing, no reuse)
};
BufferPlan plan_buffers(const Program& p, const std::vector<bool>& donated = {});

// Bit k of the result: instruction i may take over its input k's buffer (see
// run_kernel), given which arguments are donated.
uint64_t reusable_inputs(const Program& p, const BufferPlan& plan, size_t i,
                         const std::vector<bool>& donated);

// Runs the program over `args` (one buffer per input, moved from) under `plan` and returns
// one buffer per output: no Nodes, no shape rules (the avals are the program's). A donated
// argument's buffer is written in place only when `args` holds its only reference. An
// argument's buffer stays in the table until the end of the run unless an instruction took
// it over, so that when a kernel throws, `args` gets back every argument buffer not written
// (Executable::run_buffers' contract).
//
// `run` runs one instruction instead of the CPU's kernel table (the CUDA backend passes its
// own, with `ctx`): it reads the buffers `in` points at (one per instr.in) and fills `outs`
// (one null slot per instr.out); `reusable` as run_kernel's mask.
using InstrRunner = void (*)(const void* ctx, const Program& p, const Instr& instr,
                             uint64_t reusable, std::shared_ptr<Buffer>* const* in,
                             std::shared_ptr<Buffer>* outs);
//
// `dests` (optional, one per program output, null for none): a buffer of the output's size
// that the instruction computing that output writes into (BufferPlan::output_index says which
// outputs may be placed); the kernel may still give its result elsewhere (an alias, say):
// callers compare what comes back. CPU kernels only (ignored with `run`).
Buffers execute(const Program& p, const BufferPlan& plan, Buffers& args, InstrRunner run = nullptr,
                const void* ctx = nullptr, const Buffers* dests = nullptr);

// A program that is one instruction over its inputs in order, giving its outputs in order
// (an eager op): it can run with no table of values.
bool is_one_instruction(const Program& p);
// The avals of one instruction's operands, as its kernel's Call takes them (worked out once
// per executable for eager ops, not per call).
struct InstrAvals {
  InstrAvals(const Program& p, const Instr& instr);
  std::vector<const Aval*> in, out;
};
// Runs such a program's instruction: its kernel reads the buffers `args` point at, which it
// neither moves nor writes, into `outputs`.
void execute_one_reading(const Instr& instr, const InstrAvals& avals,
                         std::shared_ptr<Buffer>* const* args, Buffers& outputs);

}  // namespace graft
