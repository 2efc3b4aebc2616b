#include "transforms/autodiff.h"

#include "core/ops_util.h"
#include "core/primitives/elementwise.h"
#include "transforms/vmap.h"
#include "core/ir/batching.h"

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

Shape concat(const Shape& a, const Shape& b) {
  Shape s = a;
  s.insert(s.end(), b.begin(), b.end());
  return s;
}
}  // namespace

namespace detail {

std::vector<Array> jacfwd_leaves(const LeavesToArray& f, const std::vector<Array>& leaves) {
  check_differentiable("jacfwd", leaves);
  FlatFn fn = [&f](const std::vector<Array>& ls) { return std::vector<Array>{f(ls)}; };
  std::vector<Array> out;
  for (size_t i = 0; i < leaves.size(); ++i) {
    // Tangent basis for leaf i; the other leaves' tangents are symbolic zeros.
    FlatFn push = [&](const std::vector<Array>& t) {
      std::vector<Array> ts(leaves.size());
      ts[i] = t[0];
      return jvp_flat(fn, leaves, ts).second;
    };
    const Array& x = leaves[i];
    VmapResult r = vmap_flat(push, {basis(x.shape(), x.dtype())}, {0}, std::nullopt);
    Array stacked = move_batch_axis(r.outputs[0], r.dims[0], 0, r.axis_size);  // (n, *out)
    Shape out_shape(stacked.shape().begin() + 1, stacked.shape().end());
    out.push_back(reshape(moveaxis(stacked, 0, -1), concat(out_shape, x.shape())));
  }
  return out;
}

std::vector<Array> jacrev_leaves(const LeavesToArray& f, const std::vector<Array>& leaves) {
  check_differentiable("jacrev", leaves);
  FlatFn fn = [&f](const std::vector<Array>& ls) { return std::vector<Array>{f(ls)}; };
  VjpResult v = vjp_flat(fn, leaves);
  const Array& y = v.outputs[0];
  if (!is_floating(y.dtype())) fail("jacrev", "requires a floating output, got ", y.aval().str());
  FlatFn pull = [&v](const std::vector<Array>& ct) { return v.pullback(ct); };
  VmapResult r = vmap_flat(pull, {basis(y.shape(), y.dtype())}, {0}, std::nullopt);
  std::vector<Array> out;
  for (size_t i = 0; i < leaves.size(); ++i) {
    Array rows = move_batch_axis(r.outputs[i], r.dims[i], 0, r.axis_size);  // (m, *leaf)
    out.push_back(reshape(rows, concat(y.shape(), leaves[i].shape())));
  }
  return out;
}

}  // namespace detail
}  // namespace graft
