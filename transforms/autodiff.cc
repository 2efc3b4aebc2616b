#include "transforms/autodiff.h"

#include "core/lax/util.h"
#include "core/primitives/elementwise.h"

namespace graft {

Array stop_gradient(const Array& x) {
  detail::check_valid("stop_gradient", x);
  return bind1(std::make_shared<const StopGradient>(), {x});
}

namespace detail {

void check_differentiable(const char* op, const std::vector<Array>& leaves, bool allow_complex,
                          bool holomorphic) {
  for (size_t i = 0; i < leaves.size(); ++i) {
    if (!leaves[i].valid()) fail(op, "argument leaf ", i, " is an empty Array handle");
    const DType d = leaves[i].dtype();
    if (holomorphic && !is_complex(d)) {
      fail(op, "with holomorphic requires complex arguments, but argument leaf ", i, " is ",
           leaves[i].aval().str());
    }
    if (!is_floating(d) && !(allow_complex && is_complex(d))) {
      fail(op, "can only differentiate ", allow_complex ? "floating or complex" : "floating",
           " arrays, but argument leaf ", i, " is ", leaves[i].aval().str(),
           " (convert it with astype, or leave it out of argnums)");
    }
  }
}

void check_scalar_output(const char* op, const Array& out, bool holomorphic) {
  if (!out.valid()) fail(op, "the function returned an empty Array handle");
  if (out.ndim() != 0) {
    fail(op, "requires a scalar output, got ", out.aval().str(),
         " (use vjp or jacrev for non-scalar outputs)");
  }
  if (holomorphic && !is_complex(out.dtype())) {
    fail(op, "with holomorphic requires a complex output, got ", out.aval().str());
  }
  if (!holomorphic && !is_floating(out.dtype())) {
    fail(op, "requires a real floating output, got ", out.aval().str(),
         is_complex(out.dtype()) ? " (for a holomorphic function pass graft::holomorphic; "
                                   "else differentiate its real part)"
                                 : "");
  }
}

}  // namespace detail

}  // namespace graft
