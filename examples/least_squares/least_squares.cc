#include "examples/least_squares/least_squares.h"

#include "transforms/autodiff.h"

namespace graft::examples {

Array design_matrix(const Array& x, int64_t degree) {
  std::vector<Array> cols{ones_like(x)};
  for (int64_t j = 1; j <= degree; ++j) cols.push_back(cols.back() * x);
  return stack(cols, 1);
}

Array fit_lstsq(const Array& a, const Array& y) { return linalg::lstsq(a, y).x; }

Array fit_normal_equations(const Array& a, const Array& y) {
  // A^T A c = A^T y with A^T A = L L^T: L z = A^T y, then L^T c = z.
  Array at = swapaxes(a, 0, 1);
  Array l = linalg::cholesky(matmul(at, a));
  Array rhs = expand_dims(matmul(at, y), {1});
  Array z = triangular_solve(l, rhs, /*left_side=*/true, /*lower=*/true);
  Array c = triangular_solve(l, z, /*left_side=*/true, /*lower=*/true, /*transpose_a=*/true);
  return squeeze(c, {1});
}

Array fit_qr(const Array& a, const Array& y) {
  QrResult f = linalg::qr(a);  // reduced: q [n, k], r [k, k]
  Array qty = expand_dims(matmul(swapaxes(f.q, 0, 1), y), {1});
  return squeeze(triangular_solve(f.r, qty, /*left_side=*/true, /*lower=*/false), {1});
}

Array residual_gradient(const Array& a, const Array& y) {
  return grad([&a](const Array& yy) { return sum(square(matmul(a, fit_lstsq(a, yy)) - yy)); })(y);
}

}  // namespace graft::examples
