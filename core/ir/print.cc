// The IR printer, in make_jaxpr's format: constants (scalars inline as literals), inputs, one
// line per instruction with the primitive's params, outputs. Bodies (Primitive::sub_programs)
// are printed under their instruction, indented, with names continuing the outer counter so
// every name in the text is unique.
#include <cmath>
#include <complex>
#include <sstream>

#include "core/ir/name_scope.h"
#include "core/ir/program.h"

namespace graft {

std::string var_name(int i) {
  std::string s;
  do {
    s.insert(s.begin(), static_cast<char>('a' + i % 26));
    i /= 26;
  } while (i > 0);
  return s;
}

std::string literal(const Array& a) {
  std::ostringstream lit;
  if (is_complex(a.dtype())) {  // NumPy's form, e.g. (1+2j)
    std::complex<double> z = a.to_vector<std::complex<double>>()[0];
    lit << "(" << z.real() << (z.imag() < 0 ? "-" : "+") << std::abs(z.imag()) << "j)";
    return lit.str() + ":" + a.aval().str();
  }
  double v = a.to_vector<double>()[0];
  if (a.dtype() == DType::kBool) {
    lit << (v != 0 ? "True" : "False");
  } else if (is_floating(a.dtype())) {
    lit << v;
    if (lit.str().find_first_of(".en") == std::string::npos) lit << ".0";
  } else {
    lit << static_cast<int64_t>(v);
  }
  return lit.str() + ":" + a.aval().str();
}

namespace {

void print(const Program& p, const std::string& indent, int* next, std::ostringstream& s) {
  std::vector<std::string> names(p.avals.size());
  auto typed = [&](int v) { return names[v] + ":" + p.avals[v].str(); };
  s << "{ lambda ";
  bool any_const = false;
  for (size_t i = 0; i < p.constants.size(); ++i) {
    const Array& c = p.constant_values[i];
    if (c.ndim() == 0) {
      names[p.constants[i]] = literal(c);
      continue;
    }
    names[p.constants[i]] = var_name((*next)++);
    s << (any_const ? " " : "") << typed(p.constants[i]);
    any_const = true;
  }
  s << (any_const ? " ; " : "; ");
  for (size_t i = 0; i < p.inputs.size(); ++i) {
    names[p.inputs[i]] = var_name((*next)++);
    s << (i ? " " : "") << typed(p.inputs[i]);
  }
  s << ". let\n";
  for (const Instr& instr : p.instrs) {
    s << indent << "    ";
    for (size_t k = 0; k < instr.out.size(); ++k) {
      names[instr.out[k]] = var_name((*next)++);
      s << (k ? " " : "") << typed(instr.out[k]);
    }
    std::string scope = detail::name_scope_of(instr.prim.get());
    s << " = " << (scope.empty() ? "" : scope + "/") << instr.prim->name();
    std::string params = instr.prim->params();
    std::vector<SubProgram> subs = instr.prim->sub_programs();
    if (!params.empty() || !subs.empty()) s << "[" << params;
    for (const SubProgram& sub : subs) {
      s << "\n" << indent << "      " << sub.name << "=";
      print(*sub.program, indent + "      ", next, s);
    }
    if (!subs.empty()) s << "\n" << indent << "    ";
    if (!params.empty() || !subs.empty()) s << "]";
    for (int v : instr.in) s << " " << names[v];
    s << "\n";
  }
  s << indent << "  in (";
  for (size_t i = 0; i < p.outputs.size(); ++i) s << (i ? ", " : "") << names[p.outputs[i]];
  s << ") }";
}

}  // namespace

std::string print_program(const Program& p) {
  std::ostringstream s;
  int next = 0;
  print(p, "", &next, s);
  return s.str();
}

}  // namespace graft
