// jit passes over the IR of transforms/passes/program.h. Each takes a program and returns a
// new one computing the same outputs. They use primitives only through the Primitive
// interface, except the algebraic simplifier, whose job is to know some algebra.
#pragma once

#include <cstdint>
#include <vector>

#include "transforms/passes/program.h"

namespace graft {

// Drops instructions none of whose outputs are used (unless they have side effects), and
// unused constants.
Program eliminate_dead_code(const Program& p);
// Merges instructions applying the same primitive (same id, same_params) to the same inputs,
// and equal small constants.
Program eliminate_common_subexpressions(const Program& p);
// Evaluates, once, every instruction whose inputs are all constants; its outputs become
// constants (except results over 1 MiB larger than their inputs: big broadcasts and iotas).
Program fold_constants(const Program& p);
// x*1, 1*x, x+0, 0+x, x-0 -> x (1 and 0: constants, or broadcasts of constants); transpose of
// transpose -> one transpose (or x when the permutations compose to the identity); reshape of
// reshape -> one reshape; reshape to the same shape, identity transposes and conversions to the
// same dtype -> x.
Program simplify_algebra(const Program& p);
// Groups connected elementwise instructions of one shape into fused_elementwise instructions
// (transforms/passes/fuse_elementwise.cc); values read outside a group become its outputs.
Program fuse_elementwise(const Program& p);

// All of the above, in an order where each helps the next.
Program optimize(const Program& p);

// Liveness of every value and the memory the executor will use. Only values the program's
// instructions define are counted (arguments belong to the caller, constants to the
// program). A value's buffer is freed after its last use; an elementwise instruction writes
// an output into the buffer of an input of the same shape and dtype that dies there (an
// intermediate, or an argument the caller donated). Aliasing kernels (reshape...) are
// counted as allocating, so the figures are an upper bound.
struct BufferPlan {
  std::vector<int> last_use;     // per value: last instruction reading it, -1 if none
  std::vector<int> input_index;  // per value: its position in p.inputs, or -1
  std::vector<bool> keep;        // per value: a program output or a constant (never reused)
  int64_t peak_bytes = 0;        // max over the schedule of live bytes
  int64_t total_bytes = 0;       // sum of every defined value's bytes (no freeing, no reuse)
};
BufferPlan plan_buffers(const Program& p, const std::vector<bool>& donated = {});

// Bit k of the result: instruction i may take over its input k's buffer (see
// Node::reusable_inputs), given which arguments are donated.
uint64_t reusable_inputs(const Program& p, const BufferPlan& plan, size_t i,
                         const std::vector<bool>& donated);

}  // namespace graft
