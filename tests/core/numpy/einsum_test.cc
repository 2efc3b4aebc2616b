// graft::einsum (core/numpy/einsum.cc) against jnp.einsum.
//
// How the vectors were made: the einsum_* cases of tests/core/testdata/jnp_array_vectors.txt
// were written by tools/make_jnp_array_vectors.py, which ran jnp.einsum (JAX 0.10.2 on CPU,
// x64 off) on seeded float32 standard-normal inputs and stored the inputs, the output and
// jax.grad of sum(out * ct) w.r.t. every input for a stored cotangent ct. Compared here with
// f32 tolerances (1e-5 absolute + 1e-5 relative); shapes and dtypes exactly. Also: jit of
// einsum equals eager, vmap of einsum equals a loop over the batch, einsum equals matmul /
// tensordot where both apply, and misuse throws graft::Error starting "[einsum]".
#include <cmath>
#include <cstdlib>
#include <fstream>
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

// The einsum cases of tools/make_jnp_array_vectors.py: name -> subscripts.
const std::map<std::string, std::string>& cases() {
  static const auto* c = new std::map<std::string, std::string>{
      {"einsum_matmul", "ij,jk->ik"},
      {"einsum_batched", "bij,bjk->bik"},
      {"einsum_outer", "i,j->ij"},
      {"einsum_trace", "ii"},
      {"einsum_diag", "ii->i"},
      {"einsum_transpose", "ij->ji"},
      {"einsum_sum", "ij->"},
      {"einsum_chain", "ij,jk,kl->il"},
      {"einsum_ellipsis", "...ij,...jk->...ik"},
      {"einsum_ellipsis_bcast", "...ij,...jk->...ik"},
      {"einsum_implicit", "ij,jk"},
      {"einsum_implicit_t", "ba"},
      {"einsum_bilinear", "i,ij,j->"},
      {"einsum_diag_pair", "iij,jk->ik"},
      {"einsum_attention", "bhqd,bhkd->bhqk"},
      {"einsum_sum_unique", "ijk,jl->il"},
      {"einsum_batch_out_perm", "bij,bjk->kbi"},
      {"einsum_upper_implicit", "bA,Cb"},
      {"einsum_ellipsis_implicit", "...ij,...jk"},
      {"einsum_ellipsis_summed", "...ij->ij"},
  };
  return *c;
}

TEST(EinsumVectors, AllCasesPresent) {
  ASSERT_FALSE(vectors().empty()) << "could not read jnp_array_vectors.txt";
  for (const auto& [name, spec] : cases()) EXPECT_TRUE(has_vec(name + ".grad0")) << name;
  for (const auto& [key, v] : vectors()) {
    std::string name = key.substr(0, key.find('.'));
    if (name.rfind("einsum_", 0) == 0) {
      EXPECT_TRUE(cases().count(name)) << name;
    }
  }
}

TEST(EinsumVectors, OutputsMatchJax) {
  for (const auto& [name, spec] : cases()) {
    SCOPED_TRACE(name + " " + spec);
    expect_matches(einsum(spec, inputs(name)), name + ".out0");
  }
}

TEST(EinsumVectors, GradientsMatchJax) {
  for (const auto& [name, spec] : cases()) {
    SCOPED_TRACE(name + " " + spec);
    Array ct = to_array(vectors().at(name + ".ct"));
    std::string s = spec;
    auto loss = [&](const std::vector<Array>& xs) { return sum(multiply(einsum(s, xs), ct)); };
    std::vector<Array> g = grad(loss)(inputs(name));
    for (size_t k = 0; k < g.size(); ++k) expect_matches(g[k], name + ".grad" + std::to_string(k));
  }
}

