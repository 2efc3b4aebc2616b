// The jnp.linalg and jnp.fft entries of the coverage test: each is the call
// tools/make_api_coverage_vectors.py makes with JAX under the same key, on the inputs of
// api_entry.h.
#include "core/ops.h"
#include "tests/api/api_entry.h"

namespace graft::api {
namespace {

// x's columns scaled by the sign of their largest-magnitude entry: singular vectors and
// eigenvectors are unique only up to sign, which LAPACK implementations choose differently.
Array sign_fixed_columns(const Array& x) {
  Array idx = argmax(abs(x), -2, true);
  return x * sign(take_along_axis(x, idx, -2));
}

// A well-conditioned f32[2, 3, 6] whose leading and trailing dims both hold 6 elements.
Array tensor_a() { return reshape(eye(6) * 2.0 + 0.1, {2, 3, 6}); }

}  // namespace

std::vector<Entry> linalg_fft_entries() {
  return {
      // jnp.linalg without factorizations (core/numpy/linalg/linalg.h).
      API("jnp.linalg", "linalg.vector_norm", linalg::vector_norm(v())),
      API("jnp.linalg", "linalg.matrix_norm", linalg::matrix_norm(m())),
      API("jnp.linalg", "linalg.norm", linalg::norm(m(), "2")),
      API("jnp.linalg", "linalg.matrix_power", linalg::matrix_power(sq() * 0.5, -2)),
      API("jnp.linalg", "linalg.multi_dot", linalg::multi_dot({m(), transpose(m()), m()})),
      API("jnp.linalg", "linalg.vecdot", linalg::vecdot(m(), m())),
      API("jnp.linalg", "linalg.diagonal", linalg::diagonal(m())),
      API("jnp.linalg", "linalg.trace", linalg::trace(m())),
      API("jnp.linalg", "linalg.tensordot", linalg::tensordot(m(), m(), 2)),
      API("jnp.linalg", "linalg.cross", linalg::cross(m(), m() * m())),
      // The factorizations and what is built on them (core/lax/linalg.h).
      API("jnp.linalg", "linalg.cholesky", linalg::cholesky(sq())),
      API("jnp.linalg", "linalg.qr", linalg::qr(m()).r),
      API("jnp.linalg", "linalg.svd", sign_fixed_columns(linalg::svd(m()).u)),
      API("jnp.linalg", "linalg.svdvals", linalg::svdvals(m())),
      API("jnp.linalg", "linalg.eigh", sign_fixed_columns(linalg::eigh(sq()).eigenvectors)),
      API("jnp.linalg", "linalg.eigvalsh", linalg::eigvalsh(sq())),
      API("jnp.linalg", "linalg.solve", linalg::solve(sq(), f32s({1, 2, 3}))),
      API("jnp.linalg", "linalg.inv", linalg::inv(sq())),
      API("jnp.linalg", "linalg.det", linalg::det(sq())),
      API("jnp.linalg", "linalg.slogdet", linalg::slogdet(sq()).logabsdet),
      API("jnp.linalg", "linalg.lstsq", linalg::lstsq(transpose(m()), f32s({1, 2, 4})).x),
      API("jnp.linalg", "linalg.pinv", linalg::pinv(m())),
      API("jnp.linalg", "linalg.cond", linalg::cond(sq())),
      API("jnp.linalg", "linalg.matrix_rank", linalg::matrix_rank(m())),
      API("jnp.linalg", "linalg.tensorinv", linalg::tensorinv(tensor_a(), 2)),
      API("jnp.linalg", "linalg.tensorsolve", linalg::tensorsolve(tensor_a(), m())),
      // eig's eigenvectors are unique up to a complex phase: compared as magnitudes.
      API("jnp.linalg", "linalg.eig", abs(linalg::eig(sq()).eigenvectors)),
      API("jnp.linalg", "linalg.eigvals", sort_complex(linalg::eigvals(sq()))),
      // jnp.fft (core/numpy/fft/fft.h).
      API("jnp.fft", "fft.fftfreq", fft::fftfreq(8)),
      API("jnp.fft", "fft.rfftfreq", fft::rfftfreq(8)),
      API("jnp.fft", "fft.fftshift", fft::fftshift(m())),
      API("jnp.fft", "fft.ifftshift", fft::ifftshift(m())),
      API("jnp.fft", "fft.fft", fft::fft(v())),
      API("jnp.fft", "fft.ifft", fft::ifft(v())),
      API("jnp.fft", "fft.fft2", fft::fft2(m())),
      API("jnp.fft", "fft.ifft2", fft::ifft2(m())),
      API("jnp.fft", "fft.fftn", fft::fftn(m())),
      API("jnp.fft", "fft.ifftn", fft::ifftn(m())),
      API("jnp.fft", "fft.rfft", fft::rfft(v())),
      API("jnp.fft", "fft.irfft", fft::irfft(fft::rfft(v() * v()))),
      API("jnp.fft", "fft.rfft2", fft::rfft2(m())),
      API("jnp.fft", "fft.irfft2", fft::irfft2(fft::rfft2(m()))),
      API("jnp.fft", "fft.rfftn", fft::rfftn(m())),
      API("jnp.fft", "fft.irfftn", fft::irfftn(fft::rfftn(m() * m()))),
      API("jnp.fft", "fft.hfft", fft::hfft(fft::ihfft(v() * v()))),
      API("jnp.fft", "fft.ihfft", fft::ihfft(v())),
  };
}

}  // namespace graft::api
