// The names the coverage test counts as present whose graft version still covers less than
// JAX 0.10.2's, each with what is missing. Where graft refuses a call JAX accepts, the probe
// makes that call and the test expects graft::Error (so the entry must go once the limitation
// does); a missing parameter has no probe (the call would not compile).
#include "core/ops.h"
#include "tests/api/api_entry.h"

namespace graft::api {
namespace {

Array c64(const Array& x) { return complex(x, x * 0.5); }
Array sq_c64() { return c64(sq()); }

}  // namespace

std::vector<Limitation> limitations() {
  const char* kComplex = "complex inputs are an error";
  return {
      {"jnp", "unique",
       "slices of size 0 along a multi-dim axis are an error (JAX returns an empty result)",
       [] { unique(zeros({2, 0}), UniqueOptions{.axis = 0}); }},
      {"jnp", "roots",
       "no strip_zeros=False: leading zeros are always stripped, so the coefficients must be "
       "concrete (not traced under jit / vmap)"},
      {"jnp", "histogram", "bins is a count only, not an array of bin edges; complex inputs are "
       "an error", [] { histogram(c64(v())); }},
      {"jnp", "histogram_bin_edges", "bins is a count only, not an array of bin edges; complex "
       "inputs are an error", [] { histogram_bin_edges(c64(v())); }},
      {"jnp", "histogramdd", kComplex, [] { histogramdd(c64(transpose(m()))); }},
      {"jnp", "logaddexp", kComplex, [] { logaddexp(c64(v()), v()); }},
      {"jnp", "vander", kComplex, [] { vander(c64(v())); }},
      {"jnp", "convolve", kComplex, [] { convolve(c64(ones({3})), ones({2})); }},
      {"jnp", "correlate", kComplex, [] { correlate(c64(ones({3})), ones({2})); }},
      {"jnp", "polyfit", kComplex, [] { polyfit(v(), c64(v()), 1); }},
      {"jnp", "polydiv", kComplex, [] { polydiv(c64(v()), ones({2})); }},
      {"jnp.linalg", "linalg.norm", "ord 2, -2 and nuc of a complex matrix are an error",
       [] { linalg::norm(sq_c64(), "2"); }},
      {"jnp.linalg", "linalg.matrix_norm", "ord 2, -2 and nuc of a complex matrix are an error",
       [] { linalg::matrix_norm(sq_c64(), "nuc"); }},
      {"jnp.linalg", "linalg.matrix_power", "a negative power of a complex matrix is an error",
       [] { linalg::matrix_power(sq_c64(), -1); }},
      {"jnp.linalg", "linalg.svd", "no hermitian=True; complex inputs are an error",
       [] { linalg::svd(sq_c64()); }},
      {"jnp.linalg", "linalg.svdvals", kComplex, [] { linalg::svdvals(sq_c64()); }},
      {"jnp.linalg", "linalg.cholesky", kComplex, [] { linalg::cholesky(sq_c64()); }},
      {"jnp.linalg", "linalg.qr", kComplex, [] { linalg::qr(sq_c64()); }},
      {"jnp.linalg", "linalg.eigh", kComplex, [] { linalg::eigh(sq_c64()); }},
      {"jnp.linalg", "linalg.eigvalsh", kComplex, [] { linalg::eigvalsh(sq_c64()); }},
      {"jnp.linalg", "linalg.solve", kComplex, [] { linalg::solve(sq_c64(), ones({3})); }},
      {"jnp.linalg", "linalg.inv", kComplex, [] { linalg::inv(sq_c64()); }},
      {"jnp.linalg", "linalg.det", kComplex, [] { linalg::det(sq_c64()); }},
      {"jnp.linalg", "linalg.slogdet", kComplex, [] { linalg::slogdet(sq_c64()); }},
      {"jnp.linalg", "linalg.lstsq", kComplex, [] { linalg::lstsq(sq_c64(), ones({3})); }},
      {"jnp.linalg", "linalg.pinv", kComplex, [] { linalg::pinv(sq_c64()); }},
      {"jnp.linalg", "linalg.cond", kComplex, [] { linalg::cond(sq_c64()); }},
      {"jnp.linalg", "linalg.matrix_rank", kComplex, [] { linalg::matrix_rank(sq_c64()); }},
      {"jnp.linalg", "linalg.tensorinv", kComplex,
       [] { linalg::tensorinv(reshape(c64(eye(6) + 1.0), {2, 3, 6})); }},
      {"jnp.linalg", "linalg.tensorsolve", kComplex,
       [] { linalg::tensorsolve(reshape(c64(eye(6) + 1.0), {2, 3, 6}), ones({2, 3})); }},
      {"optax", "muon",
       "no muon_weight_dimension_numbers (muon on reshaped N-D leaves), no preconditioning "
       "other than Optax's default \"frobenius\", no mu_dtype"},
      {"jax.nn", "dot_product_attention", "no local_window_size, no return_residual"},
  };
}

}  // namespace graft::api
