// jax.nn parity: activations (values and gradients), the functions over axes, one_hot and the
// initializers, against values recorded by running JAX 0.10.2 on CPU (f32, x64 off):
// tests/nn/testdata/jax_nn_vectors.json, written by
//   ~/.cache/graft-peers/venv/bin/python tools/make_jax_nn_vectors.py
// (see its docstring for what each entry is). Gradients are jax.grad of sum(f(x)) on an input
// with 0, +-1, -3, 3, 6 (the kinks) and +-100, and second derivatives (grad of the sum of
// that); for the functions over axes, grad of a weighted sum. Initializers are compared bit for bit
// where graft draws the same samples with the same f32 arithmetic, and to rounding for orthogonal
// (graft's own QR). Also: vmap and jit of some of them equal eager, and the errors.
#include <cmath>
#include <cstring>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/ops.h"
#include "core/random/random.h"
#include "gtest/gtest.h"
#include "nn/activations.h"
#include "nn/init.h"
#include "tests/util/test_vectors.h"
#include "transforms/autodiff.h"
#include "transforms/jit.h"
#include "transforms/vmap.h"

namespace graft::nn {
namespace {

using testing::expect_allclose;
using testing::TestVectors;

const TestVectors& vectors() { return TestVectors::Cached("tests/nn/testdata/jax_nn_vectors.json"); }

using Fn = std::function<Array(const Array&)>;

// The tool's MASK (recorded as 0 / 1).
Array mask() { return not_equal(vectors().get("vec/mask"), 0.0); }

const std::map<std::string, Fn>& elementwise() {
  static const auto* m = new std::map<std::string, Fn>{
      {"relu", [](const Array& x) { return relu(x); }},
      {"relu6", [](const Array& x) { return relu6(x); }},
      {"sigmoid", [](const Array& x) { return sigmoid(x); }},
      {"softplus", [](const Array& x) { return softplus(x); }},
      {"soft_sign", [](const Array& x) { return soft_sign(x); }},
      {"log_sigmoid", [](const Array& x) { return log_sigmoid(x); }},
      {"leaky_relu", [](const Array& x) { return leaky_relu(x); }},
      {"leaky_relu_0.2", [](const Array& x) { return leaky_relu(x, 0.2); }},
      {"elu", [](const Array& x) { return elu(x); }},
      {"elu_0.5", [](const Array& x) { return elu(x, 0.5); }},
      {"celu", [](const Array& x) { return celu(x); }},
      {"celu_2", [](const Array& x) { return celu(x, 2.0); }},
      {"selu", [](const Array& x) { return selu(x); }},
      {"silu", [](const Array& x) { return silu(x); }},
      {"swish", [](const Array& x) { return swish(x); }},
      {"gelu", [](const Array& x) { return gelu(x); }},
      {"gelu_exact", [](const Array& x) { return gelu(x, false); }},
      {"mish", [](const Array& x) { return mish(x); }},
      {"hard_sigmoid", [](const Array& x) { return hard_sigmoid(x); }},
      {"hard_silu", [](const Array& x) { return hard_silu(x); }},
      {"hard_swish", [](const Array& x) { return hard_swish(x); }},
      {"hard_tanh", [](const Array& x) { return hard_tanh(x); }},
      {"squareplus", [](const Array& x) { return squareplus(x); }},
      {"squareplus_1", [](const Array& x) { return squareplus(x, 1.0); }},
      {"sparse_plus", [](const Array& x) { return sparse_plus(x); }},
      {"sparse_sigmoid", [](const Array& x) { return sparse_sigmoid(x); }},
      {"identity", [](const Array& x) { return identity(x); }},
  };
  return *m;
}

Array grad_of_sum(const Fn& f, const Array& x) {
  return grad([&](const Array& v) { return sum(f(v)); })(x);
}

// Exact equality (expect_allclose with no tolerance would divide 0 by 0).
void expect_equal(const Array& got, const Array& want, const std::string& what) {
  expect_allclose(got, want, 0, 1e-300, what);
}

// f32 formulas that differ from XLA's in the last bits (tanh, erf, exp kernels).
constexpr double kRtol = 2e-6, kAtol = 1e-6;

TEST(JaxNnParity, ElementwiseValuesAndGradients) {
  const Array x = vectors().get("act/x");
  for (const auto& [name, f] : elementwise()) {
    SCOPED_TRACE(name);
    Array y = f(x);
    EXPECT_EQ(y.dtype(), DType::kF32);
    expect_allclose(y, vectors().get("act/" + name + "/value"), kRtol, kAtol, name + " value");
    expect_allclose(grad_of_sum(f, x), vectors().get("act/" + name + "/grad"), kRtol, kAtol,
                    name + " grad");
  }
}

// Second derivatives through the custom_jvp rules and the kinks (grad of the sum of the
// first derivative, elementwise f'').
TEST(JaxNnParity, SecondDerivatives) {
  const Array x = vectors().get("act/x");
  for (const auto& [name, f] : elementwise()) {
    SCOPED_TRACE(name);
    auto d1 = [&](const Array& v) { return sum(grad_of_sum(f, v)); };
    expect_allclose(grad(d1)(x), vectors().get("act/" + name + "/grad2"), 1e-5, 1e-6,
                    name + " grad2");
  }
}

TEST(JaxNnParity, EveryRecordedActivationIsChecked) {
  for (const auto& [key, a] : vectors().arrays()) {
    if (key.rfind("act/", 0) != 0 || key == "act/x") continue;
    std::string name = key.substr(4, key.rfind('/') - 4);
    EXPECT_TRUE(elementwise().count(name)) << "no graft function for " << key;
  }
}

TEST(JaxNnParity, KinksFollowJax) {
  // relu'(0) = 0 (custom_jvp), relu6'(6) = 0, hard_tanh'(1) = 1 (where), celu'(0) = 1 (the
  // halves of max and min at the tie), leaky_relu'(0) = 1 (x >= 0).
  Array x = array<float>({0.0f, 6.0f, 1.0f, -1.0f});
  EXPECT_EQ(grad_of_sum([](const Array& v) { return relu(v); }, x).to_vector<float>(),
            (std::vector<float>{0, 1, 1, 0}));
  EXPECT_EQ(grad_of_sum([](const Array& v) { return relu6(v); }, x).to_vector<float>(),
            (std::vector<float>{0, 0, 1, 0}));
  EXPECT_EQ(grad_of_sum([](const Array& v) { return hard_tanh(v); }, x).to_vector<float>(),
            (std::vector<float>{1, 0, 1, 1}));
  EXPECT_EQ(grad_of_sum([](const Array& v) { return celu(v); }, x).to_vector<float>()[0], 1.0f);
  EXPECT_EQ(grad_of_sum([](const Array& v) { return leaky_relu(v); }, x).to_vector<float>()[0],
            1.0f);
}

TEST(JaxNnParity, Log1mexp) {
  Array x = vectors().get("log1mexp/x");
  auto f = [](const Array& v) { return log1mexp(v); };
  expect_allclose(f(x), vectors().get("log1mexp/value"), kRtol, kAtol, "log1mexp value");
  expect_allclose(grad_of_sum(f, x), vectors().get("log1mexp/grad"), 1e-5, kAtol, "log1mexp grad");
}

TEST(JaxNnParity, FunctionsOverAxes) {
  const std::map<std::string, std::pair<std::string, Fn>> cases = {
      {"softmax", {"vec/x", [](const Array& v) { return softmax(v); }}},
      {"softmax_axis0", {"vec/x", [](const Array& v) { return softmax(v, 0); }}},
      {"softmax_all",
       {"vec/xs",
        [](const Array& v) {
          return softmax(v, Axes{0, 1});
        }}},
      {"log_softmax", {"vec/x", [](const Array& v) { return log_softmax(v); }}},
      {"log_softmax_axis0", {"vec/x", [](const Array& v) { return log_softmax(v, 0); }}},
      {"log_softmax_all",
       {"vec/xs",
        [](const Array& v) {
          return log_softmax(v, Axes{0, 1});
        }}},
      {"logsumexp_axis1", {"vec/x", [](const Array& v) { return logsumexp(v, {1}); }}},
      {"logsumexp_axis0_keep",
       {"vec/x", [](const Array& v) { return logsumexp(v, {0}, /*keepdims=*/true); }}},
      {"logmeanexp_axis1", {"vec/x", [](const Array& v) { return logmeanexp(v, {1}); }}},
      {"standardize", {"vec/xs", [](const Array& v) { return standardize(v); }}},
      {"standardize_axis0", {"vec/xs", [](const Array& v) { return standardize(v, {0}); }}},
      {"standardize_all_eps",
       {"vec/xs",
        [](const Array& v) {
          return standardize(v, {0, 1}, std::nullopt, std::nullopt, /*epsilon=*/0.1);
        }}},
      {"softmax_where", {"vec/x", [](const Array& v) { return softmax(v, -1, mask()); }}},
      {"softmax_where_axis0", {"vec/x", [](const Array& v) { return softmax(v, 0, mask()); }}},
      {"log_softmax_where",
       {"vec/x",
        [](const Array& v) {
          return where(mask(), log_softmax(v, -1, mask()), zeros_like(v));  // as recorded
        }}},
      {"logsumexp_where",
       {"vec/x", [](const Array& v) { return logsumexp(v, {.axes = {1}, .where = mask()}); }}},
      {"logsumexp_b",
       {"vec/x",
        [](const Array& v) {
          return logsumexp(v, {.axes = {1}, .b = vectors().get("vec/b_pos")});
        }}},
      {"logsumexp_b_sign",
       {"vec/x",
        [](const Array& v) {
          auto [out, sign] =
              logsumexp_with_sign(v, {.axes = {1}, .b = vectors().get("vec/b_mixed")});
          return stack({out, sign});
        }}},
      {"logsumexp_b_where_all",
       {"vec/x",
        [](const Array& v) {
          return logsumexp(v, {.b = vectors().get("vec/b_pos"), .where = mask()});
        }}},
      {"glu_axis0", {"vec/x", [](const Array& v) { return glu(v, 0); }}},
      {"glu_last",
       {"vec/x",
        [](const Array& v) {
          return glu(reshape(v, {11, 2}));
        }}},
  };
  for (const auto& [name, c] : cases) {
    SCOPED_TRACE(name);
    const auto& [input, f] = c;
    Array x = vectors().get(input);
    Array y = f(x);
    expect_allclose(y, vectors().get("vec/" + name + "/value"), 1e-5, kAtol, name + " value");
    Array w = reshape(linspace(0.5, 1.5, y.size()), y.shape());
    Array g = grad([&](const Array& v) { return sum(w * f(v)); })(x);
    // (glu_last's JAX input was x reshaped to (11, 2): the same elements.)
    expect_allclose(g, reshape(vectors().get("vec/" + name + "/grad"), x.shape()), 1e-5, kAtol,
                    name + " grad");
  }
}

// Where the recorded vectors cannot hold the value: -inf where log_softmax's where= leaves an
// element out, 0 for softmax's, and NaN for logsumexp with b whose scaled sum is negative
// (JAX's; with return_sign the same row is (log|sum|, -1)).
TEST(JaxNnParity, MaskedAndNegativeSums) {
  const Array x = vectors().get("vec/x");
  const std::vector<uint8_t> m = mask().to_vector<uint8_t>();
  const std::vector<float> ls = log_softmax(x, -1, mask()).to_vector<float>();
  const std::vector<float> sm = softmax(x, -1, mask()).to_vector<float>();
  for (size_t i = 0; i < m.size(); ++i) {
    if (m[i]) continue;
    EXPECT_EQ(ls[i], -INFINITY) << i;
    EXPECT_EQ(sm[i], 0.0f) << i;
  }
  const Array b = vectors().get("vec/b_mixed");
  const std::vector<float> plain = logsumexp(x, {.axes = {1}, .b = b}).to_vector<float>();
  const auto [mag, sign] = logsumexp_with_sign(x, {.axes = {1}, .b = b});
  EXPECT_FLOAT_EQ(plain[0], mag.to_vector<float>()[0]);
  EXPECT_TRUE(std::isnan(plain[1]));
  EXPECT_EQ(sign.to_vector<float>(), (std::vector<float>{1, -1}));
  try {
    softmax(x, -1, x);
    ADD_FAILURE() << "a float where was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("[softmax] where must be bool", 0), 0u) << e.what();
  }
}

TEST(JaxNnParity, OneHot) {
  expect_equal(one_hot(array<int32_t>({0, 2, -1, 5, 1}), 4), vectors().get("one_hot"), "one_hot");
  expect_equal(one_hot(array<int32_t>({0, 3, 1, 2}, Shape{2, 2}), 4, DType::kF32, 0),
               vectors().get("one_hot_axis0"), "one_hot axis 0");
}

// Exact equality of f32 bits (0 == -0 excepted: both are zeros).
void expect_same_bits(const Array& got, const Array& want, const std::string& what) {
  ASSERT_EQ(got.shape(), want.shape()) << what;
  ASSERT_EQ(got.dtype(), DType::kF32) << what;
  std::vector<float> g = got.to_vector<float>(), w = want.to_vector<float>();
  int bad = 0;
  for (size_t i = 0; i < g.size(); ++i) {
    if (g[i] != w[i] && bad++ < 3) {
      ADD_FAILURE() << what << "[" << i << "]: got " << g[i] << ", JAX " << w[i];
    }
  }
  EXPECT_EQ(bad, 0) << what;
}

TEST(JaxNnParity, InitializersBitForBit) {
  const Array key = random::key(42);
  const Shape m = {5, 7}, conv = {3, 3, 4, 6};
  const std::map<std::string, Array> got = {
      {"lecun_uniform_5x7", lecun_uniform(key, m)},
      {"lecun_normal_5x7", lecun_normal(key, m)},
      {"lecun_normal_conv", lecun_normal(key, conv)},
      {"glorot_uniform_5x7", glorot_uniform(key, m)},
      {"glorot_normal_5x7", glorot_normal(key, m)},
      {"xavier_uniform_conv", xavier_uniform(key, conv)},
      {"he_uniform_5x7", he_uniform(key, m)},
      {"he_normal_5x7", he_normal(key, m)},
      {"kaiming_normal_conv", kaiming_normal(key, conv)},
      {"vs_normal_fan_out_2.5",
       variance_scaling(key, m, 2.5, FanMode::kFanOut, Distribution::kNormal)},
      {"vs_uniform_fan_avg_0.3",
       variance_scaling(key, {6, 4}, 0.3, FanMode::kFanAvg, Distribution::kUniform)},
      {"uniform_default", uniform_init(key, m)},
      {"uniform_10", uniform_init(key, m, 10.0)},
      {"normal_default", normal_init(key, m)},
      {"normal_3", normal_init(key, m, 3.0)},
      {"truncated_normal_default", truncated_normal_init(key, m)},
      {"constant_m7", constant_init(key, {2, 3}, -7.0)},
      {"zeros", zeros_init(key, {2, 3})},
      {"ones", ones_init(key, {2, 3})},
  };
  for (const auto& [name, a] : got) expect_same_bits(a, vectors().get("init/" + name), name);
}

TEST(JaxNnParity, Orthogonal) {
  const Array key = random::key(42);
  const std::map<std::string, Array> got = {
      {"orthogonal_5x7", orthogonal(key, {5, 7})},
      {"orthogonal_7x5", orthogonal(key, {7, 5})},
      {"orthogonal_3x4x6_scale2", orthogonal(key, {3, 4, 6}, 2.0)},
      {"orthogonal_4x6_axis0", orthogonal(key, {4, 6}, 1.0, /*column_axis=*/0)},
      {"delta_orthogonal_3x4x4", delta_orthogonal(key, {3, 4, 4})},
  };
  for (const auto& [name, a] : got) {
    expect_allclose(a, vectors().get("init/" + name), 1e-5, 2e-6, name);
  }
  // Orthonormal rows of a wide matrix: w w^T = I.
  Array w = orthogonal(random::key(3), {16, 40});
  expect_allclose(matmul(w, transpose(w)), eye(16), 0, 1e-5, "w w^T");
  EXPECT_THROW(orthogonal(key, {4}), Error);
  EXPECT_THROW(delta_orthogonal(key, {3, 5, 4}), Error);
  EXPECT_EQ(orthogonal(key, {0, 3}).shape(), (Shape{0, 3}));
}

TEST(JaxNnParity, VmapAndJitEqualEager) {
  Array x = vectors().get("vec/x");  // (2, 11)
  for (const char* name : {"softplus", "relu", "mish", "sparse_plus"}) {
    SCOPED_TRACE(name);
    const Fn& f = elementwise().at(name);
    Array eager = f(x);
    expect_equal(vmap(f)(x), eager, std::string(name) + " vmap");
    expect_allclose(jit(f)(x), eager, 1e-6, 1e-7, std::string(name) + " jit");
    // jit(vmap(grad)) of the per-row sum.
    auto row_grad = [&](const Array& r) {
      return grad([&](const Array& v) { return sum(f(v)); })(r);
    };
    expect_allclose(jit(vmap(row_grad))(x), grad_of_sum(f, x), 1e-6, 1e-7,
                    std::string(name) + " jit(vmap(grad))");
  }
  auto g = [](const Array& v) { return glu(v, 0); };
  Array batched = stack({x, x * 0.5f, -x});  // (3, 2, 11)
  expect_equal(vmap(g)(batched), stack({g(x), g(x * 0.5f), g(-x)}), "glu vmap");
  auto sm = [](const Array& v) { return softmax(v, Axes{0, 1}); };
  expect_allclose(jit(sm)(x * 0.1f), sm(x * 0.1f), 1e-6, 1e-7, "softmax(all) jit");
}

TEST(JaxNnParity, ForwardModeAndSecondOrder) {
  // The custom_jvp functions in forward mode: jvp with a ones tangent equals the gradient of
  // the sum (elementwise), for every activation.
  const Array x = vectors().get("act/x");
  for (const auto& [name, f] : elementwise()) {
    auto [y, t] = jvp(f, std::tuple{x}, std::tuple{ones_like(x)});
    expect_allclose(t, vectors().get("act/" + name + "/grad"), kRtol, kAtol, name + " jvp");
  }
  // softplus'' = sigmoid (1 - sigmoid): differentiating through its custom_jvp rule.
  Array small = linspace(-4.0, 4.0, 9);
  auto d1 = [](const Array& v) {
    return sum(grad([](const Array& u) { return sum(softplus(u)); })(v));
  };
  Array s = sigmoid(small);
  expect_allclose(grad(d1)(small), s * (1.0 - s), 1e-5, 1e-6, "softplus''");
}

TEST(JaxNnParity, DtypesAsInJax) {
  // Elementwise activations keep a low-precision dtype (the C++ scalars are weak).
  Array h = astype(vectors().get("act/x"), DType::kBF16);
  for (const auto& [name, f] : elementwise()) EXPECT_EQ(f(h).dtype(), DType::kBF16) << name;
  // relu of integers stays integer (jnp.maximum(x, 0)).
  EXPECT_EQ(relu(array<int32_t>({-2, 0, 3})).to_vector<int32_t>(), (std::vector<int32_t>{0, 0, 3}));
}

TEST(JaxNnParity, Errors) {
  EXPECT_THROW(glu(zeros({3, 5})), Error);     // odd last axis
  EXPECT_THROW(glu(zeros({4, 2}), 2), Error);  // axis out of range
}

}  // namespace
}  // namespace graft::nn
