// The passes at every level: bodies of control-flow primitives are programs like any other,
// so optimize runs itself on each (map_bodies) before the level that holds them.
#include <memory>
#include <unordered_map>
#include <vector>

#include "transforms/passes/passes.h"

namespace graft {

bool has_effects(const Primitive& p) {
  if (p.has_side_effects()) return true;
  for (const SubProgram& sub : p.sub_programs()) {
    for (const Instr& instr : sub.program->instrs) {
      if (has_effects(*instr.prim)) return true;
    }
  }
  return false;
}

Program map_bodies(const Program& p, const std::function<Program(const Program&)>& f) {
  Program out = p;
  // A body several instructions share (one traced function bound twice) is rewritten once.
  std::unordered_map<const Program*, std::shared_ptr<const Program>> done;
  for (Instr& instr : out.instrs) {
    // A fused group's body stays as the fusion pass built it: passes must not rewrite it
    // (simplification could leave instructions the fused kernels do not run, and fusion
    // would nest groups).
    if (instr.prim->id() == PrimitiveId::kFusedElementwise ||
        instr.prim->id() == PrimitiveId::kFusedReduce) {
      continue;
    }
    std::vector<SubProgram> subs = instr.prim->sub_programs();
    if (subs.empty()) continue;
    std::vector<std::shared_ptr<const Program>> bodies;
    for (const SubProgram& sub : subs) {
      std::shared_ptr<const Program>& slot = done[sub.program.get()];
      if (slot == nullptr) slot = std::make_shared<const Program>(f(*sub.program));
      bodies.push_back(slot);
    }
    instr.prim = instr.prim->with_sub_programs(std::move(bodies));
  }
  return out;
}

namespace {

// Everything but fusion. Bodies are simplified before their invariants are hoisted (so what
// moves out is already folded and deduplicated), and hoisting comes before this level's
// folding and CSE (so hoisted values fold, and merge with equal ones already here). Fusion
// waits for the second walk: a fused group mixing invariant and varying values could not
// be hoisted.
Program simplify_all(const Program& p) {
  Program q = map_bodies(p, simplify_all);
  q = hoist_loop_invariants(q);
  q = fold_constants(q);
  q = simplify_algebra(q);
  q = eliminate_common_subexpressions(q);
  return eliminate_dead_code(q);  // before fusion, so that dead users do not split groups
}

Program fuse_all(const Program& p) {
  return eliminate_dead_code(fuse_elementwise(map_bodies(p, fuse_all)));
}

}  // namespace

Program optimize(const Program& p) { return fuse_all(simplify_all(p)); }

}  // namespace graft
