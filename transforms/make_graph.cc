#include "transforms/make_graph.h"

#include <sstream>
#include <unordered_map>

#include "core/primitive.h"

namespace graft {

namespace {

std::string typed(const std::string& name, const Aval& a) { return name + ":" + a.str(); }

bool is_literal(const Array& a) { return a.ndim() == 0 && !a.is_tracer() && a.is_evaluated(); }

}  // namespace

namespace detail {

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

}  // namespace detail

std::string print_graph(const Graph& g) {
  std::unordered_map<const Node*, std::vector<std::string>> names;
  int next = 0;
  auto fresh = [&]() { return detail::var_name(next++); };
  auto in_graph = [&](const Array& a) { return g.depends(a.node().get()); };

  // Constants first (like a jaxpr's constvars), in order of first use.
  std::vector<std::string> consts;
  auto note_const = [&](const Array& a) {
    if (in_graph(a) || is_literal(a)) return;
    auto& slot = names[a.node().get()];
    if (slot.empty()) slot.resize(a.node()->avals.size());
    if (!slot[a.output_index()].empty()) return;
    slot[a.output_index()] = fresh();
    consts.push_back(typed(slot[a.output_index()], a.aval()));
  };
  for (const Node* n : g.nodes)
    for (const Array& in : n->inputs) note_const(in);
  for (const Array& o : g.outputs) note_const(o);

  std::vector<std::string> ins;
  for (const Array& in : g.inputs) {
    std::string n = fresh();
    names[in.node().get()] = {n};
    ins.push_back(typed(n, in.aval()));
  }
  auto name_of = [&](const Array& a) {
    auto it = names.find(a.node().get());
    if (it != names.end() && !it->second[a.output_index()].empty()) {
      return it->second[a.output_index()];
    }
    return detail::literal(a);
  };
  std::ostringstream body;
  for (const Node* n : g.nodes) {
    std::vector<std::string> args;
    for (const Array& in : n->inputs) args.push_back(name_of(in));
    std::vector<std::string> outs;
    for (size_t i = 0; i < n->avals.size(); ++i) outs.push_back(fresh());
    names[n] = outs;
    body << "    ";
    for (size_t i = 0; i < outs.size(); ++i) body << (i ? " " : "") << typed(outs[i], n->avals[i]);
    body << " = " << n->primitive->name();
    std::string p = n->primitive->params();
    if (!p.empty()) body << "[" << p << "]";
    for (const std::string& a : args) body << " " << a;
    body << "\n";
  }
  std::ostringstream s;
  s << "{ lambda ";
  for (size_t i = 0; i < consts.size(); ++i) s << (i ? " " : "") << consts[i];
  s << (consts.empty() ? "; " : " ; ");
  for (size_t i = 0; i < ins.size(); ++i) s << (i ? " " : "") << ins[i];
  s << ". let\n" << body.str() << "  in (";
  for (size_t i = 0; i < g.outputs.size(); ++i) s << (i ? ", " : "") << name_of(g.outputs[i]);
  s << ") }";
  return s.str();
}

}  // namespace graft
