// Native code for fused_elementwise groups of f32, bf16 and bool slots (bf16 values are held
// in f32 lanes and rounded to bf16 after each step, as the interpreter and the unfused ops
// round them): LLVM's ORC JIT compiles a group into one loop that loads each input once, keeps
// every intermediate in vector registers and stores only the outputs (the tile interpreter in
// fusion_kernels.cc moves each step's values through L1). Exact ops with an inline form
// (fusion_codegen.cc's Inline<Op>: add, sub, mul, div, neg, square, abs, sign, max, min, floor,
// ceil, round, sqrt, rsqrt as 1 / sqrt; comparisons, not / and / or / xor, is_finite; select_n
// and converts between f32 and bool) and exp, tanh and logistic (Eigen's packet algorithms
// written as IR, eigen_math_ir.h) are emitted inline; every other op with f32 operands and
// result calls its functor (core/primitives/elementwise_ops.h) on a block held on the stack,
// with the interpreter's loop, so every element gets the interpreter's bits.
//
// A group with enough compute (tanh, exp, logistic, divisions ...) gets a software-pipelined
// loop: each iteration runs the first part of the steps on one block and the rest on the block
// before it (CompiledGroup::pipeline_cut), whose inputs it loads again.
//
// GRAFT_FUSION_CODEGEN: "auto" (default: groups of at least kCodegenMinElements elements),
// "always" (every size: tests), or 0 / false / off / no (never). GRAFT_PERF_JIT=1: the loops'
// code goes to a jitdump file (under $JITDUMPDIR/.debug/jit/) that `perf inject --jit` reads, so
// that `perf record -k 1` profiles can be annotated inside them.
#pragma once

#include <cstdint>

#include "core/primitives/fusion.h"

namespace graft::cpu::fusion {

constexpr int64_t kCodegenMinElements = 16384;

// Processes elements [begin, end) of the group: ins[i] is input i's data (a scalar's single
// value; a broadcast input's small array, read as FusedRead says), outs[o] output o's
// buffer; begin and end are multiples of `block` counted from the array's start. An output
// may share its buffer with an input (donation): a block's inputs are all loaded before its
// outputs are stored.
using CompiledLoop = void (*)(const void* const* ins, void* const* outs, int64_t begin,
                              int64_t end);

struct CompiledGroup {
  CompiledLoop loop = nullptr;
  int64_t block = 0;  // elements per iteration: a multiple of every packet width
  // 0, or the step from which the loop runs a block behind: steps before it go one block
  // ahead, so that two blocks' independent work overlaps in the core (groups with enough
  // compute, fusion_codegen.cc's pipeline_cut).
  int pipeline_cut = 0;
};

enum class Codegen { kOff, kAuto, kAlways };

// Whether compiled loops run on groups of n elements: GRAFT_FUSION_CODEGEN, or the last
// set_codegen (benchmarks compare both paths in one run).
bool codegen_wanted(int64_t n);
void set_codegen(Codegen mode);

// The compiled loop for `f`, made on the first call for this primitive (kept with it) from a
// process-wide cache keyed by the group's structure; nullptr when a slot is f64 or
// f16, a step has no compiled form, or LLVM could not compile it (the interpreter runs).
const CompiledGroup* compiled_group(const FusedElementwise& f);

}  // namespace graft::cpu::fusion
