#include "core/primitives/fusion.h"

#include "absl/strings/str_cat.h"
#include "core/error.h"
#include "core/primitives/shape.h"

namespace graft {
namespace {

const Program& checked(PrimitiveId id, const ProgramPtr& body) {
  if (body == nullptr) fail(kPrimitiveNames[static_cast<int>(id)], "needs a body");
  return *body;
}

// The body input a broadcast_in_dim reads, or -1.
int broadcast_source(const Program& b, const Instr& instr) {
  if (instr.prim->id() != PrimitiveId::kBroadcastInDim || instr.in.size() != 1) return -1;
  for (size_t i = 0; i < b.inputs.size(); ++i) {
    if (b.inputs[i] == instr.in[0]) return static_cast<int>(i);
  }
  return -1;
}

}  // namespace

std::optional<FusedRead> broadcast_read(const Shape& from, const Shape& to,
                                        const std::vector<int>& dims) {
  if (dims.size() != from.size()) return std::nullopt;
  int first = -1, last = -1;  // the run of to's dims that from's non-unit dims fill
  for (size_t k = 0; k < from.size(); ++k) {
    if (from[k] == 1) continue;
    const int d = dims[k];
    if (d < 0 || d >= static_cast<int>(to.size()) || to[d] != from[k]) return std::nullopt;
    if (first >= 0 && d != last + 1) return std::nullopt;
    if (first < 0) first = d;
    last = d;
  }
  FusedRead r{1, numel(from)};
  if (first < 0) return r;  // one value
  for (size_t d = last + 1; d < to.size(); ++d) r.div *= to[d];
  return r;
}

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

FusionPrimitive::FusionPrimitive(PrimitiveId id, ProgramPtr body)
    : ControlPrimitive(id, {body}, checked(id, body).input_avals(),
                       checked(id, body).output_avals()) {}

FusedElementwise::FusedElementwise(ProgramPtr body, Shape shape)
    : FusionPrimitive(PrimitiveId::kFusedElementwise, body), shape_(std::move(shape)) {
  const Program& b = *body;
  const int n_in = static_cast<int>(b.inputs.size());
  if (!b.constants.empty()) fail(name(), "body has constants (they must be inputs)");
  std::vector<int> slot(b.avals.size(), -1);  // body value -> slot
  const int64_t n = numel(shape_);
  std::vector<bool> broadcast(n_in, false);
  for (int i = 0; i < n_in; ++i) {
    slot[b.inputs[i]] = i;
    reads_.push_back(FusedRead{1, n});
  }
  for (const Instr& instr : b.instrs) {
    const int i = broadcast_source(b, instr);
    if (i >= 0) {
      const auto& bc = static_cast<const BroadcastInDim&>(*instr.prim);
      const Aval &in = b.avals[instr.in[0]], &out = b.avals[instr.out.at(0)];
      std::optional<FusedRead> r = broadcast_read(in.shape, shape_, bc.dims());
      if (out.shape != shape_ || out.dtype != in.dtype || !r) {
        fail(name(), "input ", i, " (", in.str(), ") is broadcast to ", out.str(),
             ", not read in place over ", shape_str(shape_));
      }
      if (broadcast[i] && (reads_[i].div != r->div || reads_[i].size != r->size)) {
        fail(name(), "input ", i, " is broadcast in two ways");
      }
      broadcast[i] = true;
      reads_[i] = *r;
      slot[instr.out[0]] = i;
      continue;
    }
    std::vector<Aval> in;
    for (int v : instr.in) in.push_back(b.avals[v]);
    bool ok = instr.out.size() == 1 && fusion_supports(*instr.prim, in, b.avals[instr.out[0]]) &&
              b.avals[instr.out[0]].shape == shape_;
    for (const Aval& a : in) ok = ok && a.shape == shape_;
    if (!ok) {
      fail(name(), "body instruction ", instr.prim->name(), " is not elementwise over ",
           shape_str(shape_), " (only fusible ops and broadcasts of inputs)");
    }
    FusedStep s{instr.prim, {}, b.avals[instr.out[0]]};
    for (int v : instr.in) s.args.push_back(slot[v]);
    slot[instr.out[0]] = n_in + static_cast<int>(steps_.size());
    steps_.push_back(std::move(s));
  }
  for (int i = 0; i < n_in; ++i) {
    const Aval& a = b.avals[b.inputs[i]];
    if (a.shape != shape_ && !broadcast[i]) {
      fail(name(), "input ", i, " is ", a.str(), ", not of shape ", shape_str(shape_),
           " nor broadcast to it");
    }
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
