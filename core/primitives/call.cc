// The call primitives' parameters, checkpoint_name and the remat policies, and the table of
// saved residuals (the builders and rules are in the *_rules.cc files).
#include "core/primitives/call.h"

#include <sstream>

#include "absl/strings/str_cat.h"
#include "core/error.h"
#include "core/interpreters/ad.h"

namespace graft {

std::string CustomJvpCall::params() const {
  return absl::StrCat(CallPrimitive::params(), " num_consts=", num_consts_);
}

std::string CustomVjpCall::params() const {
  std::string s = absl::StrCat(CallPrimitive::params(), " num_consts=", num_consts_,
                               " num_res=", num_residuals());
  return residual_outputs_ ? s + " residual_outputs=True" : s;
}

std::string Remat::params() const {
  return absl::StrCat(CallPrimitive::params(), " policy=", policy_.name,
                      " saved=", out_avals().size() - num_main_);
}

std::string Remat::source(size_t o) const {
  if (o < num_main_) return "remat";
  const Program& b = body();
  for (const Instr& instr : b.instrs) {
    for (int v : instr.out) {
      if (v == b.outputs.at(o)) return "remat/" + std::string(instr.prim->name());
    }
  }
  return "remat";
}

std::vector<Aval> CheckpointName::infer(const std::vector<Aval>& in) const {
  if (in.size() != 1) fail(name(), "takes one array, got ", in.size());
  return in;
}

bool CheckpointName::same_params(const Primitive& o) const {
  auto* c = dynamic_cast<const CheckpointName*>(&o);
  return c != nullptr && c->name_ == name_;
}

Array checkpoint_name(const Array& x, const std::string& name) {
  if (!x.valid()) fail("checkpoint_name", "got an empty Array");
  return bind1(std::make_shared<const CheckpointName>(name), {x});
}

RematPolicy nothing_saveable() {
  return {"nothing_saveable", [](const Primitive&) { return false; }};
}
RematPolicy everything_saveable() {
  return {"everything_saveable", [](const Primitive&) { return true; }};
}
RematPolicy dots_saveable() {
  return {"dots_saveable", [](const Primitive& p) { return p.id() == PrimitiveId::kDotGeneral; }};
}
RematPolicy save_only_these_names(std::set<std::string> names) {
  std::string label = "save_only_these_names(";
  for (const std::string& n : names) label += (label.back() == '(' ? "" : ", ") + n;
  return {label + ")", [names](const Primitive& p) {
            auto* c = dynamic_cast<const CheckpointName*>(&p);
            return c != nullptr && names.count(c->mark()) > 0;
          }};
}

namespace detail {

ProgramPtr insert_inputs(const ProgramPtr& p, size_t at, const std::vector<Aval>& avals) {
  if (avals.empty()) return p;
  auto q = std::make_shared<Program>(*p);
  std::vector<int> ids;
  for (const Aval& a : avals) ids.push_back(q->add_value(a));
  q->inputs.insert(q->inputs.begin() + static_cast<std::ptrdiff_t>(at), ids.begin(), ids.end());
  return q;
}

std::vector<SavedResidual> saved_residuals_flat(const FlatFn& fn, const std::vector<Array>& args) {
  std::vector<Array> kept = vjp_residuals(fn, args);
  std::vector<SavedResidual> out;
  for (const Array& a : kept) {
    SavedResidual r;
    r.aval = a.aval();
    r.bytes = a.nbytes();
    for (size_t i = 0; i < args.size() && r.source.empty(); ++i) {
      if (args[i].node() == a.node()) r.source = "argument " + std::to_string(i);
    }
    if (r.source.empty()) {
      const Primitive* p = a.node()->primitive.get();
      auto* rm = dynamic_cast<const Remat*>(p);
      r.source = rm ? rm->source(a.output_index()) : p ? std::string(p->name()) : "constant";
    }
    out.push_back(r);
  }
  return out;
}

std::string format_residuals(const std::vector<SavedResidual>& res) {
  std::ostringstream os;
  int64_t total = 0;
  for (const SavedResidual& r : res) {
    os << r.aval.str() << "  " << r.bytes << " bytes  from " << r.source << "\n";
    total += r.bytes;
  }
  os << "total: " << res.size() << " residuals, " << total << " bytes\n";
  return os.str();
}

}  // namespace detail
}  // namespace graft
