// Elementwise fusion as a function transform: fn with its elementwise chains fused into
// fused_elementwise groups (core/primitives/fusion.h), as jit's pass fuses them.
#pragma once

#include <vector>

#include "core/ir/graph.h"
#include "core/primitives/fusion.h"

namespace graft {

// fn applied to args with its elementwise chains fused, as jit's pass fuses them (traces fn,
// runs the fusion pass, runs the result: works on tracers too, so transforms apply).
std::vector<Array> fuse_elementwise_call(const FlatFn& fn, const std::vector<Array>& args);

}  // namespace graft
