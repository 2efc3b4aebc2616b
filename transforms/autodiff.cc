#include "transforms/autodiff.h"

#include "core/ops_util.h"
#include "core/primitives/elementwise.h"
#include "transforms/vmap.h"

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

namespace {
// eye(n) reshaped to (n, *shape): the standard basis, one element per row.
Array basis(const Shape& shape, DType dtype) {
  int64_t n = numel(shape);
  Shape s{n};
  s.insert(s.end(), shape.begin(), shape.end());
  return reshape(eye(n, std::nullopt, 0, dtype), s);
}

// (n, *out) -> (*out, *in) where n = numel(in).
Array to_jacobian(const Array& stacked, const Shape& in_shape) {
  Array moved = moveaxis(stacked, 0, -1);
  Shape s(moved.shape().begin(), moved.shape().end() - 1);
  s.insert(s.end(), in_shape.begin(), in_shape.end());
  return reshape(moved, s);
}
}  // namespace

Array jacfwd_flat(const std::function<Array(const Array&)>& f, const Array& x) {
  detail::check_differentiable("jacfwd", {x});
  auto push = [&](const Array& t) { return jvp(f, std::tuple{x}, std::tuple{t}).second; };
  return to_jacobian(vmap(push)(basis(x.shape(), x.dtype())), x.shape());
}

Array jacrev_flat(const std::function<Array(const Array&)>& f, const Array& x) {
  detail::check_differentiable("jacrev", {x});
  auto [out, pullback] = vjp(f, x);
  if (!is_floating(out.dtype()))
    fail("jacrev", "requires a floating output, got ", out.aval().str());
  auto pull = [&](const Array& ct) { return std::get<0>(pullback(ct)); };
  Array rows = vmap(pull)(basis(out.shape(), out.dtype()));  // (numel(out), *x.shape)
  Shape s = out.shape();
  s.insert(s.end(), x.shape().begin(), x.shape().end());
  return reshape(rows, s);
}

}  // namespace graft
