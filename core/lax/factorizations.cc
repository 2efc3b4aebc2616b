// lax.linalg's factorizations (core/lax/linalg.h): each binds its primitive
// (core/primitives/decomp.h), after the symmetrization lax applies.
#include <memory>

#include "core/lax/lax.h"
#include "core/primitives/decomp.h"

namespace graft {

namespace {
Array symmetrize(const Array& x) { return (x + swapaxes(x, -1, -2)) / 2.0; }
}  // namespace

Array cholesky(const Array& x, bool symmetrize_input) {
  Cholesky().infer({x.aval()});  // misuse is reported before symmetrizing
  return bind1(std::make_shared<const Cholesky>(), {symmetrize_input ? symmetrize(x) : x});
}

QrResult qr(const Array& x, bool full_matrices) {
  std::vector<Array> o = graft::bind(std::make_shared<const Qr>(full_matrices), {x});
  return {o[0], o[1]};
}

SvdResult svd(const Array& x, bool full_matrices, bool compute_uv) {
  std::vector<Array> o = graft::bind(std::make_shared<const Svd>(full_matrices, compute_uv), {x});
  if (!compute_uv) return {Array(), o[0], Array()};
  return {o[1], o[0], o[2]};
}

EighResult eigh(const Array& x, bool lower, bool symmetrize_input) {
  Eigh(lower).infer({x.aval()});
  std::vector<Array> o =
      graft::bind(std::make_shared<const Eigh>(lower), {symmetrize_input ? symmetrize(x) : x});
  return {o[1], o[0]};
}

LuResult lu(const Array& x) {
  std::vector<Array> o = graft::bind(std::make_shared<const Lu>(), {x});
  return {o[0], o[1], o[2]};
}

Array triangular_solve(const Array& a, const Array& b, bool left_side, bool lower,
                       bool transpose_a, bool unit_diagonal) {
  return bind1(std::make_shared<const TriangularSolve>(
                   TriangularSolveParams{left_side, lower, transpose_a, unit_diagonal}),
               {a, b});
}

Array lu_solve(const Array& a, const Array& b) {
  LuResult f = lu(a);
  Shape idx = f.permutation.shape();
  idx.push_back(b.shape().back());
  Array pb = take_along_axis(b, broadcast_to(expand_dims(f.permutation, {-1}), idx), -2);
  Array y = triangular_solve(f.lu, pb, /*left_side=*/true, /*lower=*/true, false,
                             /*unit_diagonal=*/true);
  return triangular_solve(f.lu, y, /*left_side=*/true, /*lower=*/false);
}

}  // namespace graft
