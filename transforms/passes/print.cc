// The IR printer, in make_graph's format: constants (scalars inline as literals), inputs,
// one line per instruction with the primitive's params, outputs.
#include <sstream>

#include "transforms/make_graph.h"
#include "transforms/passes/program.h"

namespace graft {

using detail::literal;
using detail::var_name;

std::string print_program(const Program& p) {
  std::vector<std::string> names(p.avals.size());
  int next = 0;
  auto typed = [&](int v) { return names[v] + ":" + p.avals[v].str(); };
  std::ostringstream s;
  s << "{ lambda ";
  bool any_const = false;
  for (size_t i = 0; i < p.constants.size(); ++i) {
    const Array& c = p.constant_values[i];
    if (c.ndim() == 0) {
      names[p.constants[i]] = literal(c);
      continue;
    }
    names[p.constants[i]] = var_name(next++);
    s << (any_const ? " " : "") << typed(p.constants[i]);
    any_const = true;
  }
  s << (any_const ? " ; " : "; ");
  for (size_t i = 0; i < p.inputs.size(); ++i) {
    names[p.inputs[i]] = var_name(next++);
    s << (i ? " " : "") << typed(p.inputs[i]);
  }
  s << ". let\n";
  for (const Instr& instr : p.instrs) {
    s << "    ";
    for (size_t k = 0; k < instr.out.size(); ++k) {
      names[instr.out[k]] = var_name(next++);
      s << (k ? " " : "") << typed(instr.out[k]);
    }
    s << " = " << instr.prim->name();
    std::string params = instr.prim->params();
    if (!params.empty()) s << "[" << params << "]";
    for (int v : instr.in) s << " " << names[v];
    s << "\n";
  }
  s << "  in (";
  for (size_t i = 0; i < p.outputs.size(); ++i) s << (i ? ", " : "") << names[p.outputs[i]];
  s << ") }";
  return s.str();
}

}  // namespace graft
