// The rules of the fusion primitives (fused_elementwise, fused_reduce): each un-fuses, running
// its body (the original primitives) through the driver. Under jit the result is fused again
// by the fusion pass.
//   jvp: the body's jvp (missing tangents are zeros).
//   vjp: the body's vjp; integer and bool inputs get no cotangent.
//   vmap: the body vmapped.
//   with_sub_programs: the same primitive over a body of the same signature.
#include "core/error.h"
#include "core/interpreters/ad.h"
#include "core/interpreters/batching.h"
#include "core/lax/lax.h"
#include "core/primitives/control_util.h"
#include "core/primitives/fused_reduce.h"
#include "core/primitives/fusion.h"

namespace graft {

std::vector<Array> FusionPrimitive::jvp(const std::vector<Array>& primals,
                                        const std::vector<Array>& tangents,
                                        const std::vector<Array>&) const {
  std::vector<Array> ts = tangents;
  for (size_t i = 0; i < ts.size(); ++i) {
    if (!ts[i].valid()) ts[i] = zeros(primals[i].shape(), primals[i].dtype());
  }
  return detail::jvp_program(body(), primals, ts).second;
}

std::vector<Array> FusionPrimitive::vjp(const std::vector<Array>& primals,
                                        const std::vector<Array>&,
                                        const std::vector<Array>& cts) const {
  std::vector<Array> out = detail::vjp_program(bodies()[0], primals).pullback(cts);
  for (size_t i = 0; i < out.size(); ++i) {
    if (!is_floating(primals[i].dtype())) out[i] = Array();
  }
  return out;
}

Batched FusionPrimitive::vmap(const std::vector<Array>& args, const std::vector<int>& dims) const {
  detail::VmapResult r = detail::vmap_program(body(), args, dims, detail::batch_size(args, dims));
  return {r.outputs, r.dims};
}

std::shared_ptr<const Primitive> FusedElementwise::with_sub_programs(
    std::vector<ProgramPtr> b) const {
  if (b.size() != 1) fail(name(), "has one body, got ", b.size());
  detail::check_same_signature(name(), body(), *b[0]);
  return make_fused_elementwise(std::move(b[0]), shape_);
}

std::shared_ptr<const Primitive> FusedReduce::with_sub_programs(std::vector<ProgramPtr> b) const {
  if (b.size() != 1) fail(name(), "has one body, got ", b.size());
  detail::check_same_signature(name(), body(), *b[0]);
  return make_fused_reduce(std::move(b[0]));
}

}  // namespace graft
