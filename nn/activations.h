// Activation functions (jax.nn names). Elementwise, in the input's dtype.
#pragma once

#include "core/array.h"

namespace graft::nn {

// x * sigmoid(x) (a.k.a. swish), the gate of SwiGLU.
Array silu(const Array& x);
// approximate = true: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) (jax.nn.gelu's
// default); false: the exact 0.5 x (1 + erf(x / sqrt(2))).
Array gelu(const Array& x, bool approximate = true);

}  // namespace graft::nn
