// jit passes over the IR of core/ir/program.h. Each takes a program and returns a
// new one computing the same outputs. They use primitives only through the Primitive
// interface, except the algebraic simplifier, whose job is to know some algebra.
//
// Each pass rewrites one level: the program's own instructions. optimize runs them at every
// level, inside the bodies of scan / cond / while_loop (any depth) through map_bodies; DCE
// also shrinks what it can through Primitive::prune (a scan's unused carries and ys, a cond's
// unused outputs and operands, a while_loop's dead carries and unread consts), and
// hoist_loop_invariants moves a loop body's invariant instructions out to the level above.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "core/ir/program.h"

namespace graft {

// Drops instructions none of whose outputs are used (unless they have side effects, theirs
// or their bodies'), and unused constants; an instruction some of whose outputs are unused
// becomes the smaller one Primitive::prune gives (a scan without its dead carries and ys).
Program eliminate_dead_code(const Program& p);
// Merges instructions applying the same primitive (same id, same_params) to the same inputs
// (not those with side effects), and equal small constants; two with bodies whose primitives
// merge (Primitive::merge_with: grad's forward scan and the scan its vjp rule runs to save
// carries) become one.
Program eliminate_common_subexpressions(const Program& p);
// Evaluates, once, every instruction whose inputs are all constants; its outputs become
// constants (except results over 1 MiB larger than their inputs: big broadcasts and iotas).
Program fold_constants(const Program& p);
// x*1, 1*x, x+0, 0+x, x-0 -> x (1 and 0: constants, or broadcasts of constants); transpose of
// transpose -> one transpose (or x when the permutations compose to the identity); reshape of
// reshape -> one reshape; reshape to the same shape, identity transposes and conversions to the
// same dtype -> x; transpose(dot_general(a, b)) swapping the free dims, when nothing else reads
// the product -> dot_general(b, a).
Program simplify_algebra(const Program& p);
// Groups connected elementwise instructions of one shape into fused_elementwise instructions
// (transforms/passes/fuse_elementwise.cc); values read outside a group become its outputs. A
// group with a reduction of one of its f32 values over one run of its dims becomes a fused_reduce.
Program fuse_elementwise(const Program& p);
// Loop-invariant code motion: an instruction of a loop body (Primitive::loop_consts: scan,
// while_loop) without side effects whose inputs are only the loop's consts, constants or
// results of such instructions moves to the program around the loop, and its result enters
// the loop as a new const. As XLA's while-loop invariant code motion does by default,
// size-inflating instructions (more output bytes than input bytes: broadcasts, iotas) stay in
// the body, and are copied out only as inputs of an instruction that moves.
Program hoist_loop_invariants(const Program& p);

// Whether applying `p` has side effects: its own (debug_print) or those of its bodies.
bool has_effects(const Primitive& p);
// p with every instruction's bodies (Primitive::sub_programs) replaced by f(body), through
// with_sub_programs (f must keep each body's signature). The bodies of fused_elementwise and
// fused_reduce are left alone: they stay as the fusion pass built them.
Program map_bodies(const Program& p, const std::function<Program(const Program&)>& f);

// All of the above at every level, in an order where each helps the next: bodies first, then
// hoisting out of them, folding, simplification, CSE and DCE; then fusion, bodies first.
Program optimize(const Program& p);

}  // namespace graft
