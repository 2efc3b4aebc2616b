#include "core/primitives/control.h"

#include "absl/strings/str_cat.h"
#include "core/error.h"

namespace graft {

std::vector<Aval> ControlPrimitive::infer(const std::vector<Aval>& in) const {
  if (in.size() != in_avals_.size()) {
    fail(name(), "takes ", in_avals_.size(), " arrays, got ", in.size());
  }
  for (size_t i = 0; i < in.size(); ++i) {
    if (in[i].shape != in_avals_[i].shape || in[i].dtype != in_avals_[i].dtype) {
      fail(name(), "argument ", i, " is ", in[i].str(), " but the body was traced with ",
           in_avals_[i].str());
    }
  }
  return out_avals_;
}

bool ControlPrimitive::same_params(const Primitive& o) const {
  if (&o == this) return true;
  if (o.id() != id()) return false;
  const auto& c = static_cast<const ControlPrimitive&>(o);
  if (c.in_avals_ != in_avals_ || c.out_avals_ != out_avals_ || c.params() != params() ||
      c.bodies_.size() != bodies_.size()) {
    return false;
  }
  for (size_t i = 0; i < bodies_.size(); ++i) {
    if (!same_program(*bodies_[i], *c.bodies_[i])) return false;
  }
  return true;
}

const void* ControlPrimitive::backend_data(
    size_t i, const std::function<std::shared_ptr<const void>()>& make) const {
  Once& once = (*backend_)[i];
  std::call_once(once.flag, [&] { once.data = make(); });
  return once.data.get();
}

std::string ScanPrimitive::params() const {
  return absl::StrCat("length=", length_, " reverse=", reverse_ ? "true" : "false",
                      " num_consts=", num_consts_, " num_carry=", num_carry_);
}

std::string CondPrimitive::params() const { return absl::StrCat("branches=", num_branches()); }

std::vector<SubProgram> CondPrimitive::sub_programs() const {
  std::vector<SubProgram> out;
  for (size_t k = 0; k < num_branches(); ++k) {
    out.push_back({absl::StrCat("branch", k), bodies()[k]});
  }
  return out;
}

std::string WhilePrimitive::params() const {
  return absl::StrCat("cond_consts=", num_cond_consts_, " body_consts=", num_body_consts_);
}

void ScanPrimitive::infer_vma(const std::vector<Aval>& in, std::vector<Aval>& out) const {
  Primitive::infer_vma(in, out);
  const Program& b = body();
  for (int k = 0; k < num_carry_; ++k) {
    out[k].vma |= b.avals[b.inputs[num_consts_ + k]].vma | in[num_consts_ + k].vma;
  }
}

void CondPrimitive::infer_vma(const std::vector<Aval>& in, std::vector<Aval>& out) const {
  Primitive::infer_vma(in, out);
  for (Aval& a : out) a.vma |= in[0].vma;
}

void WhilePrimitive::infer_vma(const std::vector<Aval>& in, std::vector<Aval>& out) const {
  Primitive::infer_vma(in, out);
  const Program& c = *bodies()[0];
  const Program& b = *bodies()[1];
  const AxisMask cond = c.avals[c.outputs[0]].vma;
  const size_t first = static_cast<size_t>(num_cond_consts_ + num_body_consts_);
  for (size_t k = 0; k < out.size(); ++k) {
    out[k].vma |= b.avals[b.inputs[num_body_consts_ + k]].vma | in[first + k].vma | cond;
  }
}

}  // namespace graft
