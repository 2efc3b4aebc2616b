// fma(a, b, c) with one rounding, for f32 or f64 arrays of one dtype (broadcasting like the
// binary ops), built from ordinary ops: jax.random needs it to reproduce XLA:CPU, which fuses
// uniform's affine step into an FMA, and lax's lgamma uses it for the same bits as JAX.
#pragma once

#include "core/array.h"

namespace graft::detail {

Array fma(const Array& a, const Array& b, const Array& c);

}  // namespace graft::detail
