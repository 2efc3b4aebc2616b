#include "transforms/linearize.h"

#include <unordered_set>

#include "core/error.h"
#include "core/interpreters/ad.h"

namespace graft::detail {
namespace {

// The concrete (non-tracer) values the tangent graph below `roots` reads: the residuals of
// the linearization. Tracer nodes are never evaluated, so their inputs can be read directly.
std::vector<Array> concrete_inputs_of(const std::vector<Array>& roots) {
  std::vector<Array> found;
  std::unordered_set<const Node*> seen;
  std::vector<Array> stack;
  for (const Array& r : roots) {
    if (r.valid() && r.is_tracer()) stack.push_back(r);
  }
  while (!stack.empty()) {
    Array a = stack.back();
    stack.pop_back();
    if (!seen.insert(a.node().get()).second) continue;
    for (const Array& in : a.node()->inputs) {
      if (in.is_tracer()) {
        stack.push_back(in);
      } else if (!in.is_evaluated() && seen.insert(in.node().get()).second) {
        found.push_back(in);
      }
    }
  }
  return found;
}

}  // namespace

Linearized linearize_flat(const FlatFn& fn, const std::vector<Array>& primals) {
  Linearized lin;
  FlatFn tangent_part = [&](const std::vector<Array>& tangents) {
    auto [outs, touts] = jvp_flat(fn, primals, tangents);
    // Evaluate the primal side now, in one pass, so the traced program holds it as constants.
    std::vector<Array> now = concrete_inputs_of(touts);
    for (const std::vector<Array>* vs : {&outs, &touts}) {
      for (const Array& o : *vs) {
        if (!o.is_tracer()) now.push_back(o);  // a zero tangent is concrete
      }
    }
    eval(now);
    lin.outputs = outs;
    return touts;
  };
  lin.tangent = trace_closed(tangent_part, avals_of_args(primals));
  return lin;
}

std::vector<Array> apply_linearized(const ClosedProgram& tangent,
                                    const std::vector<Array>& tangents) {
  const Program& p = *tangent.program;
  const size_t first = tangent.consts.size();
  for (size_t i = 0; i < tangents.size(); ++i) {
    if (!tangents[i].valid()) fail("linearize", "tangent leaf ", i, " is an empty Array handle");
    const Aval& want = p.avals[p.inputs[first + i]];
    if (tangents[i].shape() != want.shape || tangents[i].dtype() != want.dtype) {
      fail("linearize", "f_jvp called on tangent values inconsistent with the primal values: "
           "tangent leaf ", i, " is ", tangents[i].aval().str(), ", the primal ", want.str());
    }
  }
  return run_program(p, tangent.args(tangents));
}

}  // namespace graft::detail
