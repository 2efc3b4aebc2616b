// Transform rules of the factorizations, after JAX's (jax/_src/lax/linalg.py):
//   jvp     JAX's forward rules, written with graft's ops on the primal outputs;
//   vjp     triangular_solve: its transpose, written with triangular_solve and matmul; every
//           other factorization: the transpose of its jvp (linear in the tangents, and made
//           of ops that have vjp rules), taken by reverse mode over the tangent map, as JAX
//           transposes linear jvps;
//   vmap    the batched axis moved to the front (the kernels loop over leading dims).
// Derivatives JAX leaves undefined are errors here too: qr with full_matrices on a non-square
// matrix (or m < n), svd with full_matrices and compute_uv.
#include "core/interpreters/ad.h"
#include "core/lax/lax.h"
#include "core/lax/util.h"
#include "core/primitives/decomp.h"
#include "core/primitives/shape_rules_util.h"

namespace graft {

namespace {

Array T(const Array& x) { return swapaxes(x, -1, -2); }

Array tsolve(const Array& a, const Array& b, bool left_side, bool lower, bool transpose_a,
             bool unit_diagonal = false) {
  return apply<TriangularSolve>({a, b},
                                TriangularSolveParams{left_side, lower, transpose_a, unit_diagonal});
}

Array eye_as(int64_t n, const Array& like) { return eye(n, std::nullopt, 0, like.dtype()); }

// The vjp of a primitive whose jvp is linear in the tangents: reverse mode over the tangent
// map t -> jvp(primals, t), at zero tangents (the map is linear, so any point serves).
std::vector<Array> transpose_jvp(const Primitive& p, const std::vector<Array>& primals,
                                 const std::vector<Array>& outputs, const std::vector<Array>& cts) {
  std::vector<Array> float_outs;
  std::vector<Array> used_cts;
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (!is_floating(outputs[i].dtype())) continue;
    float_outs.push_back(outputs[i]);
    used_cts.push_back(cts[i]);
  }
  bool any = false;
  for (const Array& c : used_cts) any = any || c.valid();
  if (!any) return std::vector<Array>(primals.size());
  FlatFn tangent_map = [&p, primals, outputs](const std::vector<Array>& ts) {
    std::vector<Array> touts = p.jvp(primals, ts, outputs);
    std::vector<Array> r;
    for (size_t i = 0; i < outputs.size(); ++i) {
      if (!is_floating(outputs[i].dtype())) continue;
      r.push_back(shape_rules::or_zeros(touts[i], outputs[i]));
    }
    return r;
  };
  std::vector<Array> t0;
  for (const Array& x : primals) t0.push_back(shape_rules::zeros_of(x.shape(), x.dtype()));
  return detail::vjp_flat(tangent_map, t0).pullback(used_cts);
}

// Every operand's batch axis at the front (broadcast where unbatched), for one primitive.
Batched batch_front(std::shared_ptr<const Primitive> p, const std::vector<Array>& args,
                    const std::vector<int>& dims) {
  const int64_t b = shape_rules::batch_size(args, dims);
  std::vector<Array> front;
  for (size_t i = 0; i < args.size(); ++i) {
    front.push_back(shape_rules::batch_to_front(args[i], dims[i], b));
  }
  std::vector<Array> outs = graft::bind(std::move(p), front);
  return {outs, std::vector<int>(outs.size(), 0)};
}

}  // namespace

// ---- cholesky: L' = L phi(L^-1 A' L^-T), phi = the lower triangle with its diagonal halved.
std::vector<Array> Cholesky::jvp(const std::vector<Array>&, const std::vector<Array>& t,
                                 const std::vector<Array>& outputs) const {
  if (!t[0].valid()) return {Array()};
  const Array& l = outputs[0];
  const int64_t n = l.shape().back();
  Array tmp = tsolve(l, t[0], /*left_side=*/false, /*lower=*/true, /*transpose_a=*/true);
  Array inner = tsolve(l, tmp, true, true, false);
  Array phi = tril(inner) * (1.0 - 0.5 * eye_as(n, l));
  return {matmul(l, phi)};
}

std::vector<Array> Cholesky::vjp(const std::vector<Array>& primals,
                                 const std::vector<Array>& outputs,
                                 const std::vector<Array>& cts) const {
  return transpose_jvp(*this, primals, outputs, cts);
}

Batched Cholesky::vmap(const std::vector<Array>& args, const std::vector<int>& dims) const {
  return batch_front(std::make_shared<const Cholesky>(*this), args, dims);
}

