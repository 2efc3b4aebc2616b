#include "core/primitives/fusion.h"

#include "absl/strings/str_cat.h"
#include "core/error.h"
#include "core/primitives/shape.h"

namespace graft {
namespace {

constexpr const char* kName = "fused_elementwise";

const Program& checked(const ProgramPtr& body) {
  if (body == nullptr) fail(kName, "needs a body");
  return *body;
}
std::vector<Aval> input_avals(const ProgramPtr& body) { return checked(body).input_avals(); }
std::vector<Aval> output_avals(const ProgramPtr& body) { return checked(body).output_avals(); }

// A broadcast_in_dim of a rank-0 body input to the group's shape: the kernels read that input
// as a scalar, so the instruction is no step.
bool scalar_broadcast(const Program& b, const Instr& instr, const Shape& shape, int n_in) {
  if (instr.prim->id() != PrimitiveId::kBroadcastInDim || instr.in.size() != 1) return false;
  const int x = instr.in[0];
  bool is_input = false;
  for (int i = 0; i < n_in; ++i) is_input = is_input || b.inputs[i] == x;
  const Aval &in = b.avals[x], &out = b.avals[instr.out.at(0)];
  return is_input && in.shape.empty() && out.shape == shape && out.dtype == in.dtype;
}

}  // namespace

bool rounds_to_half(PrimitiveId op, DType operand, DType result) {
  const bool half = result == DType::kF16 || result == DType::kBF16;
  return half && op == PrimitiveId::kConvertElementType && operand != result;
}

bool fusion_supports(const Primitive& p, const std::vector<Aval>& in, const Aval& out) {
  // fp8 values stay out: the fused loops compute in the operands' dtypes.
  auto ok = [](DType d) { return (is_floating(d) && !is_float8(d)) || d == DType::kBool; };
  if (!ok(out.dtype)) return false;
  for (const Aval& a : in) {
    if (!ok(a.dtype)) return false;
  }
  return primitive_facts(p.id()).has(kFuse);  // the kFuse rows of core/primitives/list.h
}

FusedElementwise::FusedElementwise(ProgramPtr body, Shape shape)
    : ControlPrimitive(PrimitiveId::kFusedElementwise, {body}, input_avals(body),
                       output_avals(body)),
      shape_(std::move(shape)) {
  const Program& b = *body;
  const int n_in = static_cast<int>(b.inputs.size());
  if (!b.constants.empty()) fail(name(), "body has constants (they must be inputs)");
  std::vector<int> slot(b.avals.size(), -1);  // body value -> slot
  for (int i = 0; i < n_in; ++i) {
    const Aval& a = b.avals[b.inputs[i]];
    if (a.shape != shape_ && !a.shape.empty()) {
      fail(name(), "input ", i, " is ", a.str(), ", not of shape ", shape_str(shape_),
           " or a scalar");
    }
    slot[b.inputs[i]] = i;
  }
  for (const Instr& instr : b.instrs) {
    if (instr.out.size() == 1 && scalar_broadcast(b, instr, shape_, n_in)) {
      slot[instr.out[0]] = slot[instr.in[0]];
      continue;
    }
    std::vector<Aval> in;
    for (int v : instr.in) in.push_back(b.avals[v]);
    bool ok = instr.out.size() == 1 && fusion_supports(*instr.prim, in, b.avals[instr.out[0]]) &&
              b.avals[instr.out[0]].shape == shape_;
    for (const Aval& a : in) ok = ok && a.shape == shape_;
    if (!ok) {
      fail(name(), "body instruction ", instr.prim->name(), " is not elementwise over ",
           shape_str(shape_), " (only fusible ops and broadcasts of scalar inputs)");
    }
    FusedStep s{instr.prim, {}, b.avals[instr.out[0]]};
    for (int v : instr.in) s.args.push_back(slot[v]);
    slot[instr.out[0]] = n_in + static_cast<int>(steps_.size());
    steps_.push_back(std::move(s));
  }
  for (int v : b.outputs) {
    const int o = slot[v];
    if (o < n_in) fail(name(), "body output must be computed by a step, not an input");
    for (int seen : outputs_) {
      if (seen == o) fail(name(), "body returns one value twice");
    }
    outputs_.push_back(o);
  }
}

Cost FusedElementwise::cost(const std::vector<Aval>& in, const std::vector<Aval>& out) const {
  Cost c = Primitive::cost(in, out);  // bytes: only the group's inputs and outputs move
  c.flops = static_cast<double>(numel(shape_) * static_cast<int64_t>(steps_.size()));
  return c;
}

std::shared_ptr<const FusedElementwise> make_fused_elementwise(ProgramPtr body, Shape shape) {
  return std::make_shared<const FusedElementwise>(std::move(body), std::move(shape));
}

}  // namespace graft
