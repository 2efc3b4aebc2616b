// The jax.random samplers built on jnp.linalg: orthogonal (a QR of a normal matrix) and
// multivariate_normal (a factor of the covariance times normal draws), composed as JAX 0.10.2
// composes them (jax/_src/random/core.py), so they use the same keys and draws; the values
// differ from JAX's only by the rounding of the factorizations (LAPACK here, XLA's there).
#include <algorithm>

#include "core/error.h"
#include "core/ops.h"
#include "core/lax/util.h"
#include "core/random/random.h"
#include "core/random/internal.h"

namespace graft::random {

using namespace internal;  // NOLINT: the family's own helpers

Array orthogonal(const Array& key, int64_t n, const Shape& shape, DType dtype,
                 std::optional<int64_t> m) {
  check_key("orthogonal", key);
  check_float("orthogonal", dtype);
  const int64_t cols = m.value_or(n);
  if (n < 0 || cols < 0) fail("orthogonal", "n and m must be non-negative, got ", n, ", ", cols);
  for (int64_t d : shape) {
    if (d < 0) fail("orthogonal", "shape has a negative dimension ", d);
  }
  // Mezzadri's method: a normal (max, min) matrix, its Q with the signs of R's diagonal.
  Shape zs = shape;
  zs.push_back(std::max(n, cols));
  zs.push_back(std::min(n, cols));
  QrResult f = linalg::qr(normal(key, zs, dtype));
  Array x = f.q * expand_dims(sign(linalg::diagonal(f.r)), {-2});
  return n < cols ? matrix_transpose(x) : x;
}

Array multivariate_normal(const Array& key, const Array& mean, const Array& cov, OptShape shape,
                          std::optional<DType> dtype, const std::string& method) {
  check_key("multivariate_normal", key);
  if (!mean.valid() || !cov.valid()) fail("multivariate_normal", "mean and cov must be arrays");
  if (method != "svd" && method != "eigh" && method != "cholesky") {
    fail("multivariate_normal", "method must be one of svd, eigh, cholesky, got ", method);
  }
  std::vector<Array> mc = graft::detail::promote_dtypes({mean, cov});
  Array mu = mc[0], sigma = mc[1];
  if (!is_floating(mu.dtype())) {  // promote_dtypes_inexact
    mu = astype(mu, DType::kF32);
    sigma = astype(sigma, DType::kF32);
  }
  const DType dt = dtype.value_or(mu.dtype());
  check_float("multivariate_normal", dt);
  if (mu.ndim() < 1) fail("multivariate_normal", "requires mean.ndim >= 1, got 0");
  if (sigma.ndim() < 2) {
    fail("multivariate_normal", "requires cov.ndim >= 2, got ", sigma.ndim());
  }
  const Shape& ms = mu.shape();
  const Shape& cs = sigma.shape();
  const int64_t n = ms.back();
  if (cs[cs.size() - 1] != n || cs[cs.size() - 2] != n) {
    fail("multivariate_normal", "requires cov.shape == (..., n, n) for n=", n,
         ", but got cov.shape == ", shape_str(cs));
  }
  const Shape mean_batch(ms.begin(), ms.end() - 1), cov_batch(cs.begin(), cs.end() - 2);
  Shape batch;
  if (shape.has_value()) {
    // JAX's _check_shape: the parameters' batch shapes must broadcast into `shape`.
    Shape all = broadcast_shapes("multivariate_normal",
                                 broadcast_shapes("multivariate_normal", *shape, mean_batch),
                                 cov_batch);
    if (all != *shape) {
      fail("multivariate_normal", "shape ", shape_str(*shape),
           " does not fit the parameters' batch shapes ", shape_str(mean_batch), " and ",
           shape_str(cov_batch));
    }
    batch = *shape;
  } else {
    batch = broadcast_shapes("multivariate_normal", mean_batch, cov_batch);
  }
  Array factor;
  if (method == "svd") {
    SvdResult f = linalg::svd(sigma);
    factor = f.u * expand_dims(sqrt(f.s), {-2});
  } else if (method == "eigh") {
    EighResult f = linalg::eigh(sigma);
    factor = f.eigenvectors * expand_dims(sqrt(f.eigenvalues), {-2});
  } else {
    factor = linalg::cholesky(sigma);
  }
  Shape zs = batch;
  zs.push_back(n);
  Array z = normal(key, zs, dt);
  return mu + einsum("...ij,...j->...i", factor, z);
}

}  // namespace graft::random
