// jnp.linalg's factorizations and the functions built on them (core/lax/linalg.h) against
// jnp.linalg.
//
// How the vectors were made: tools/make_jnp_linalg_decomp_vectors.py ran JAX 0.10.2 on CPU
// (x64 off) on seeded float32 standard-normal inputs and wrote tests/core/testdata/
// jnp_linalg_decomp_vectors.txt: inputs, JAX's outputs and, where marked, jax.grad of
// sum(out0 * ct) for a stored cotangent ct. Each case's function first makes its input well
// conditioned and fixes the factors' signs exactly as the script does (see there). Compared in
// f32 with 2e-4 absolute + 2e-4 relative (LAPACK and XLA round differently inside the
// factorizations); shapes and dtypes exactly. Also: jit equals eager, vmap equals a loop, and
// misuse throws graft::Error naming the op.
#include <cmath>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "core/ops.h"
#include "gtest/gtest.h"
#include "tests/core/numpy/jnp_array_vectors.h"
#include "transforms/autodiff.h"
#include "transforms/jit.h"
#include "transforms/vmap.h"

namespace graft {
namespace {

using namespace jnp_vectors;
using Fn = std::function<std::vector<Array>(const std::vector<Array>&)>;

Array T(const Array& x) { return swapaxes(x, -1, -2); }
Array spd(const Array& x) {
  const int64_t n = x.shape().back();
  return matmul(x, T(x)) + static_cast<double>(n) * eye(n);
}
Array shifted(const Array& x) { return x + 3.0 * eye(x.shape().back()); }
Array flat(const std::vector<Array>& xs) {
  std::vector<Array> f;
  for (const Array& x : xs) f.push_back(reshape(x, {-1}));
  return concatenate(f, 0);
}
Array qr_fixed(const Array& x, const std::string& mode) {
  QrResult f = linalg::qr(x, mode);
  Array sg = sign(diagonal(f.r, 0, -2, -1));
  return flat({f.q * expand_dims(sg, {-2}), f.r * expand_dims(sg, {-1})});
}
Array svd_fixed(const Array& x) {
  SvdResult f = linalg::svd(x, false);
  Array sg = sign(slice_axis(f.u, -2, 0, 1));
  return flat({f.s, f.u * sg, f.vh * T(sg)});
}
Array eigh_fixed(const Array& x) {
  EighResult f = linalg::eigh(x + T(x));
  return flat({f.eigenvalues, f.eigenvectors * sign(slice_axis(f.eigenvectors, -2, 0, 1))});
}

Fn one(std::function<Array(const std::vector<Array>&)> f) {
  return [f](const std::vector<Array>& x) { return std::vector<Array>{f(x)}; };
}

// The tool's INDEFINITE: a positive definite matrix and one that is not, as a batch.
Array indefinite() {
  return array<float>({4, 2, 0, 2, 3, 1, 0, 1, 2, 1, 2, 0, 2, 1, 0, 0, 0, 1}, Shape{2, 3, 3});
}

// The cases of tools/make_jnp_linalg_decomp_vectors.py, by name.
const std::map<std::string, Fn>& cases() {
  static const auto* c = new std::map<std::string, Fn>{
      {"dchol", one([](auto& x) { return linalg::cholesky(spd(x[0])); })},
      {"dchol_upper_batch", one([](auto& x) { return linalg::cholesky(spd(x[0]), true); })},
      {"dchol_indefinite", one([](auto&) { return linalg::cholesky(indefinite()); })},
      {"dchol_indefinite_upper",
       one([](auto&) { return linalg::cholesky(indefinite(), true); })},
      {"dqr_reduced", one([](auto& x) { return qr_fixed(x[0], "reduced"); })},
      {"dqr_complete", one([](auto& x) { return qr_fixed(x[0], "complete"); })},
      {"dqr_r", one([](auto& x) { return abs(linalg::qr(x[0], "r").r); })},
      {"dsvd", one([](auto& x) { return svd_fixed(x[0]); })},
      {"dsvd_wide_batch", one([](auto& x) { return svd_fixed(x[0]); })},
      {"dsvd_values", one([](auto& x) { return linalg::svd(x[0], true, false).s; })},
      {"dsvdvals", one([](auto& x) { return linalg::svdvals(x[0]); })},
      {"deigh", one([](auto& x) { return eigh_fixed(x[0]); })},
      {"deigh_upper", one([](auto& x) { return linalg::eigh(x[0], "U").eigenvalues; })},
      {"deigvalsh", one([](auto& x) { return linalg::eigvalsh(x[0] + T(x[0])); })},
      {"dsolve_vec", one([](auto& x) { return linalg::solve(shifted(x[0]), x[1]); })},
      {"dsolve_batch", one([](auto& x) { return linalg::solve(shifted(x[0]), x[1]); })},
      {"dinv", one([](auto& x) { return linalg::inv(shifted(x[0])); })},
      {"ddet", one([](auto& x) { return linalg::det(x[0]); })},
      {"dslogdet",
       [](auto& x) {
         SlogdetResult r = linalg::slogdet(x[0]);
         return std::vector<Array>{r.sign, r.logabsdet};
       }},
      {"dslogdet_log", one([](auto& x) { return linalg::slogdet(x[0]).logabsdet; })},
      {"dlstsq",
       [](auto& x) {
         LstsqResult r = linalg::lstsq(x[0], x[1]);
         return std::vector<Array>{r.x, r.resid, r.rank, r.s};
       }},
      {"dlstsq_vec",
       [](auto& x) {
         LstsqResult r = linalg::lstsq(x[0], x[1]);
         return std::vector<Array>{r.x, r.resid, r.rank, r.s};
       }},
      {"dlstsq_x", one([](auto& x) { return linalg::lstsq(x[0], x[1]).x; })},
      {"dpinv", one([](auto& x) { return linalg::pinv(x[0]); })},
      {"dcond", one([](auto& x) { return linalg::cond(x[0]); })},
      {"dcond_fro", one([](auto& x) { return linalg::cond(x[0], "fro"); })},
      {"dmatrix_rank", one([](auto& x) { return linalg::matrix_rank(x[0]); })},
      {"dmatrix_rank_1",
       one([](auto& x) {
         return linalg::matrix_rank(matmul(slice_axis(x[0], 1, 0, 1), slice_axis(x[0], 0, 0, 1)));
       })},
      {"dtensorinv", one([](auto& x) { return linalg::tensorinv(x[0], 2); })},
      {"dtensorsolve", one([](auto& x) { return linalg::tensorsolve(x[0], x[1]); })},
  };
  return *c;
}

// LAPACK and XLA round differently inside the factorizations.
constexpr double kTol = 2e-4;

TEST(NumpyLinalgDecompTest, ValuesAndGradientsMatchJax) {
  int with_grads = 0;
  for (const auto& [name, fn] : cases()) {
    SCOPED_TRACE(name);
    std::vector<Array> xs = inputs(name);
    ASSERT_TRUE(has_vec(name + ".out0")) << "no output recorded";
    std::vector<Array> outs = fn(xs);
    for (size_t k = 0; k < outs.size(); ++k) {
      expect_matches(outs[k], name + ".out" + std::to_string(k), kTol);
    }
    EXPECT_FALSE(has_vec(name + ".out" + std::to_string(outs.size()))) << "outputs missing";
    if (!has_vec(name + ".ct")) continue;
    ++with_grads;
    const Array ct = to_array(vectors().at(name + ".ct"));
    for (size_t k = 0; k < xs.size(); ++k) {
      auto f = [&, k](const Array& xk) {
        std::vector<Array> a = xs;
        a[k] = xk;
        return sum(fn(a)[0] * ct);
      };
      expect_matches(grad(f)(xs[k]), name + ".grad" + std::to_string(k), 1e-3);
    }
  }
  EXPECT_EQ(cases().size(), 30u);
  EXPECT_GE(with_grads, 20);
}

TEST(NumpyLinalgDecompTest, JitEqualsEager) {
  for (const char* name : {"dchol", "dqr_reduced", "dsvd", "deigh", "dsolve_batch", "ddet",
                           "dlstsq_x", "dpinv"}) {
    SCOPED_TRACE(name);
    const Fn& fn = cases().at(name);
    std::vector<Array> xs = inputs(name);
    auto jitted = jit([&](const std::vector<Array>& a) { return fn(a)[0]; });
    std::vector<float> got = jitted(xs).to_vector<float>(), want = fn(xs)[0].to_vector<float>();
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) {
      EXPECT_NEAR(got[i], want[i], 1e-5 * (1 + std::fabs(want[i]))) << i;
    }
  }
}

// vmap over a stack of matrices equals the factorization of each matrix.
TEST(NumpyLinalgDecompTest, VmapEqualsLoop) {
  std::vector<Array> xs = inputs("dinv");  // [2, 3, 3]
  auto f = [](const Array& x) { return linalg::det(shifted(x)) + sum(linalg::inv(shifted(x))); };
  std::vector<float> got = vmap(f)(xs[0]).to_vector<float>();
  for (int64_t b = 0; b < 2; ++b) {
    Array xb = squeeze(slice_axis(xs[0], 0, b, b + 1), {0});
    EXPECT_NEAR(got[b], f(xb).item<float>(), 1e-4);
  }
}

TEST(NumpyLinalgDecompTest, MisuseIsAnError) {
  const Array rect = ones({2, 3}), v = ones({3});
  expect_error([&] { cholesky(rect); }, "[cholesky]");
  expect_error([&] { cholesky(ones({3, 3}, DType::kI32)); }, "[cholesky]");
  expect_error([&] { cholesky(v); }, "[cholesky]");
  expect_error([&] { eigh(rect); }, "[eigh]");
  expect_error([&] { qr(ones({3, 3}, DType::kI32)); }, "[qr]");
  expect_error([&] { svd(ones({3, 3}, DType::kBF16)); }, "[svd]");
  expect_error([&] { lu(v); }, "[lu]");
  expect_error([&] { triangular_solve(rect, rect); }, "[triangular_solve]");
  expect_error([&] { triangular_solve(ones({3, 3}), ones({2, 3}), true); }, "[triangular_solve]");
  expect_error([&] { triangular_solve(ones({3, 3}), ones({3, 3}, DType::kF64)); },
               "[triangular_solve]");
  expect_error([&] { linalg::solve(rect, v); }, "[solve]");
  expect_error([&] { linalg::solve(ones({3, 3}), ones({2})); }, "[solve]");
  expect_error([&] { linalg::inv(rect); }, "[inv]");
  expect_error([&] { linalg::det(rect); }, "[det]");
  expect_error([&] { linalg::slogdet(v); }, "[slogdet]");
  expect_error([&] { linalg::qr(rect, "economic"); }, "[qr]");
  expect_error([&] { linalg::eigh(ones({3, 3}), "X"); }, "[eigh]");
  expect_error([&] { linalg::lstsq(ones({2, 3, 3}), v); }, "[lstsq]");
  expect_error([&] { linalg::lstsq(rect, v); }, "[lstsq]");
  expect_error([&] { linalg::tensorinv(ones({2, 3}), 1); }, "[tensorinv]");
  expect_error([&] { linalg::tensorsolve(ones({2, 3}), ones({3})); }, "[tensorsolve]");
  // Derivatives JAX leaves undefined are errors too.
  expect_error([&] { grad([](const Array& x) { return sum(qr(x, true).q); })(ones({3, 2})); },
               "[qr]");
  expect_error([&] { grad([](const Array& x) { return sum(svd(x, true).u); })(eye(3)); },
               "[svd]");
}

// Non-positive-definite input gives NaNs in the factor's triangle (as JAX on the CPU), not an
// error; the other triangle stays 0.
TEST(NumpyLinalgDecompTest, CholeskyOfIndefiniteIsNan) {
  const std::vector<float> l = cholesky(-eye(2)).to_vector<float>();
  EXPECT_TRUE(std::isnan(l[0]) && std::isnan(l[2]) && std::isnan(l[3]));
  EXPECT_EQ(l[1], 0.0f);
}

}  // namespace
}  // namespace graft