// ---- qr (JAX's qr_jvp_rule, real case).
std::vector<Array> Qr::jvp(const std::vector<Array>& primals, const std::vector<Array>& t,
                           const std::vector<Array>& outputs) const {
  const Shape& s = primals[0].shape();
  const int64_t m = s[s.size() - 2], n = s.back();
  if (m < n || (full_matrices_ && m != n)) {
    fail(name(), "the derivative is not implemented for m < n or for full_matrices=True with "
                 "m != n (as in JAX), got ",
         primals[0].aval().str());
  }
  if (!t[0].valid()) return {Array(), Array()};
  const Array &q = outputs[0], &r = outputs[1];
  Array dx_rinv = tsolve(r, t[0], /*left_side=*/false, /*lower=*/false, false);
  Array qt_dx_rinv = matmul(T(q), dx_rinv);
  Array low = tril(qt_dx_rinv, -1);
  Array d_o = low - T(low);  // skew-symmetric
  Array dq = matmul(q, d_o - qt_dx_rinv) + dx_rinv;
  Array dr = matmul(qt_dx_rinv - d_o, r);
  return {dq, dr};
}

std::vector<Array> Qr::vjp(const std::vector<Array>& primals, const std::vector<Array>& outputs,
                           const std::vector<Array>& cts) const {
  return transpose_jvp(*this, primals, outputs, cts);
}

Batched Qr::vmap(const std::vector<Array>& args, const std::vector<int>& dims) const {
  return batch_front(std::make_shared<const Qr>(*this), args, dims);
}

// ---- svd (JAX's _svd_jvp_rule, real case). The reduced factors are recomputed when the
// application kept only s or the full matrices.
std::vector<Array> Svd::jvp(const std::vector<Array>& primals, const std::vector<Array>& t,
                            const std::vector<Array>& outputs) const {
  if (compute_uv_ && full_matrices_) {
    fail(name(), "the derivative is not implemented for full_matrices=True with compute_uv "
                 "(as in JAX); use full_matrices=False");
  }
  std::vector<Array> red = compute_uv_ ? outputs : graft::bind(std::make_shared<const Svd>(false, true),
                                                        {primals[0]});
  if (!t[0].valid()) return std::vector<Array>(outputs.size());
  const Array &s = red[0], &u = red[1], &vt = red[2];
  const Array& da = t[0];
  const Array ut = T(u), v = T(vt);
  const Array s_dim = expand_dims(s, {-2});  // [..., 1, k]
  const Array ds_mat = matmul(matmul(ut, da), v);
  const Array ds = diagonal(ds_mat, 0, -2, -1);
  if (!compute_uv_) return {ds};
  const int64_t k = s.shape().back();
  const Array eye_k = eye_as(k, s);
  const Array s_diffs = (s_dim + T(s_dim)) * (s_dim - T(s_dim));
  const Array f = reciprocal(s_diffs + eye_k) - eye_k;
  const Array dss = s_dim * ds_mat;
  const Array sds = T(s_dim) * ds_mat;
  const Array s_zeros = astype(s == scalar(0, s.dtype()), s.dtype());
  const Array s_inv = reciprocal(s + s_zeros) - s_zeros;
  const Array s_inv_mat = expand_dims(s_inv, {-1}) * eye_k;
  const Array dudv_diag = 0.5 * (ds_mat - T(ds_mat)) * s_inv_mat;
  Array du = matmul(u, f * (dss + T(dss)) + dudv_diag);
  Array dv = matmul(v, f * (sds + T(sds)));
  const Shape& sh = primals[0].shape();
  const int64_t m = sh[sh.size() - 2], n = sh.back();
  if (m > n) {
    Array dav = matmul(da, v);
    du = du + (dav - matmul(u, matmul(ut, dav))) / s_dim;
  }
  if (n > m) {
    Array dahu = matmul(T(da), u);
    dv = dv + (dahu - matmul(v, matmul(vt, dahu))) / s_dim;
  }
  return {ds, du, T(dv)};
}

std::vector<Array> Svd::vjp(const std::vector<Array>& primals, const std::vector<Array>& outputs,
                            const std::vector<Array>& cts) const {
  return transpose_jvp(*this, primals, outputs, cts);
}

Batched Svd::vmap(const std::vector<Array>& args, const std::vector<int>& dims) const {
  return batch_front(std::make_shared<const Svd>(*this), args, dims);
}

// ---- eigh (JAX's _eigh_jvp_rule: distinct eigenvalues).
std::vector<Array> Eigh::jvp(const std::vector<Array>&, const std::vector<Array>& t,
                             const std::vector<Array>& outputs) const {
  if (!t[0].valid()) return {Array(), Array()};
  const Array &v = outputs[0], &w = outputs[1];
  const int64_t n = w.shape().back();
  const Array eye_n = eye_as(n, w);
  // The reciprocal eigenvalue gaps, with zeros (not NaNs) on the diagonal.
  const Array fmat = reciprocal(eye_n + expand_dims(w, {-2}) - expand_dims(w, {-1})) - eye_n;
  const Array vt_a_v = matmul(matmul(T(v), t[0]), v);
  return {matmul(v, fmat * vt_a_v), diagonal(vt_a_v, 0, -2, -1)};
}

