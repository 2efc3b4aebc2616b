// The Monte Carlo estimate of pi that examples/basics prints, as a function so that
// tests/examples/basics checks the very computation against JAX's.
#pragma once

#include <cstdint>

#include "core/array.h"

namespace graft::examples {

// 4 times the fraction of n points uniform in the unit square that fall inside the unit
// circle (an f32 scalar). The points come from the first of random::split(key, 4) (basics.cc
// gives the other three to its least-squares problem), as f32 [n, 2].
Array monte_carlo_pi(const Array& key, int64_t n);

}  // namespace graft::examples
