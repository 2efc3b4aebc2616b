// The CPU executor of a program (core/ir/program.h) and its buffer plan: values are freed
// after their last use, and elementwise instructions compute in place into inputs that die
// there or that the caller donated. jit runs its compiled programs through it, and the
// control-flow kernels run their bodies through it (planned once per primitive).
#pragma once

#include <cstdint>
#include <vector>

#include "core/ir/program.h"

namespace graft {

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
// run_kernel), given which arguments are donated.
uint64_t reusable_inputs(const Program& p, const BufferPlan& plan, size_t i,
                         const std::vector<bool>& donated);

// Binds the program's instructions on `args` (no tracing, no shape rules: the avals are the
// program's) and evaluates the outputs. With a plan, elementwise instructions compute in
// place into intermediates that die there and into arguments marked in `donated` (one flag
// per argument); donated arguments are then marked unusable (Node::donated). Without a plan,
// the instructions become a graph that eval runs.
std::vector<Array> execute(const Program& p, const std::vector<Array>& args,
                           const BufferPlan* plan = nullptr, const std::vector<bool>& donated = {});

}  // namespace graft
