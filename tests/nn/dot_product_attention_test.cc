// nn::dot_product_attention against jax.nn.dot_product_attention (JAX 0.10.2, XLA on CPU, f32):
// tests/nn/testdata/dot_product_attention_vectors.json, written by
//   ~/.cache/graft-peers/venv/bin/python tools/make_attention_vectors.py
// For each case: the output, and jax.grad of sum(out * w) w.r.t. query, key, value (and bias).
// Also: jit and vmap agree with eager, and bad inputs throw "[dot_product_attention] ...".
#include "nn/dot_product_attention.h"

#include <string>
#include <vector>

#include "core/ops.h"
#include "gtest/gtest.h"
#include "tests/util/test_vectors.h"
#include "transforms/autodiff.h"
#include "transforms/jit.h"
#include "transforms/vmap.h"

namespace graft::nn {
namespace {

using testing::expect_allclose;
using testing::TestVectors;

const TestVectors& vectors() { return TestVectors::Cached("tests/nn/testdata/dot_product_attention_vectors.json"); }

bool has(const std::string& name) { return vectors().arrays().count(name) != 0; }

struct Case {
  std::string name;
  DotProductAttentionOptions options;
};

void check_case(const Case& c) {
  SCOPED_TRACE(c.name);
  auto get = [&](const std::string& k) { return vectors().get(c.name + "/" + k); };
  DotProductAttentionOptions o = c.options;
  if (has(c.name + "/q_len")) o.query_seq_lengths = get("q_len");
  if (has(c.name + "/kv_len")) o.key_value_seq_lengths = get("kv_len");
  std::optional<Array> mask;
  if (has(c.name + "/mask")) mask = astype(get("mask"), DType::kBool);
  const bool with_bias = has(c.name + "/bias");
  std::vector<Array> in{get("q"), get("k"), get("v")};
  if (with_bias) in.push_back(get("bias"));
  auto attend = [&](const std::vector<Array>& x) {
    return dot_product_attention(x[0], x[1], x[2],
                                 x.size() > 3 ? std::optional<Array>(x[3]) : std::nullopt, mask,
                                 o);
  };
  const double rtol = 1e-5, atol = 2e-6;
  expect_allclose(attend(in), get("out"), rtol, atol, c.name + "/out");
  Array w = get("w");
  std::vector<Array> g = grad([&](const std::vector<Array>& x) { return sum(attend(x) * w); })(in);
  expect_allclose(g[0], get("dq"), rtol, atol, c.name + "/dq");
  expect_allclose(g[1], get("dk"), rtol, atol, c.name + "/dk");
  expect_allclose(g[2], get("dv"), rtol, atol, c.name + "/dv");
  if (with_bias) expect_allclose(g[3], get("dbias"), rtol, atol, c.name + "/dbias");
}

TEST(DotProductAttention, MatchesJaxValuesAndGradients) {
  check_case({"gqa", {}});
  check_case({"bias_mask_scale", {.scale = 0.3}});
  check_case({"bias_per_head", {}});
  check_case({"causal_square", {.is_causal = true}});  // the fused causal_attention path
  check_case({"causal_rect_gqa", {.is_causal = true}});
  check_case({"seq_lengths", {}});
  check_case({"causal_kv_len_mask", {.is_causal = true}});
  check_case({"unbatched", {}});
}

TEST(DotProductAttention, JitAndVmapAgreeWithEager) {
  auto get = [](const std::string& k) { return vectors().get("bias_mask_scale/" + k); };
  Array q = get("q"), k = get("k"), v = get("v"), bias = get("bias");
  auto f = [&](const Array& q, const Array& k, const Array& v) {
    return dot_product_attention(q, k, v, bias, std::nullopt, {.is_causal = true});
  };
  Array eager = f(q, k, v);
  expect_allclose(jit(f)(q, k, v), eager, 1e-6, 1e-7, "jit");
  // vmap over the batch of unbatched calls (bias fixed to batch 0's, broadcast over heads).
  Array b0 = slice(bias, {0, 0, 0, 0}, {1, 1, 3, 5});
  auto one = [&](const Array& q, const Array& k, const Array& v) {
    return dot_product_attention(q, k, v, b0, std::nullopt, {.is_causal = true});
  };
  Array batched = vmap(one)(q, k, v);
  for (int64_t b = 0; b < 2; ++b) {
    Array want = one(take(q, Array(int(b)), 0), take(k, Array(int(b)), 0),
                     take(v, Array(int(b)), 0));
    expect_allclose(take(batched, Array(int(b)), 0), want, 1e-6, 1e-7, "vmap");
  }
}

TEST(DotProductAttention, RejectsBadInputs) {
  Array q = zeros({1, 2, 4, 8}), k = zeros({1, 3, 2, 8});
  auto expect_error = [](const std::function<void()>& f, const std::string& what) {
    try {
      f();
      ADD_FAILURE() << "no error: " << what;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("dot_product_attention"), std::string::npos)
          << e.what();
    }
  };
  expect_error([&] { dot_product_attention(zeros({1, 2, 3, 8}), k, k); }, "heads");
  expect_error([&] { dot_product_attention(q, k, zeros({1, 3, 2, 4})); }, "value shape");
  expect_error([&] { dot_product_attention(q, zeros({1, 3, 2, 4}), zeros({1, 3, 2, 4})); },
               "head dim");
  expect_error([&] { dot_product_attention(zeros({2, 4, 8}), k, k); }, "ranks");
  expect_error([&] { dot_product_attention(q, k, k, std::nullopt, zeros({1, 1, 2, 3})); },
               "mask dtype");
  expect_error(
      [&] {
        dot_product_attention(q, k, k, std::nullopt, std::nullopt,
                              {.query_seq_lengths = zeros({2}, DType::kI32)});
      },
      "lengths");
  expect_error([&] { dot_product_attention(astype(q, DType::kI32), k, k); }, "dtype");
}

}  // namespace
}  // namespace graft::nn
