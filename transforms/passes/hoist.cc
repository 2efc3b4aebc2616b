// Loop-invariant code motion out of loop bodies (scan, while_loop; Primitive::loop_consts).
//
// In a body, a value is invariant when it is one of the loop's consts, a constant, or the
// result of an instruction without side effects whose inputs are all invariant. Invariant
// instructions move to the program around the loop, in body order, just before it; the ones
// whose results the body still reads become new consts of the loop. Size-inflating ones (more
// output than input bytes: a broadcast of a scalar, an iota) are XLA's exception: they stay in
// the body (where fusion reads a broadcast scalar as a scalar), and a copy goes out only when
// an instruction that moves reads them.
#include <vector>

#include "transforms/passes/passes.h"

namespace graft {

namespace {

int64_t bytes(const Aval& a) { return numel(a.shape) * dtype_size(a.dtype); }

// Moves body lc.body's invariants out of `loop` into `out`, appending the moved instructions
// to out.instrs and rewriting loop (its primitive and inputs). Returns whether anything moved.
bool hoist_from(Instr& loop, const LoopConsts& lc, Program& out) {
  const Program& b = *loop.prim->sub_programs().at(lc.body).program;
  const size_t n = b.avals.size();
  std::vector<bool> inv(n, false);
  std::vector<int> outer(n, -1);  // body value -> its value id in `out`, once there
  for (size_t k = 0; k < lc.count; ++k) {
    inv[b.inputs[k]] = true;
    outer[b.inputs[k]] = loop.in[lc.first_input + k];
  }
  for (int c : b.constants) inv[c] = true;
  std::vector<int> producer(n, -1);
  std::vector<bool> invariant(b.instrs.size(), false), moves(b.instrs.size(), false);
  bool any = false;
  for (size_t i = 0; i < b.instrs.size(); ++i) {
    const Instr& instr = b.instrs[i];
    for (int v : instr.out) producer[v] = static_cast<int>(i);
    bool all = !has_effects(*instr.prim);
    int64_t in_bytes = 0, out_bytes = 0;
    for (int v : instr.in) {
      all = all && inv[v];
      in_bytes += bytes(b.avals[v]);
    }
    for (int v : instr.out) out_bytes += bytes(b.avals[v]);
    if (!all) continue;
    invariant[i] = true;
    for (int v : instr.out) inv[v] = true;
    moves[i] = out_bytes <= in_bytes;
    any = any || moves[i];
  }
  if (!any) return false;
  // What goes out: the moving instructions and the inflating invariants they read (copies).
  std::vector<bool> copied(b.instrs.size(), false);
  for (size_t i = b.instrs.size(); i-- > 0;) {
    if (!moves[i] && !copied[i]) continue;
    copied[i] = true;
    for (int v : b.instrs[i].in) {
      if (producer[v] >= 0 && invariant[producer[v]]) copied[producer[v]] = true;
    }
  }
  for (size_t i = 0; i < b.instrs.size(); ++i) {
    if (!copied[i]) continue;
    Instr o;
    o.prim = b.instrs[i].prim;
    for (int v : b.instrs[i].in) {
      if (outer[v] < 0) outer[v] = out.add_constant(*b.constant(v));  // only constants left
      o.in.push_back(outer[v]);
    }
    for (int v : b.instrs[i].out) {
      outer[v] = out.add_value(b.avals[v]);
      o.out.push_back(outer[v]);
    }
    out.instrs.push_back(std::move(o));
  }
  // The body without the moved instructions; moved results it still reads become consts.
  Program nb = b;
  nb.instrs.clear();
  std::vector<bool> read(n, false);
  for (size_t i = 0; i < b.instrs.size(); ++i) {
    if (moves[i]) continue;
    nb.instrs.push_back(b.instrs[i]);
    for (int v : b.instrs[i].in) read[v] = true;
  }
  for (int v : b.outputs) read[v] = true;
  std::vector<int> new_inputs, new_outer;
  std::vector<Aval> added;
  for (size_t i = 0; i < b.instrs.size(); ++i) {
    if (!moves[i]) continue;
    for (int v : b.instrs[i].out) {
      if (!read[v]) continue;
      new_inputs.push_back(v);
      new_outer.push_back(outer[v]);
      added.push_back(b.avals[v]);
    }
  }
  nb.inputs.insert(nb.inputs.begin() + lc.count, new_inputs.begin(), new_inputs.end());
  nb = eliminate_dead_code(nb);  // inflating invariants only the moved ones read
  loop.prim =
      loop.prim->with_loop_consts(lc.body, std::make_shared<const Program>(std::move(nb)), added);
  const size_t at = lc.first_input + lc.count;
  loop.in.insert(loop.in.begin() + at, new_outer.begin(), new_outer.end());
  return true;
}

}  // namespace

Program hoist_loop_invariants(const Program& p) {
  Program out = p;
  out.instrs.clear();
  for (const Instr& instr : p.instrs) {
    Instr loop = instr;
    // Asked again after each body: hoisting into one body shifts the inputs of the next.
    for (size_t k = 0; k < loop.prim->loop_consts().size(); ++k) {
      hoist_from(loop, loop.prim->loop_consts()[k], out);
    }
    out.instrs.push_back(std::move(loop));
  }
  return out;
}

}  // namespace graft
