#include "transforms/autodiff.h"

#include "core/lax/util.h"
#include "core/primitives/elementwise.h"

namespace graft {

Array stop_gradient(const Array& x) {
  detail::check_valid("stop_gradient", x);
  return bind1(std::make_shared<const StopGradient>(), {x});
}

namespace detail {

void check_differentiable(const char* op, const std::vector<Array>& leaves) {
  for (size_t i = 0; i < leaves.size(); ++i) {
    if (!leaves[i].valid()) fail(op, "argument leaf ", i, " is an empty Array handle");
    if (!is_floating(leaves[i].dtype())) {
      fail(op, "can only differentiate floating arrays, but argument leaf ", i, " is ",
           leaves[i].aval().str(), " (convert it with astype, or leave it out of argnums)");
    }
  }
}

void check_scalar_output(const char* op, const Array& out) {
  if (!out.valid()) fail(op, "the function returned an empty Array handle");
  if (out.ndim() != 0) {
    fail(op, "requires a scalar output, got ", out.aval().str(),
         " (use vjp or jacrev for non-scalar outputs)");
  }
  if (!is_floating(out.dtype())) {
    fail(op, "requires a floating output, got ", out.aval().str());
  }
}

}  // namespace detail

}  // namespace graft
