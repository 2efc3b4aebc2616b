// graft's jax.numpy array ops (core/numpy/lax_numpy.h) against JAX.
//
// How the vectors were made: tests/core/testdata/jnp_array_vectors.txt was written by
// tools/make_jnp_array_vectors.py, which ran jax.numpy (JAX 0.10.2 on CPU, x64 off) on seeded
// float32 standard-normal inputs and stored the inputs, JAX's outputs and, for tensordot,
// kron, diagonal and trace, jax.grad of sum(out * ct) for a stored cotangent ct. Each case
// here repeats the op and static arguments of the script's case of the same name; outputs
// and gradients are compared with f32 tolerances (1e-5 absolute + 1e-5 relative), shapes
// and dtypes exactly. The einsum cases of the same file are in einsum_test.cc.
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "core/ops.h"
#include "core/numpy/lax_numpy.h"
#include "gtest/gtest.h"
#include "tests/core/numpy/jnp_array_vectors.h"
#include "transforms/autodiff.h"
#include "transforms/jit.h"
#include "transforms/vmap.h"

namespace graft {
namespace {

using namespace jnp_vectors;

using Fn = std::function<std::vector<Array>(const std::vector<Array>&)>;
Fn one(std::function<Array(const std::vector<Array>&)> f) {
  return [f](const std::vector<Array>& x) { return std::vector<Array>{f(x)}; };
}

// The cases of tools/make_jnp_array_vectors.py other than einsum, by name.
const std::map<std::string, Fn>& cases() {
  using V = const std::vector<Array>&;
  static const auto* c = new std::map<std::string, Fn>{
      {"tensordot_2", one([](V x) { return tensordot(x[0], x[1], 2); })},
      {"tensordot_pairs", one([](V x) {
         return tensordot(x[0], x[1], {0, 2}, {1, 0});
       })},
      {"tensordot_0", one([](V x) { return tensordot(x[0], x[1], 0); })},
      {"inner", one([](V x) { return inner(x[0], x[1]); })},
      {"vdot", one([](V x) { return vdot(x[0], x[1]); })},
      {"kron", one([](V x) { return kron(x[0], x[1]); })},
      {"kron_1d_2d", one([](V x) { return kron(x[0], x[1]); })},
      {"tril_0", one([](V x) { return tril(x[0]); })},
      {"tril_1", one([](V x) { return tril(x[0], 1); })},
      {"tril_batch_m1", one([](V x) { return tril(x[0], -1); })},
      {"triu_0", one([](V x) { return triu(x[0]); })},
      {"triu_m1", one([](V x) { return triu(x[0], -1); })},
      {"triu_batch_2", one([](V x) { return triu(x[0], 2); })},
      {"tri_3_4_1", one([](V) { return tri(3, 4, 1); })},
      {"tri_3", one([](V) { return tri(3); })},
      {"diag_1d", one([](V x) { return diag(x[0]); })},
      {"diag_1d_k2", one([](V x) { return diag(x[0], 2); })},
      {"diag_1d_km1", one([](V x) { return diag(x[0], -1); })},
      {"diag_2d_k1", one([](V x) { return diag(x[0], 1); })},
      {"diagonal_0", one([](V x) { return diagonal(x[0]); })},
      {"diagonal_1", one([](V x) { return diagonal(x[0], 1); })},
      {"diagonal_m2", one([](V x) { return diagonal(x[0], -2); })},
      {"diagonal_axes", one([](V x) { return diagonal(x[0], 0, 1, 2); })},
      {"diagonal_axes_rev", one([](V x) { return diagonal(x[0], -1, 2, 0); })},
      {"diagonal_empty", one([](V x) { return diagonal(x[0], 5); })},
      {"trace_0", one([](V x) { return trace(x[0]); })},
      {"trace_1", one([](V x) { return trace(x[0], 1); })},
      {"trace_axes", one([](V x) { return trace(x[0], 0, 2, 0); })},
      {"roll_flat", one([](V x) { return roll(x[0], 2); })},
      {"roll_axis", one([](V x) { return roll(x[0], -1, 1); })},
      {"roll_multi", one([](V x) {
         return roll(x[0], std::vector<int64_t>{1, 5}, {0, 1});
       })},
      {"fliplr", one([](V x) { return fliplr(x[0]); })},
      {"flipud", one([](V x) { return flipud(x[0]); })},
      {"rot90_1", one([](V x) { return rot90(x[0]); })},
      {"rot90_2", one([](V x) { return rot90(x[0], 2); })},
      {"rot90_3_axes", one([](V x) {
         return rot90(x[0], 3, {1, 2});
       })},
      {"rot90_m1_axes", one([](V x) {
         return rot90(x[0], -1, {2, 0});
       })},
      {"atleast_1d_s", one([](V x) { return atleast_1d(x[0]); })},
      {"atleast_2d_s", one([](V x) { return atleast_2d(x[0]); })},
      {"atleast_2d_v", one([](V x) { return atleast_2d(x[0]); })},
      {"atleast_3d_s", one([](V x) { return atleast_3d(x[0]); })},
      {"atleast_3d_v", one([](V x) { return atleast_3d(x[0]); })},
      {"atleast_3d_m", one([](V x) { return atleast_3d(x[0]); })},
      {"hstack_1d", one([](V x) { return hstack(x); })},
      {"hstack_2d", one([](V x) { return hstack(x); })},
      {"vstack_1d", one([](V x) { return vstack(x); })},
      {"vstack_2d", one([](V x) { return vstack(x); })},
      {"dstack", one([](V x) { return dstack(x); })},
      {"column_stack", one([](V x) { return column_stack(x); })},
      {"meshgrid_xy", [](V x) { return meshgrid(x); }},
      {"meshgrid_ij", [](V x) { return meshgrid(x, "ij"); }},
      {"diff_1", one([](V x) { return diff(x[0]); })},
      {"diff_2_axis0", one([](V x) { return diff(x[0], 2, 0); })},
      {"ediff1d", one([](V x) { return ediff1d(x[0], x[1], x[2]); })},
      {"ptp_all", one([](V x) { return ptp(x[0]); })},
      {"ptp_axis1", one([](V x) { return ptp(x[0], {1}, true); })},
      {"average_plain", one([](V x) { return average(x[0], {0}); })},
      {"average_w_same", one([](V x) { return average(x[0], {}, abs(x[1])); })},
      {"average_w_axis", one([](V x) { return average(x[0], {1}, abs(x[1])); })},
      {"average_w_axes", one([](V x) {
         return average(x[0], {2, 0}, abs(x[1]));
       })},
      {"cross_3", one([](V x) { return cross(x[0], x[1]); })},
      {"cross_3_2", one([](V x) { return cross(x[0], x[1]); })},
      {"cross_2", one([](V x) { return cross(x[0], x[1]); })},
      {"cross_axes", one([](V x) { return cross(x[0], x[1], 0, 0, 0); })},
  };
  return *c;
}

TEST(NumpyArrayVectors, AllCasesPresent) {
  ASSERT_FALSE(vectors().empty()) << "could not read jnp_array_vectors.txt";
  for (const auto& [name, fn] : cases()) {
    EXPECT_TRUE(has_vec(name + ".out0")) << name;
  }
  // Every non-einsum case of the file is run here.
  for (const auto& [key, v] : vectors()) {
    if (v.file != "jnp_array_vectors.txt") continue;  // linalg_test's cases
    std::string name = key.substr(0, key.find('.'));
    if (name.rfind("einsum_", 0) != 0) {
      EXPECT_TRUE(cases().count(name)) << name;
    }
  }
}

TEST(NumpyArrayVectors, OutputsMatchJax) {
  for (const auto& [name, fn] : cases()) {
    SCOPED_TRACE(name);
    std::vector<Array> out = fn(inputs(name));
    for (size_t k = 0; k < out.size(); ++k)
      expect_matches(out[k], name + ".out" + std::to_string(k));
    EXPECT_FALSE(has_vec(name + ".out" + std::to_string(out.size()))) << "JAX gave more outputs";
  }
}

TEST(NumpyArrayVectors, GradientsMatchJax) {
  int checked = 0;
  for (const auto& [name, fn] : cases()) {
    if (!has_vec(name + ".ct")) continue;
    SCOPED_TRACE(name);
    Array ct = to_array(vectors().at(name + ".ct"));
    auto loss = [&](const std::vector<Array>& xs) { return sum(multiply(fn(xs)[0], ct)); };
    std::vector<Array> g = grad(loss)(inputs(name));
    for (size_t k = 0; k < g.size(); ++k) expect_matches(g[k], name + ".grad" + std::to_string(k));
    ++checked;
  }
  EXPECT_GE(checked, 10);
}

TEST(NumpyArrayVectors, JitMatchesEager) {
  for (const char* name : {"kron", "diagonal_axes_rev", "trace_axes", "roll_multi", "rot90_3_axes",
                           "average_w_axes", "cross_3", "meshgrid_xy", "tensordot_pairs"}) {
    SCOPED_TRACE(name);
    const Fn& fn = cases().at(name);
    std::vector<Array> eager = fn(inputs(name));
    std::vector<Array> jitted =
        jit([&](const std::vector<Array>& xs) { return fn(xs); })(inputs(name));
    ASSERT_EQ(eager.size(), jitted.size());
    for (size_t k = 0; k < eager.size(); ++k) {
      EXPECT_EQ(eager[k].shape(), jitted[k].shape());
      EXPECT_EQ(eager[k].to_vector<float>(), jitted[k].to_vector<float>());
    }
  }
}

// vmap over a new leading axis of every input (three scaled copies) equals the loop.
TEST(NumpyArrayTransforms, VmapMatchesLoop) {
  int checked = 0;
  for (const auto& [name, fn] : cases()) {
    std::vector<Array> xs = inputs(name);
    if (xs.empty()) continue;
    SCOPED_TRACE(name);
    std::vector<std::vector<Array>> copies;
    for (float s : {1.0f, -2.0f, 0.5f}) {
      std::vector<Array> c;
      for (const Array& x : xs) c.push_back(multiply(x, Array(s)));
      copies.push_back(c);
    }
    std::vector<Array> stacked;
    for (size_t k = 0; k < xs.size(); ++k) {
      stacked.push_back(stack({copies[0][k], copies[1][k], copies[2][k]}, 0));
    }
    std::vector<Array> got = vmap([&](const std::vector<Array>& x) { return fn(x); })(stacked);
    for (size_t o = 0; o < got.size(); ++o) {
      std::vector<Array> per;
      for (const auto& c : copies) per.push_back(fn(c)[o]);
      Array want = stack(per, 0);
      ASSERT_EQ(got[o].shape(), want.shape());
      std::vector<float> g = astype(got[o], DType::kF32).to_vector<float>();
      std::vector<float> w = astype(want, DType::kF32).to_vector<float>();
      for (size_t i = 0; i < g.size(); ++i) EXPECT_NEAR(g[i], w[i], 1e-5 * (1 + std::fabs(w[i])));
    }
    ++checked;
  }
  EXPECT_GE(checked, 50);
}

template <typename F>
void expect_error(F f, const std::string& prefix) {
  try {
    f();
    ADD_FAILURE() << "no error; expected one starting with " << prefix;
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).rfind(prefix, 0), 0u) << e.what();
  }
}

