// Polynomial least squares with jnp.linalg: fits y ~ sum_j c_j x^j three ways, as a JAX user
// would: lstsq (through the svd), the normal equations (cholesky and two triangular solves),
// and qr (r c = q^T y). Also the gradient of the fit's squared residual with respect to the
// data, through the factorization (its closed form is 2 (y - A c)).
#pragma once

#include <cstdint>

#include "core/ops.h"

namespace graft::examples {

// The Vandermonde design matrix [x^0, x^1, ..., x^degree], [n, degree + 1].
Array design_matrix(const Array& x, int64_t degree);

Array fit_lstsq(const Array& a, const Array& y);
Array fit_normal_equations(const Array& a, const Array& y);
Array fit_qr(const Array& a, const Array& y);

// d/dy of |A lstsq(A, y) - y|^2.
Array residual_gradient(const Array& a, const Array& y);

}  // namespace graft::examples
