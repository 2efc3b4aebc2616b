#include "core/primitives/fusion.h"

#include "absl/strings/str_cat.h"
#include "core/error.h"
#include "core/primitives/shape.h"

namespace graft {

bool fusion_supports(const Primitive& p, const std::vector<Aval>& in, const Aval& out) {
  auto ok = [](DType d) { return is_floating(d) || d == DType::kBool; };
  if (!ok(out.dtype)) return false;
  for (const Aval& a : in) {
    if (!ok(a.dtype)) return false;
  }
  return primitive_facts(p.id()).has(kFuse);  // the kFuse rows of core/primitives/list.h
}

FusedElementwise::FusedElementwise(Shape shape, std::vector<Aval> in, std::vector<FusedStep> steps,
                                   std::vector<int> outputs)
    : Primitive(PrimitiveId::kFusedElementwise),
      shape_(std::move(shape)),
      in_(std::move(in)),
      steps_(std::move(steps)),
      outputs_(std::move(outputs)) {
  int n = static_cast<int>(in_.size());
  for (size_t k = 0; k < steps_.size(); ++k) {
    for (int a : steps_[k].args) {
      if (a < 0 || a >= n + static_cast<int>(k)) fail(name(), "step ", k, " reads slot ", a);
    }
  }
  for (int o : outputs_) {
    if (o < n || o >= n + static_cast<int>(steps_.size())) fail(name(), "bad output slot ", o);
  }
}

std::vector<Aval> FusedElementwise::infer(const std::vector<Aval>& in) const {
  if (in.size() != in_.size()) fail(name(), "takes ", in_.size(), " operands, got ", in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    if (in[i].shape != in_[i].shape || in[i].dtype != in_[i].dtype) {
      fail(name(), "operand ", i, " must be ", in_[i].str(), ", got ", in[i].str());
    }
  }
  std::vector<Aval> out;
  for (int o : outputs_) out.push_back(steps_[o - in_.size()].aval);
  return out;
}

std::string FusedElementwise::params() const {
  // ops=(mul(0, 1), tanh(2)) outs=(3): operands are slots (inputs first, then steps).
  std::string s = "ops=(";
  for (size_t k = 0; k < steps_.size(); ++k) {
    absl::StrAppend(&s, k ? ", " : "", std::string(steps_[k].prim->name()));
    std::string p = steps_[k].prim->params();
    if (!p.empty()) absl::StrAppend(&s, "[", p, "]");
    s += "(";
    for (size_t a = 0; a < steps_[k].args.size(); ++a) {
      absl::StrAppend(&s, a ? ", " : "", steps_[k].args[a]);
    }
    s += ")";
  }
  s += ") outs=(";
  for (size_t i = 0; i < outputs_.size(); ++i) absl::StrAppend(&s, i ? ", " : "", outputs_[i]);
  return s + ")";
}

bool FusedElementwise::same_params(const Primitive& o) const {
  if (o.id() != id()) return false;
  auto& f = static_cast<const FusedElementwise&>(o);
  if (f.shape_ != shape_ || f.in_ != in_ || f.outputs_ != outputs_ ||
      f.steps_.size() != steps_.size()) {
    return false;
  }
  for (size_t k = 0; k < steps_.size(); ++k) {
    const FusedStep& a = steps_[k];
    const FusedStep& b = f.steps_[k];
    if (a.args != b.args || !(a.aval == b.aval) || !a.prim->same_params(*b.prim)) return false;
  }
  return true;
}

Cost FusedElementwise::cost(const std::vector<Aval>& in, const std::vector<Aval>& out) const {
  Cost c = Primitive::cost(in, out);  // bytes: only the group's inputs and outputs move
  c.flops = static_cast<double>(numel(shape_) * static_cast<int64_t>(steps_.size()));
  return c;
}

std::vector<Array> FusedElementwise::replay(const std::vector<Array>& inputs) const {
  std::vector<Array> slots;
  slots.reserve(inputs.size() + steps_.size());
  for (const Array& x : inputs) {
    if (x.ndim() == 0 && !shape_.empty()) {
      slots.push_back(
          bind1(std::make_shared<const BroadcastInDim>(shape_, std::vector<int>{}), {x}));
    } else {
      slots.push_back(x);
    }
  }
  for (const FusedStep& s : steps_) {
    std::vector<Array> args;
    for (int a : s.args) args.push_back(slots[a]);
    slots.push_back(bind1(s.prim, std::move(args)));
  }
  std::vector<Array> out;
  for (int o : outputs_) out.push_back(slots[o]);
  return out;
}

const void* FusedElementwise::backend_data(const std::function<const void*()>& make) const {
  std::call_once(backend_->flag, [&] { backend_->data = make(); });
  return backend_->data;
}

}  // namespace graft
