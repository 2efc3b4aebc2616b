// jit passes over the IR of core/ir/program.h. Each takes a program and returns a
// new one computing the same outputs. They use primitives only through the Primitive
// interface, except the algebraic simplifier, whose job is to know some algebra.
#pragma once

#include <cstdint>
#include <vector>

#include "core/ir/program.h"

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

}  // namespace graft