std::vector<Array> Eigh::vjp(const std::vector<Array>& primals, const std::vector<Array>& outputs,
                             const std::vector<Array>& cts) const {
  return transpose_jvp(*this, primals, outputs, cts);
}

Batched Eigh::vmap(const std::vector<Array>& args, const std::vector<int>& dims) const {
  return batch_front(std::make_shared<const Eigh>(*this), args, dims);
}

// ---- lu (JAX's _lu_jvp_rule): with P A = L U, L' = L tril(X, -1), U' = triu(X) U where
// X = L^-1 P A' U^-1 (L padded to m x m, U to n x n with identity blocks).
std::vector<Array> Lu::jvp(const std::vector<Array>&, const std::vector<Array>& t,
                           const std::vector<Array>& outputs) const {
  if (!t[0].valid()) return {Array(), Array(), Array()};
  const Array &lu = outputs[0], &perm = outputs[2];
  const Shape& s = lu.shape();
  const int64_t m = s[s.size() - 2], n = s.back(), k = std::min(m, n);
  const int r = lu.ndim();
  // Rows of the tangent in the pivoted order: x = P A'.
  Shape idx_shape = perm.shape();
  idx_shape.push_back(n);
  Array rows = broadcast_to(expand_dims(perm, {-1}), idx_shape);
  Array x = take_along_axis(t[0], rows, r - 2);
  std::vector<std::pair<int64_t, int64_t>> lpad(r, {0, 0}), upad(r, {0, 0});
  lpad[r - 1] = {0, m - k};
  upad[r - 2] = {0, n - k};
  Array l = pad(tril(slice_axis(lu, r - 1, 0, k), -1), lpad) + eye_as(m, lu);
  Array u_eye = pad(eye_as(n - k, lu), {{k, 0}, {k, 0}});
  Array u = pad(triu(slice_axis(lu, r - 2, 0, k)), upad) + u_eye;
  Array la = tsolve(l, x, /*left_side=*/true, /*lower=*/true, false, /*unit_diagonal=*/true);
  Array lau = tsolve(u, la, /*left_side=*/false, /*lower=*/false, false);
  return {matmul(l, tril(lau, -1)) + matmul(triu(lau), u), Array(), Array()};
}

std::vector<Array> Lu::vjp(const std::vector<Array>& primals, const std::vector<Array>& outputs,
                           const std::vector<Array>& cts) const {
  return transpose_jvp(*this, primals, outputs, cts);
}

Batched Lu::vmap(const std::vector<Array>& args, const std::vector<int>& dims) const {
  return batch_front(std::make_shared<const Lu>(*this), args, dims);
}

// ---- triangular_solve. With op(A) = A or A^T and X the solution:
//   jvp   left: X' = op(A)^-1 (B' - op(A') X);  right: X' = (B' - X op(A')) op(A)^-1
//   vjp   Y = the solve of the transposed system on the cotangent (B's cotangent), then
//         A's cotangent is -Y X^T (left) or -X^T Y (right), transposed back when op is A^T
//         and restricted to the triangle the solve reads.
namespace {
Array triangle(const Array& x, const TriangularSolveParams& p) {
  const int64_t k = p.unit_diagonal ? 1 : 0;
  return p.lower ? tril(x, -k) : triu(x, k);
}
}  // namespace

std::vector<Array> TriangularSolve::jvp(const std::vector<Array>& primals,
                                        const std::vector<Array>& t,
                                        const std::vector<Array>& outputs) const {
  const Array& a = primals[0];
  const Array& x = outputs[0];
  Array rhs;
  if (t[0].valid()) {
    Array ga = triangle(t[0], p_);
    if (p_.transpose_a) ga = T(ga);
    rhs = -(p_.left_side ? matmul(ga, x) : matmul(x, ga));
  }
  if (t[1].valid()) rhs = detail::add_any(rhs, t[1]);
  if (!rhs.valid()) return {Array()};
  return {apply<TriangularSolve>({a, rhs}, p_)};
}

std::vector<Array> TriangularSolve::vjp(const std::vector<Array>& primals,
                                        const std::vector<Array>& outputs,
                                        const std::vector<Array>& cts) const {
  if (!cts[0].valid()) return {Array(), Array()};
  const Array& a = primals[0];
  const Array& x = outputs[0];
  TriangularSolveParams tp = p_;
  tp.transpose_a = !p_.transpose_a;
  Array y = apply<TriangularSolve>({a, astype(cts[0], x.dtype())}, tp);
  Array ga = p_.left_side ? -matmul(y, T(x)) : -matmul(T(x), y);
  if (p_.transpose_a) ga = T(ga);
  return {triangle(ga, p_), y};
}

Batched TriangularSolve::vmap(const std::vector<Array>& args, const std::vector<int>& dims) const {
  return batch_front(std::make_shared<const TriangularSolve>(*this), args, dims);
}

}  // namespace graft
