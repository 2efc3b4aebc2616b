#include "transforms/fusion.h"

#include "core/ops.h"
#include "core/ir/ad.h"
#include "transforms/passes/passes.h"
#include "core/ir/batching.h"

namespace graft {
namespace {

class FusedElementwiseWithRules : public FusedElementwise {
 public:
  using FusedElementwise::FusedElementwise;

  FlatFn unfused() const {
    auto self = this;  // rules run while the primitive is alive (a node holds it)
    return [self](const std::vector<Array>& xs) { return self->replay(xs); };
  }

  std::vector<Array> jvp(const std::vector<Array>& primals, const std::vector<Array>& tangents,
                         const std::vector<Array>&) const override {
    std::vector<Array> ts = tangents;
    for (size_t i = 0; i < ts.size(); ++i) {
      if (!ts[i].valid()) ts[i] = zeros(primals[i].shape(), primals[i].dtype());
    }
    return detail::jvp_flat(unfused(), primals, ts).second;
  }

  std::vector<Array> vjp(const std::vector<Array>& primals, const std::vector<Array>&,
                         const std::vector<Array>& cts) const override {
    std::vector<Array> out = detail::vjp_flat(unfused(), primals).pullback(cts);
    for (size_t i = 0; i < out.size(); ++i) {
      if (!is_floating(primals[i].dtype())) out[i] = Array();
    }
    return out;
  }

  Batched vmap(const std::vector<Array>& args, const std::vector<int>& dims) const override {
    detail::VmapResult r = detail::vmap_flat(unfused(), args, dims, std::nullopt);
    return {r.outputs, r.dims};
  }
};

// Binds the program's instructions on args (which may be tracers).
std::vector<Array> bind_program(const Program& p, const std::vector<Array>& args) {
  std::vector<Array> env(p.avals.size());
  for (size_t i = 0; i < args.size(); ++i) env[p.inputs[i]] = args[i];
  for (size_t i = 0; i < p.constants.size(); ++i) env[p.constants[i]] = p.constant_values[i];
  for (const Instr& instr : p.instrs) {
    std::vector<Array> in;
    for (int v : instr.in) in.push_back(env[v]);
    std::vector<Array> out = bind(instr.prim, in);
    for (size_t k = 0; k < out.size(); ++k) env[instr.out[k]] = out[k];
  }
  std::vector<Array> outs;
  for (int v : p.outputs) outs.push_back(env[v]);
  return outs;
}

}  // namespace

std::shared_ptr<const FusedElementwise> make_fused_elementwise(Shape shape, std::vector<Aval> in,
                                                               std::vector<FusedStep> steps,
                                                               std::vector<int> outputs) {
  return std::make_shared<const FusedElementwiseWithRules>(std::move(shape), std::move(in),
                                                           std::move(steps), std::move(outputs));
}

std::vector<Array> fuse_elementwise_call(const FlatFn& fn, const std::vector<Array>& args) {
  std::vector<Aval> avals;
  for (const Array& a : args) avals.push_back(a.aval());
  std::optional<Program> p = lower(trace_avals(fn, avals));
  if (!p) return fn(args);  // closes over an outer trace's value
  return bind_program(eliminate_dead_code(fuse_elementwise(*p)), args);
}

}  // namespace graft