TEST(EinsumTransforms, JitMatchesEager) {
  for (const auto& [name, spec] : cases()) {
    SCOPED_TRACE(name + " " + spec);
    std::string s = spec;
    Array eager = einsum(s, inputs(name));
    Array jitted = jit([s](const std::vector<Array>& xs) { return einsum(s, xs); })(inputs(name));
    EXPECT_EQ(eager.shape(), jitted.shape());
    std::vector<float> e = eager.to_vector<float>(), j = jitted.to_vector<float>();
    ASSERT_EQ(e.size(), j.size());
    for (size_t i = 0; i < e.size(); ++i) EXPECT_NEAR(e[i], j[i], 1e-5 * (1 + std::fabs(e[i])));
  }
}

TEST(EinsumTransforms, JitOfGradMatchesGrad) {
  for (const char* name : {"einsum_chain", "einsum_diag_pair", "einsum_ellipsis_bcast"}) {
    SCOPED_TRACE(name);
    std::string s = cases().at(name);
    Array ct = to_array(vectors().at(std::string(name) + ".ct"));
    auto loss = [s, ct](const std::vector<Array>& xs) { return sum(multiply(einsum(s, xs), ct)); };
    std::vector<Array> g = grad(loss)(inputs(name)), jg = jit(grad(loss))(inputs(name));
    ASSERT_EQ(g.size(), jg.size());
    for (size_t k = 0; k < g.size(); ++k) {
      std::vector<float> a = g[k].to_vector<float>(), b = jg[k].to_vector<float>();
      ASSERT_EQ(a.size(), b.size());
      for (size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i], b[i], 1e-5 * (1 + std::fabs(a[i])));
    }
  }
}

// vmap over a new leading axis of the first operand (the others unbatched) equals the loop.
TEST(EinsumTransforms, VmapMatchesLoop) {
  for (const char* spec : {"ij,jk->ik", "ii->i", "ij,jk,kl->il", "...ij,...jk->...ik", "ij->"}) {
    SCOPED_TRACE(spec);
    std::string s = spec;
    std::string name;
    for (const auto& [n, sp] : cases()) {
      if (sp == s) name = n;
    }
    std::vector<Array> xs = inputs(name);
    const int kB = 3;
    std::vector<Array> batch;
    for (int b = 0; b < kB; ++b) batch.push_back(multiply(xs[0], Array(1.0f + 0.5f * b)));
    Array stacked = stack(batch, 0);
    std::vector<Array> rest(xs.begin() + 1, xs.end());
    auto f = [s](const Array& first, const std::vector<Array>& others) {
      std::vector<Array> all{first};
      all.insert(all.end(), others.begin(), others.end());
      return einsum(s, all);
    };
    Array got = vmap(f, {0, none})(stacked, rest);
    std::vector<Array> want;
    for (int b = 0; b < kB; ++b) want.push_back(f(batch[b], rest));
    Array w = stack(want, 0);
    ASSERT_EQ(got.shape(), w.shape());
    std::vector<float> g = got.to_vector<float>(), e = w.to_vector<float>();
    for (size_t i = 0; i < g.size(); ++i) EXPECT_NEAR(g[i], e[i], 1e-5 * (1 + std::fabs(e[i])));
    // And batched on the last axis of the first operand.
    Array got_last = vmap(f, {-1, none})(moveaxis(stacked, 0, -1), rest);
    std::vector<float> gl = got_last.to_vector<float>();
    for (size_t i = 0; i < gl.size(); ++i) EXPECT_NEAR(gl[i], e[i], 1e-5 * (1 + std::fabs(e[i])));
  }
}

