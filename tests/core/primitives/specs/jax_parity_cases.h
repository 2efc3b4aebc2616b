// Op-spec rows with references from running JAX (tests/core/primitives/specs/jax_parity_cases.cc), added
// by the owning primitive's spec: floor_divide to Div's, remainder to Rem's, clip and promotion to
// ConvertElementType's, cumsum to Cumsum's.
#pragma once

#include "tests/core/primitives/specs/spec.h"

namespace graft::spec {

void add_jax_floor_divide_cases(Spec& s);
void add_jax_remainder_cases(Spec& s);
void add_jax_promotion_cases(Spec& s);
void add_jax_cumsum_cases(Spec& s);

}  // namespace graft::spec
