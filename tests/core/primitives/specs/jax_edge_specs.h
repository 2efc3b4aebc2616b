// Op-spec rows for float edge cases where JAX's results are exact (signed zeros, infinities,
// NaN, correctly rounded sqrt, sort ties), appended to the specs of sqrt, rsqrt, sign, max,
// min and sort. Their values were made by running JAX 0.10.2 on CPU (see jax_edge_specs.cc).
#pragma once

#include <vector>

#include "tests/core/primitives/specs/spec.h"

namespace graft::spec {

std::vector<Case> jax_edge_cases(PrimitiveId id);

// s with jax_edge_cases(s.prim) appended.
Spec with_jax_edges(Spec s);

}  // namespace graft::spec
