// Shape / dtype rule, parameters, cost and transform rules of eig (see eig.h).
#include "core/primitives/eig.h"

#include "core/error.h"
#include "core/interpreters/ad.h"
#include "core/lax/lax.h"
#include "core/primitives/shape_rules_util.h"

namespace graft {

std::vector<Aval> Eig::infer(const std::vector<Aval>& in) const {
  if (in.size() != 1) fail(name(), "takes 1 operand, got ", in.size());
  const Aval& a = in[0];
  if (a.dtype != DType::kF32 && a.dtype != DType::kF64 && !is_complex(a.dtype)) {
    fail(name(), "needs an f32, f64, c64 or c128 operand, got ", a.str());
  }
  const size_t r = a.shape.size();
  if (r < 2 || a.shape[r - 1] != a.shape[r - 2]) {
    fail(name(), "needs square matrices in the last two dims, got ", a.str());
  }
  const DType c = complex_dtype_for(a.dtype);
  Shape w(a.shape.begin(), a.shape.end() - 1);
  std::vector<Aval> out = {Aval{w, c}};
  if (right_) out.push_back(Aval{a.shape, c});
  return out;
}

std::string Eig::params() const {
  return str_cat("compute_left_eigenvectors=False compute_right_eigenvectors=",
                 right_ ? "True" : "False");
}

bool Eig::same_params(const Primitive& o) const {
  return o.id() == id() && static_cast<const Eig&>(o).right_ == right_;
}

Cost Eig::cost(const std::vector<Aval>& in, const std::vector<Aval>& out) const {
  Cost c = Primitive::cost(in, out);
  const Shape& s = in[0].shape;
  const double n = static_cast<double>(s.back());
  c.flops = 10.0 * n * n * n * static_cast<double>(numel(s)) / (n * n > 0 ? n * n : 1);
  return c;
}

// JAX's eig_jvp_rule: the eigenvalues' tangent is diag(V^-1 dA V) (eqn 4.60 of
// arXiv:1701.00392), with V^-1 dA solved in the real 2n x 2n embedding of the complex V
// ([[Vr, -Vi], [Vi, Vr]] [Yr; Yi] = [Re dA; Im dA]). Eigenvectors have no derivative, as in
// JAX.
std::vector<Array> Eig::jvp(const std::vector<Array>& primals, const std::vector<Array>& t,
                            const std::vector<Array>&) const {
  if (right_) {
    fail(name(),
         "the derivatives of eigenvectors are not implemented (as in JAX); eigvals "
         "is differentiable");
  }
  if (!t[0].valid()) return {Array()};
  const Array v = graft::bind(std::make_shared<const Eig>(true), {primals[0]})[1];
  const Array vr = real(v), vi = imag(v), da = t[0];
  const int64_t n = primals[0].shape().back();
  const int r = primals[0].ndim();
  Array m = concatenate({concatenate({vr, -vi}, r - 1), concatenate({vi, vr}, r - 1)}, r - 2);
  Array y = lu_solve(m, concatenate({real(da), imag(da)}, r - 2));
  Array yr = slice_axis(y, r - 2, 0, n), yi = slice_axis(y, r - 2, n, 2 * n);
  Array vtr = swapaxes(vr, -1, -2), vti = swapaxes(vi, -1, -2);
  return {complex(sum(yr * vtr - yi * vti, {-1}), sum(yr * vti + yi * vtr, {-1}))};
}

// The transpose of the (linear) jvp, by reverse mode over the tangent map.
std::vector<Array> Eig::vjp(const std::vector<Array>& primals, const std::vector<Array>& outputs,
                            const std::vector<Array>& ct) const {
  if (right_) {
    fail(name(),
         "the derivatives of eigenvectors are not implemented (as in JAX); eigvals "
         "is differentiable");
  }
  if (!ct[0].valid()) return {Array()};
  FlatFn tangent_map = [this, primals, outputs](const std::vector<Array>& ts) {
    return std::vector<Array>{jvp(primals, ts, outputs)[0]};
  };
  std::vector<Array> t0 = {shape_rules::zeros_of(primals[0].shape(), primals[0].dtype())};
  return detail::vjp_flat(tangent_map, t0).pullback({ct[0]});
}

Batched Eig::vmap(const std::vector<Array>& args, const std::vector<int>& dims) const {
  Array x = shape_rules::batch_to_front(args[0], dims[0], shape_rules::batch_size(args, dims));
  std::vector<Array> outs = graft::bind(std::make_shared<const Eig>(*this), {x});
  return {outs, std::vector<int>(outs.size(), 0)};
}

}  // namespace graft
