#include "nn/activations.h"

#include <cmath>

#include "core/ops.h"

namespace graft::nn {

Array silu(const Array& x) { return x * sigmoid(x); }

Array gelu(const Array& x, bool approximate) {
  if (approximate) {
    const double c = std::sqrt(2.0 / M_PI);
    return 0.5 * x * (1.0 + tanh(c * (x + 0.044715 * x * x * x)));
  }
  return 0.5 * x * (1.0 + erf(x * (1.0 / std::sqrt(2.0))));
}

}  // namespace graft::nn