TEST(Einsum, AgreesWithOtherOps) {
  Array a = reshape(arange(12.0f), {3, 4}), b = reshape(arange(20.0f), {4, 5});
  EXPECT_EQ(einsum("ij,jk->ik", a, b).to_vector<float>(), matmul(a, b).to_vector<float>());
  EXPECT_EQ(einsum("ij->ji", a).to_vector<float>(), transpose(a).to_vector<float>());
  Array sq = reshape(arange(9.0f), {3, 3});
  EXPECT_EQ(einsum("ii", sq).item<float>(), 0.0f + 4 + 8);
  EXPECT_EQ(einsum("ii->i", sq).to_vector<float>(), (std::vector<float>{0, 4, 8}));
  // A scalar operand, and a label of size 1 broadcasting against a larger one.
  EXPECT_EQ(einsum(",ij->ij", scalar(2.0, DType::kF32), a).to_vector<float>(),
            multiply(a, 2.0f).to_vector<float>());
  Array row = ones({1, 4});
  EXPECT_EQ(einsum("ij,ij->ij", row, a).shape(), (Shape{3, 4}));
}

TEST(Einsum, Dtypes) {
  Array i = reshape(arange(6), {2, 3});
  EXPECT_EQ(einsum("ij,kj->ik", i, i).dtype(), DType::kI32);
  EXPECT_EQ(einsum("ij,kj->ik", i, i).to_vector<int>(), (std::vector<int>{5, 14, 14, 50}));
  Array h = ones({2, 3}, DType::kBF16);
  EXPECT_EQ(einsum("ij,kj->ik", h, h).dtype(), DType::kBF16);
  EXPECT_EQ(einsum("ij,kj->ik", h, ones({2, 3})).dtype(), DType::kF32);
}

TEST(Einsum, Path) {
  // x [2, 3], y [3, 100], z [100, 5]: y @ z first (a [3, 5] result), then x with it.
  Array x = zeros({2, 3}), y = zeros({3, 100}), z = zeros({100, 5});
  auto path = einsum_path("ij,jk,kl->il", {x, y, z});
  ASSERT_EQ(path.size(), 2u);
  EXPECT_EQ(path[0], (std::pair<int, int>{1, 2}));
  EXPECT_EQ(path[1], (std::pair<int, int>{0, 1}));
  EXPECT_EQ(einsum("ij,jk,kl->il", x, y, z).shape(), (Shape{2, 5}));
}

template <typename F>
void expect_einsum_error(F f, const std::string& contains) {
  try {
    f();
    ADD_FAILURE() << "no error; expected [einsum] ... " << contains;
  } catch (const Error& e) {
    std::string m = e.what();
    EXPECT_EQ(m.rfind("[einsum] ", 0), 0u) << m;
    EXPECT_NE(m.find(contains), std::string::npos) << m;
  }
}

TEST(Einsum, BadSubscripts) {
  Array a = zeros({3, 4}), b = zeros({4, 5});
  expect_einsum_error([&] { einsum("ij,jk->ik", a); }, "name 2 operands, got 1");
  expect_einsum_error([&] { einsum("ij", a, b); }, "name 1 operands, got 2");
  expect_einsum_error([&] { einsum("ijk,jk->i", a, b); }, "operand 0 has 2 dims");
  expect_einsum_error([&] { einsum("i,jk->i", a, b); }, "operand 0 has 2 dims");
  expect_einsum_error([&] { einsum("ij,jk->ik", a, zeros({5, 5})); }, "label has sizes 4 and 5");
  expect_einsum_error([&] { einsum("ij,jk->iz", a, b); }, "not in any input");
  expect_einsum_error([&] { einsum("ij,jk->ii", a, b); }, "repeat a label");
  expect_einsum_error([&] { einsum("i1,jk->ik", a, b); }, "invalid character '1'");
  expect_einsum_error([&] { einsum("..ij,jk->ik", a, b); }, "invalid ellipsis");
  expect_einsum_error([&] { einsum("ij,jk->ik->i", a, b); }, "more than one output");
  expect_einsum_error([&] { einsum("ij,jk-ik", a, b); }, "invalid '->'");
  expect_einsum_error([&] { einsum("ii", zeros({2, 3})); }, "label has sizes 2 and 3");
  expect_einsum_error([&] { einsum("ij", std::vector<Array>{}); }, "at least one operand");
}

}  // namespace
}  // namespace graft
