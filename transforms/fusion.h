// Elementwise fusion: fused_elementwise (core/primitives/fusion.h) with its transform rules,
// which un-fuse (replay the original primitives through the jvp / vjp / vmap drivers).
#pragma once

#include <memory>
#include <vector>

#include "core/primitives/fusion.h"
#include "core/ir/graph.h"

namespace graft {

// A fused_elementwise primitive that jvp, vjp (grad) and vmap can go through.
std::shared_ptr<const FusedElementwise> make_fused_elementwise(Shape shape, std::vector<Aval> in,
                                                               std::vector<FusedStep> steps,
                                                               std::vector<int> outputs);

// fn applied to args with its elementwise chains fused, as jit's pass fuses them (traces fn,
// runs the fusion pass, binds the result: works on tracers too, so transforms apply).
std::vector<Array> fuse_elementwise_call(const FlatFn& fn, const std::vector<Array>& args);

}  // namespace graft
