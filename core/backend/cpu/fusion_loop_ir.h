// The loop of a compiled fused_elementwise group (fusion_codegen.cc builds the function around
// it and supplies the per-block code): one block an iteration, or software-pipelined, each
// iteration running the first steps on one block and the rest on the block before it.
#pragma once

#include <llvm/IR/IRBuilder.h>

#include <cstdint>
#include <functional>
#include <vector>

#include "core/primitives/fusion.h"

namespace graft::cpu::fusion {

using Slots = std::vector<llvm::Value*>;  // a block's value of each slot (inputs, then steps)

// What a loop is made of, at a block index: the block's input slots (scalars are their
// splats), steps [from, to) on slots, and the outputs' stores.
struct BlockOps {
  std::function<void(Slots&, llvm::Value*)> load_inputs;
  std::function<void(Slots&, size_t, size_t)> run_steps;
  std::function<void(const Slots&, llvm::Value*)> store_outputs;
};

// The function being built around the loop: entry (ends before its branch to the loop), the
// loop's first block, done (returns), and the element range.
struct LoopFrame {
  llvm::IRBuilder<>& b;
  llvm::Function* fn;
  llvm::BasicBlock *entry, *loop, *done;
  llvm::Value *begin, *end;
  int64_t block;
};

// One block an iteration: every load before any store (outputs may alias inputs).
void emit_plain_loop(const LoopFrame& l, const BlockOps& ops, const FusedElementwise& f);

// Software-pipelined at step `cut` (0 < cut < steps): see the definition.
void emit_pipelined_loop(const LoopFrame& l, const BlockOps& ops, const FusedElementwise& f,
                         size_t cut);

}  // namespace graft::cpu::fusion
