// graft's composable jnp.linalg functions (core/numpy/linalg/linalg.h) against jnp.linalg.
//
// How the vectors were made: tools/make_jnp_linalg_vectors.py ran JAX 0.10.2 on CPU (x64
// off) on seeded float32 standard-normal inputs and wrote tests/core/testdata/
// jnp_linalg_vectors.txt: inputs, JAX's output and, where marked, jax.grad of
// sum(out * ct) for a stored cotangent ct. Compared with f32 tolerances (1e-5 absolute + 1e-5
// relative); shapes and dtypes exactly. Also: jit equals eager, negative powers invert, and
// misuse throws graft::Error naming the op.
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "core/ops.h"
#include "gtest/gtest.h"
#include "tests/core/numpy/jnp_array_vectors.h"
#include "transforms/autodiff.h"
#include "transforms/jit.h"

namespace graft {
namespace {

using namespace jnp_vectors;
using Fn = std::function<Array(const std::vector<Array>&)>;
constexpr double kInf = std::numeric_limits<double>::infinity();

// x + 3 I, as the script's shifted(): well conditioned for the seeded inputs.
Array shifted(const Array& x) { return x + 3.0 * eye(x.shape().back()); }

// The cases of tools/make_jnp_linalg_vectors.py, by name.
const std::map<std::string, Fn>& cases() {
  static const auto* c = new std::map<std::string, Fn>{
      {"lvn_2", [](auto& x) { return linalg::vector_norm(x[0]); }},
      {"lvn_1_axis", [](auto& x) { return linalg::vector_norm(x[0], 1, {-1}); }},
      {"lvn_inf_axis", [](auto& x) { return linalg::vector_norm(x[0], kInf, {-1}); }},
      {"lvn_ninf_axis", [](auto& x) { return linalg::vector_norm(x[0], -kInf, {-1}); }},
      {"lvn_0", [](auto& x) { return linalg::vector_norm(x[0], 0); }},
      {"lvn_3_keep", [](auto& x) { return linalg::vector_norm(x[0], 3, {1}, true); }},
      {"lvn_half", [](auto& x) { return linalg::vector_norm(x[0], 0.5); }},
      {"lmn_fro", [](auto& x) { return linalg::matrix_norm(x[0]); }},
      {"lmn_1", [](auto& x) { return linalg::matrix_norm(x[0], "1"); }},
      {"lmn_m1", [](auto& x) { return linalg::matrix_norm(x[0], "-1"); }},
      {"lmn_inf", [](auto& x) { return linalg::matrix_norm(x[0], "inf"); }},
      {"lmn_ninf_keep", [](auto& x) { return linalg::matrix_norm(x[0], "-inf", true); }},
      {"lnorm_none", [](auto& x) { return linalg::norm(x[0]); }},
      {"lnorm_vec3", [](auto& x) { return linalg::norm(x[0], "3"); }},
      {"lnorm_mat_inf", [](auto& x) { return linalg::norm(x[0], "inf"); }},
      {"lmp_0", [](auto& x) { return linalg::matrix_power(x[0], 0); }},
      {"lmp_1", [](auto& x) { return linalg::matrix_power(x[0], 1); }},
      {"lmp_5", [](auto& x) { return linalg::matrix_power(x[0] * 0.5, 5); }},
      {"lmd_vec_ends", [](auto& x) { return linalg::multi_dot(x); }},
      {"lmd_mats", [](auto& x) { return linalg::multi_dot(x); }},
      {"lvecdot", [](auto& x) { return linalg::vecdot(x[0], x[1]); }},
      {"lvecdot_axis0", [](auto& x) { return linalg::vecdot(x[0], x[1], 0); }},
      {"ldiagonal_1", [](auto& x) { return linalg::diagonal(x[0], 1); }},
      {"ltrace_m1", [](auto& x) { return linalg::trace(x[0], -1); }},
      {"ltensordot", [](auto& x) { return linalg::tensordot(x[0], x[1], 1); }},
      {"lcross", [](auto& x) { return linalg::cross(x[0], x[1]); }},
      {"matrix_transpose", [](auto& x) { return matrix_transpose(x[0]); }},
      {"vecdot", [](auto& x) { return vecdot(x[0], x[1]); }},
      {"matvec", [](auto& x) { return matvec(x[0], x[1]); }},
      {"vecmat", [](auto& x) { return vecmat(x[0], x[1]); }},
      {"lmn_2", [](auto& x) { return linalg::matrix_norm(x[0], "2"); }},
      {"lmn_m2", [](auto& x) { return linalg::matrix_norm(x[0], "-2"); }},
      {"lmn_nuc_keep", [](auto& x) { return linalg::matrix_norm(x[0], "nuc", true); }},
      {"lnorm_mat_2", [](auto& x) { return linalg::norm(x[0], "2"); }},
      {"lnorm_nuc", [](auto& x) { return linalg::norm(x[0], "nuc"); }},
      {"lnorm_axis_3_keep", [](auto& x) { return linalg::norm(x[0], "3", Axes{1}, true); }},
      {"lnorm_axes_1", [](auto& x) { return linalg::norm(x[0], "1", Axes{2, 0}); }},
      {"lnorm_axes_m2_keep", [](auto& x) { return linalg::norm(x[0], "-2", Axes{0, 2}, true); }},
      {"lnorm_axes_fro", [](auto& x) { return linalg::norm(x[0], std::nullopt, Axes{-1, -3}); }},
      {"lnorm_axes_ninf_keep",
       [](auto& x) { return linalg::norm(x[0], "-inf", Axes{1, 0}, true); }},
      {"lnorm_none_keep", [](auto& x) { return linalg::norm(x[0], std::nullopt, std::nullopt, true); }},
      {"lmp_3", [](auto& x) { return linalg::matrix_power(x[0], 3); }},
      {"lmp_m1", [](auto& x) { return linalg::matrix_power(shifted(x[0]), -1); }},
      {"lmp_m3", [](auto& x) { return linalg::matrix_power(shifted(x[0]) * 0.5, -3); }},
      {"lmp_m6", [](auto& x) { return linalg::matrix_power(shifted(x[0]) * 0.5, -6); }},
  };
  return *c;
}

TEST(NumpyLinalgTest, ValuesAndGradientsMatchJax) {
  const int with_grads = expect_cases_match(cases());
  EXPECT_EQ(cases().size(), 45u);
  EXPECT_GE(with_grads, 29);
}

TEST(NumpyLinalgTest, JitEqualsEager) {
  for (const char* name : {"lvn_3_keep", "lmn_1", "lmp_5", "lmd_vec_ends", "vecmat", "lmn_nuc_keep",
                           "lnorm_axes_m2_keep", "lmp_m3"}) {
    SCOPED_TRACE(name);
    const Fn& fn = cases().at(name);
    std::vector<Array> xs = inputs(name);
    auto jitted = jit([&](const std::vector<Array>& a) { return fn(a); });
    EXPECT_EQ(jitted(xs).to_vector<float>(), fn(xs).to_vector<float>());
  }
}

TEST(NumpyLinalgTest, MisuseIsAnError) {
  const Array v = ones({3}), m = ones({2, 3});
  expect_error([&] { linalg::matrix_norm(v); }, "[linalg.matrix_norm]");
  expect_error([&] { linalg::matrix_norm(m, "3"); }, "[linalg.matrix_norm]");
  expect_error([&] { linalg::matrix_norm(complex(m, m), "2"); }, "[linalg.matrix_norm]");
  expect_error([&] { linalg::matrix_power(m, 2); }, "[linalg.matrix_power]");
  expect_error([&] { linalg::matrix_power(m, -1); }, "[linalg.matrix_power]");
  expect_error([&] { linalg::multi_dot({m}); }, "[multi_dot]");
  expect_error([&] { linalg::multi_dot({m, ones({3, 2, 1}), v}); }, "[multi_dot]");
  expect_error([&] { linalg::norm(ones({2, 2, 2}), "1"); }, "[linalg.norm]");
  expect_error([&] { linalg::norm(v, "x"); }, "[linalg.norm]");
  expect_error([&] { linalg::norm(m, "nuc", Axes{1, -1}); }, "[linalg.norm]");
  expect_error([&] { linalg::norm(m, "2", Axes{2}); }, "[linalg.norm]");
  expect_error([&] { linalg::norm(m, "x", Axes{0, 1}); }, "[linalg.matrix_norm]");
  expect_error([&] { linalg::cross(ones({2, 2}), ones({2, 2})); }, "[linalg.cross]");
  expect_error([&] { matvec(v, v); }, "[matvec]");
}

// A negative power is the inverse's: a^-2 a^2 is the identity, and a singular a gives what
// inv gives (no error, as in JAX).
TEST(NumpyLinalgTest, NegativePowersInvert) {
  const Array a = array<double>({2, 1, 0, 1, 3, 1, 0, 1, 4}, Shape{3, 3});
  const std::vector<double> id =
      matmul(linalg::matrix_power(a, -2), linalg::matrix_power(a, 2)).to_vector<double>();
  for (int i = 0; i < 9; ++i) EXPECT_NEAR(id[i], i % 4 == 0 ? 1.0 : 0.0, 1e-12) << i;
  EXPECT_EQ(linalg::matrix_power(a, -1).to_vector<double>(), linalg::inv(a).to_vector<double>());
  EXPECT_NO_THROW(linalg::matrix_power(ones({2, 2}), -1).to_vector<float>());
}

}  // namespace
}  // namespace graft
