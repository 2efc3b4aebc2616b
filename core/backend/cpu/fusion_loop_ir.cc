// The loops of compiled fused groups (see the header).
#include "core/backend/cpu/fusion_loop_ir.h"

namespace graft::cpu::fusion {

void emit_plain_loop(const LoopFrame& l, const BlockOps& ops, const FusedElementwise& f) {
  auto& b = l.b;
  const size_t n_steps = f.steps().size();
  b.CreateCondBr(b.CreateICmpSLT(l.begin, l.end), l.loop, l.done);
  b.SetInsertPoint(l.loop);
  llvm::PHINode* i = b.CreatePHI(b.getInt64Ty(), 2);
  i->addIncoming(l.begin, l.entry);
  Slots slot(f.in_avals().size() + n_steps);
  ops.load_inputs(slot, i);
  ops.run_steps(slot, 0, n_steps);
  ops.store_outputs(slot, i);
  llvm::Value* next = b.CreateAdd(i, b.getInt64(l.block));
  i->addIncoming(next, b.GetInsertBlock());  // steps may have branched (eigen_ir::if_any)
  b.CreateCondBr(b.CreateICmpSLT(next, l.end), l.loop, l.done);
}

// Software-pipelined: iteration i runs steps [0, cut) on block i and steps [cut, n) on block
// i - 1 (the two are independent, so the core overlaps their long dependency chains instead
// of waiting on one block's); a prologue starts the first block, an epilogue finishes the
// last. The slots of steps before the cut that later steps or the outputs read are carried
// in phis; inputs are loaded again for the second part (a load is cheaper than a carried
// register). Block i - 1's inputs are reloaded before its outputs are stored, and block i's
// loads touch none of block i - 1's elements, so an output may still alias an input.
void emit_pipelined_loop(const LoopFrame& l, const BlockOps& ops, const FusedElementwise& f,
                         size_t cut) {
  auto& b = l.b;
  const int n_in = static_cast<int>(f.in_avals().size());
  const size_t n_steps = f.steps().size(), n_slots = n_in + n_steps;
  std::vector<bool> carried(n_slots, false);
  auto before_cut = [&](int x) { return x >= n_in && x < n_in + static_cast<int>(cut); };
  for (size_t k = cut; k < n_steps; ++k) {
    for (int x : f.steps()[k].args) carried[x] = carried[x] || before_cut(x);
  }
  for (int o : f.outputs()) carried[o] = carried[o] || before_cut(o);
  llvm::LLVMContext& ctx = b.getContext();
  auto* prologue = llvm::BasicBlock::Create(ctx, "prologue", l.fn, l.loop);
  auto* epilogue = llvm::BasicBlock::Create(ctx, "epilogue", l.fn, l.done);
  b.CreateCondBr(b.CreateICmpSLT(l.begin, l.end), prologue, l.done);

  b.SetInsertPoint(prologue);
  Slots first(n_slots);
  ops.load_inputs(first, l.begin);
  ops.run_steps(first, 0, cut);
  llvm::Value* second = b.CreateAdd(l.begin, b.getInt64(l.block));
  llvm::BasicBlock* prologue_end = b.GetInsertBlock();
  b.CreateCondBr(b.CreateICmpSLT(second, l.end), l.loop, epilogue);

  b.SetInsertPoint(l.loop);
  llvm::PHINode* i = b.CreatePHI(b.getInt64Ty(), 2);  // the block started here
  i->addIncoming(second, prologue_end);
  Slots ahead(n_slots), behind(n_slots);
  std::vector<llvm::PHINode*> phis(n_slots, nullptr);
  for (size_t s = 0; s < n_slots; ++s) {
    if (!carried[s]) continue;
    phis[s] = b.CreatePHI(first[s]->getType(), 2);
    phis[s]->addIncoming(first[s], prologue_end);
    behind[s] = phis[s];
  }
  ops.load_inputs(ahead, i);
  ops.run_steps(ahead, 0, cut);
  llvm::Value* previous = b.CreateSub(i, b.getInt64(l.block));
  ops.load_inputs(behind, previous);
  ops.run_steps(behind, cut, n_steps);
  ops.store_outputs(behind, previous);
  llvm::Value* next = b.CreateAdd(i, b.getInt64(l.block));
  llvm::BasicBlock* loop_end = b.GetInsertBlock();
  for (size_t s = 0; s < n_slots; ++s) {
    if (carried[s]) phis[s]->addIncoming(ahead[s], loop_end);
  }
  i->addIncoming(next, loop_end);
  b.CreateCondBr(b.CreateICmpSLT(next, l.end), l.loop, epilogue);

  b.SetInsertPoint(epilogue);
  llvm::PHINode* last = b.CreatePHI(b.getInt64Ty(), 2);  // the block left to finish
  last->addIncoming(l.begin, prologue_end);
  last->addIncoming(i, loop_end);
  Slots tail(n_slots);
  for (size_t s = 0; s < n_slots; ++s) {
    if (!carried[s]) continue;
    llvm::PHINode* phi = b.CreatePHI(first[s]->getType(), 2);
    phi->addIncoming(first[s], prologue_end);
    phi->addIncoming(ahead[s], loop_end);
    tail[s] = phi;
  }
  ops.load_inputs(tail, last);
  ops.run_steps(tail, cut, n_steps);
  ops.store_outputs(tail, last);
  b.CreateBr(l.done);
}

}  // namespace graft::cpu::fusion