TEST(NumpyArrayErrors, NameTheOp) {
  expect_error([] { tril(zeros({3})); }, "[tril] needs an array of rank >= 2");
  expect_error([] { triu(zeros({3})); }, "[triu]");
  expect_error([] { diagonal(zeros({3, 3}), 0, 1, 1); }, "[diagonal] axis1 and axis2");
  expect_error([] { diag(zeros({2, 2, 2})); }, "[diag]");
  expect_error([] { tensordot(zeros({2, 3}), zeros({4, 5}), 1); }, "[tensordot] contracted dims");
  expect_error([] { rot90(zeros({2, 2}), 1, {0, 0}); }, "[rot90] axes must be different");
  expect_error([] { roll(zeros({2, 2}), 1, 2); }, "[roll] axis 2 is out of bounds");
  expect_error([] { meshgrid({zeros({2, 2})}); }, "[meshgrid] arguments must be 1-D");
  expect_error([] { meshgrid({zeros({2})}, "xz"); }, "[meshgrid] indexing");
  expect_error([] { diff(zeros({3}), -1); }, "[diff] order must be non-negative");
  expect_error([] { cross(zeros({4}), zeros({3})); }, "[cross] vector dims must be 2 or 3");
  expect_error([] { average(zeros({2, 3}), {}, zeros({3})); }, "[average] axes must be given");
}

TEST(NumpyArrayDtypes, FollowJax) {
  Array i = reshape(arange(6), {2, 3});
  EXPECT_EQ(tril(i).dtype(), DType::kI32);
  EXPECT_EQ(trace(i).dtype(), DType::kI32);
  EXPECT_EQ(trace(i).item<int>(), 0 + 4);
  EXPECT_EQ(average(i).dtype(), DType::kF32);
  EXPECT_EQ(kron(i, ones({2}, DType::kBF16)).dtype(), DType::kBF16);
  EXPECT_EQ(tri(2, 2, 0, DType::kI32).to_vector<int>(), (std::vector<int>{1, 0, 1, 1}));
  Array b = array<bool>({true, true, false});
  EXPECT_EQ(diff(b).dtype(), DType::kBool);
  EXPECT_EQ(astype(diff(b), DType::kI32).to_vector<int>(), (std::vector<int>{0, 1}));
}

}  // namespace
}  // namespace graft
