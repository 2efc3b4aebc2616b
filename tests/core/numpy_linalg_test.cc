// graft's composable jnp.linalg functions (core/ops_numpy_linalg.h) against jnp.linalg.
//
// How the vectors were made: tools/make_jnp_linalg_vectors.py ran JAX 0.10.2 on CPU (x64
// off) on seeded float32 standard-normal inputs and wrote tests/core/testdata/
// jnp_linalg_vectors.txt: inputs, JAX's output and, where marked, jax.grad of
// sum(out * ct) for a stored cotangent ct. Compared with f32 tolerances (1e-5 absolute + 1e-5
// relative); shapes and dtypes exactly. Also: jit equals eager, and misuse throws
// graft::Error naming the op.
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "core/ops.h"
#include "gtest/gtest.h"
#include "tests/core/jnp_array_vectors.h"
#include "transforms/autodiff.h"
#include "transforms/jit.h"

namespace graft {
namespace {

using namespace jnp_vectors;
using Fn = std::function<Array(const std::vector<Array>&)>;
constexpr double kInf = std::numeric_limits<double>::infinity();

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
  };
  return *c;
}

TEST(NumpyLinalgTest, ValuesAndGradientsMatchJax) {
  const int with_grads = expect_cases_match(cases());
  EXPECT_EQ(cases().size(), 30u);
  EXPECT_GE(with_grads, 15);
}

TEST(NumpyLinalgTest, JitEqualsEager) {
  for (const char* name : {"lvn_3_keep", "lmn_1", "lmp_5", "lmd_vec_ends", "vecmat"}) {
    SCOPED_TRACE(name);
    const Fn& fn = cases().at(name);
    std::vector<Array> xs = inputs(name);
    auto jitted = jit([&](const std::vector<Array>& a) { return fn(a); });
    EXPECT_EQ(jitted(xs).to_vector<float>(), fn(xs).to_vector<float>());
  }
}

TEST(NumpyLinalgTest, MisuseIsAnError) {
  const Array v = ones({3}), m = ones({2, 3});
  expect_error([&] { linalg::matrix_norm(v); }, "[matrix_norm]");
  expect_error([&] { linalg::matrix_norm(m, "nuc"); }, "[matrix_norm]");
  expect_error([&] { linalg::matrix_power(m, 2); }, "[matrix_power]");
  expect_error([&] { linalg::matrix_power(ones({2, 2}), -1); }, "[matrix_power]");
  expect_error([&] { linalg::multi_dot({m}); }, "[multi_dot]");
  expect_error([&] { linalg::multi_dot({m, ones({3, 2, 1}), v}); }, "[multi_dot]");
  expect_error([&] { linalg::norm(ones({2, 2, 2}), "1"); }, "[norm]");
  expect_error([&] { linalg::norm(v, "x"); }, "[norm]");
  expect_error([&] { linalg::cross(ones({2, 2}), ones({2, 2})); }, "[linalg.cross]");
  expect_error([&] { matvec(v, v); }, "[matvec]");
}

}  // namespace
}  // namespace graft
