// The Llama model against a plain-JAX implementation (tools/make_llama_vectors.py: an
// independent jnp model with a per-layer loop and full log-softmax; params, tokens, logits,
// loss and jax.value_and_grad gradients recorded into testdata/llama_*.json), plus
// internal consistency checks: scanned == unrolled layers, remat policies give the same
// gradients, bf16 compute close to f32, parameter counts, config validation.
#include "nn/llama.h"

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "core/ops.h"
#include "core/random/random.h"
#include "gtest/gtest.h"
#include "tests/util/test_vectors.h"
#include "transforms/autodiff.h"

namespace graft::nn {
namespace {

using testing::expect_allclose;
using testing::TestVectors;

TestVectors load(const std::string& name) {
  auto tv = TestVectors::Load("tests/nn/testdata/" + name + ".json");
  if (!tv.ok()) throw Error(std::string(tv.status().message()));
  return *tv;
}

// The configs the vectors were made with (see CASES in the script and each file's meta).
LlamaConfig tiny_config() { return LlamaConfig::tiny(); }
LlamaConfig tied_scaled_config() {
  LlamaConfig c;
  c.vocab_size = 64;
  c.dim = 32;
  c.n_layers = 2;
  c.n_heads = 4;
  c.n_kv_heads = 1;
  c.ffn_dim = 96;
  c.tied_output = true;
  c.rope_scaling = RopeScaling{8.0, 1.0, 4.0, 64};
  return c;
}

LlamaParams load_params(const TestVectors& tv, const std::string& prefix) {
  auto g = [&](const std::string& n) { return tv.get(prefix + n); };
  LlamaParams p;
  p.embed = g("embed");
  p.final_norm = g("final_norm");
  if (tv.has(prefix + "output")) p.output = g("output");
  p.layers = {g("layers.attn_norm"),
              g("layers.wq"),
              g("layers.wk"),
              g("layers.wv"),
              g("layers.wo"),
              g("layers.ffn_norm"),
              {g("layers.ffn.w1"), g("layers.ffn.w2"), g("layers.ffn.w3")}};
  return p;
}

std::vector<std::pair<std::string, Array>> named(const LlamaParams& p) {
  std::vector<std::pair<std::string, Array>> out = {{"embed", p.embed},
                                                    {"layers.attn_norm", p.layers.attn_norm},
                                                    {"layers.wq", p.layers.wq},
                                                    {"layers.wk", p.layers.wk},
                                                    {"layers.wv", p.layers.wv},
                                                    {"layers.wo", p.layers.wo},
                                                    {"layers.ffn_norm", p.layers.ffn_norm},
                                                    {"layers.ffn.w1", p.layers.ffn.w1},
                                                    {"layers.ffn.w2", p.layers.ffn.w2},
                                                    {"layers.ffn.w3", p.layers.ffn.w3},
                                                    {"final_norm", p.final_norm}};
  if (p.output) out.push_back({"output", *p.output});
  return out;
}

double max_abs(const Array& a) { return max(abs(a)).item<double>(); }

// rtol 1e-4, atol 1e-4 of the array's largest magnitude (gradients of different params
// differ by orders of magnitude).
void expect_grads_close(const LlamaParams& got, const LlamaParams& want, double rtol,
                        const std::string& what) {
  auto g = named(got), w = named(want);
  ASSERT_EQ(g.size(), w.size()) << what;
  for (size_t i = 0; i < g.size(); ++i) {
    ASSERT_EQ(g[i].second.shape(), w[i].second.shape()) << g[i].first;
    expect_allclose(g[i].second, w[i].second, rtol, rtol * max_abs(w[i].second),
                    what + " " + g[i].first);
  }
}

void check_against_jax(const std::string& file, const LlamaConfig& base) {
  TestVectors tv = load(file);
  LlamaParams p = load_params(tv, "params.");
  Array tokens = tv.get("tokens"), targets = tv.get("targets");
  for (int64_t chunk : {int64_t(1024), int64_t(7)}) {  // one chunk, and a padded last chunk
    LlamaConfig c = base;
    c.loss_chunk_tokens = chunk;
    SCOPED_TRACE("chunk " + std::to_string(chunk));
    expect_allclose(llama_logits(p, tokens, c), tv.get("logits"), 1e-4, 1e-5, "logits");
    auto [loss, grads] =
        value_and_grad([&](const LlamaParams& q) { return llama_loss(q, tokens, targets, c); })(p);
    expect_allclose(loss, tv.get("loss"), 1e-5, 0, "loss");
    expect_grads_close(grads, load_params(tv, "grad."), 1e-4, file + " grad");
    expect_allclose(llama_loss(p, tokens, targets, c, tv.get("mask")), tv.get("loss_masked"), 1e-5,
                    0, "masked loss");
  }
}

TEST(LlamaTest, TinyMatchesJax) { check_against_jax("llama_tiny", tiny_config()); }

TEST(LlamaTest, TiedOutputWithLlama3RopeScalingMatchesJax) {
  check_against_jax("llama_tied_scaled", tied_scaled_config());
}

TEST(LlamaTest, ScaledRopeDiffersFromUnscaled) {
  // Guards the test above: the scaling must change the result on these positions.
  TestVectors tv = load("llama_tied_scaled");
  LlamaConfig c = tied_scaled_config();
  c.rope_scaling.reset();
  Array got = llama_logits(load_params(tv, "params."), tv.get("tokens"), c);
  EXPECT_GT(max_abs(got - tv.get("logits")), 1e-2);
}

Array tokens_for(const LlamaConfig& c, int64_t B, int64_t T, uint32_t seed) {
  return random::randint(random::key(seed), {B, T}, 0, c.vocab_size);
}

TEST(LlamaTest, ScannedLayersEqualUnrolledLoop) {
  LlamaConfig c = tiny_config();
  LlamaParams p = llama_init(c, random::key(3));
  Array x = tokens_for(c, 2, 16, 4), y = tokens_for(c, 2, 16, 5);
  auto run = [&](bool scan_layers) {
    LlamaConfig cc = c;
    cc.scan_layers = scan_layers;
    return value_and_grad([&](const LlamaParams& q) { return llama_loss(q, x, y, cc); })(p);
  };
  auto [l_scan, g_scan] = run(true);
  auto [l_loop, g_loop] = run(false);
  expect_allclose(l_scan, l_loop, 1e-6, 0, "loss");
  expect_grads_close(g_scan, g_loop, 1e-5, "scan vs loop");
  LlamaConfig unrolled = c;
  unrolled.scan_layers = false;
  expect_allclose(llama_hidden(p, x, c), llama_hidden(p, x, unrolled), 1e-5, 1e-6, "hidden");
}

TEST(LlamaTest, RematPoliciesGiveEqualGradients) {
  LlamaConfig c = tiny_config();
  LlamaParams p = llama_init(c, random::key(6));
  Array x = tokens_for(c, 2, 16, 7), y = tokens_for(c, 2, 16, 8);
  auto run = [&](Remat r, bool scan_layers) {
    LlamaConfig cc = c;
    cc.remat = r;
    cc.scan_layers = scan_layers;
    return value_and_grad([&](const LlamaParams& q) { return llama_loss(q, x, y, cc); })(p);
  };
  auto [l0, g0] = run(Remat::kNone, true);
  for (Remat r : {Remat::kDotsSaveable, Remat::kNothingSaveable}) {
    for (bool scan_layers : {true, false}) {
      auto [l, g] = run(r, scan_layers);
      expect_allclose(l, l0, 1e-6, 0, "loss");
      expect_grads_close(g, g0, 1e-5, "remat " + std::to_string(int(r)));
    }
  }
}

TEST(LlamaTest, Bf16ComputeIsCloseToF32) {
  TestVectors tv = load("llama_tiny");
  LlamaParams p = load_params(tv, "params.");
  Array x = tv.get("tokens"), y = tv.get("targets");
  LlamaConfig c = tiny_config();
  c.compute_dtype = DType::kBF16;
  EXPECT_EQ(llama_hidden(p, x, c).dtype(), DType::kBF16);
  Array logits = llama_logits(p, x, c);
  EXPECT_EQ(logits.dtype(), DType::kF32);
  // bf16 has 8 mantissa bits: logits of size ~0.1-0.7 agree to ~1e-2.
  expect_allclose(logits, tv.get("logits"), 5e-2, 2e-2, "bf16 logits");
  auto [loss, g] = value_and_grad([&](const LlamaParams& q) { return llama_loss(q, x, y, c); })(p);
  EXPECT_EQ(g.layers.wq.dtype(), DType::kF32);  // params and their grads stay f32
  expect_allclose(loss, tv.get("loss"), 1e-2, 0, "bf16 loss");
  LlamaParams want = load_params(tv, "grad.");
  // Loose: the direction of each gradient matches (cosine > 0.99).
  auto gw = named(g), ww = named(want);
  for (size_t i = 0; i < gw.size(); ++i) {
    double dot = sum(gw[i].second * ww[i].second).item<double>();
    double n1 = std::sqrt(sum(square(gw[i].second)).item<double>());
    double n2 = std::sqrt(sum(square(ww[i].second)).item<double>());
    EXPECT_GT(dot / (n1 * n2), 0.99) << gw[i].first;
  }
}

TEST(LlamaTest, InitShapesStatisticsAndCounts) {
  LlamaConfig c = LlamaConfig::tiny();
  LlamaParams p = llama_init(c, random::key(0));
  EXPECT_EQ(p.layers.wq.shape(), (Shape{2, 64, 64}));
  EXPECT_EQ(p.layers.wk.shape(), (Shape{2, 64, 32}));
  EXPECT_EQ(p.layers.ffn.w2.shape(), (Shape{2, 192, 64}));
  ASSERT_TRUE(p.output.has_value());
  EXPECT_EQ(p.output->shape(), (Shape{64, 256}));
  auto stdev = [](const Array& a) { return std::sqrt(var(a).item<double>()); };
  EXPECT_NEAR(stdev(p.embed), 0.02, 0.001);
  EXPECT_NEAR(stdev(p.layers.ffn.w1), 0.02, 0.001);
  EXPECT_NEAR(stdev(p.layers.wo), 0.02 / 2.0, 0.0008);  // 1 / sqrt(2 * 2 layers)
  EXPECT_NEAR(stdev(p.layers.ffn.w2), 0.01, 0.0005);
  EXPECT_EQ(min(p.layers.attn_norm).item<double>(), 1.0);
  int64_t leaves = 0;
  for (const Array& a : tree_leaves(p)) leaves += a.size();
  EXPECT_EQ(count_params(c), leaves);
  c.tied_output = true;
  int64_t tied_leaves = 0;
  for (const Array& a : tree_leaves(llama_init(c, random::key(0)))) tied_leaves += a.size();
  EXPECT_EQ(count_params(c), tied_leaves);
}

TEST(LlamaTest, FlopsPerTokenLlamaSmall) {
  // By hand: per layer 512*512*2 (wq, wo) + 512*256*2 (wk, wv) + 3*512*1536 = 3145728,
  // N = 8 * 3145728 + 512 * 8192 = 29360128; 6 N + 12 * 8 * 8 * 64 * 256 = 188743680.
  LlamaConfig c = LlamaConfig::small();
  EXPECT_EQ(count_matmul_params(c), 29360128);
  EXPECT_DOUBLE_EQ(flops_per_token(c, 256), 188743680.0);
}

void expect_invalid(LlamaConfig c, const std::string& needle) {
  try {
    c.validate();
    ADD_FAILURE() << "no error for " << needle;
  } catch (const Error& e) {
    std::string m = e.what();
    EXPECT_EQ(m.rfind("[LlamaConfig]", 0), 0u) << m;
    EXPECT_NE(m.find(needle), std::string::npos) << m;
  }
}

TEST(LlamaTest, ConfigValidation) {
  EXPECT_NO_THROW(LlamaConfig::tiny().validate());
  EXPECT_NO_THROW(LlamaConfig::small().validate());
  LlamaConfig c;
  c.dim = 66;
  expect_invalid(c, "divisible by n_heads");
  c = {};
  c.n_kv_heads = 3;
  expect_invalid(c, "multiple of n_kv_heads");
  c = {};
  c.dim = 12;
  c.n_heads = 4;  // head_dim 3
  c.n_kv_heads = 1;
  expect_invalid(c, "even");
  c = {};
  c.vocab_size = 0;
  expect_invalid(c, "vocab_size");
  c = {};
  c.compute_dtype = DType::kF16;
  expect_invalid(c, "compute_dtype");
  c = {};
  c.norm_eps = 0;
  expect_invalid(c, "norm_eps");
  c = {};
  c.rope_scaling = RopeScaling{8.0, 4.0, 1.0, 8192};  // high <= low
  EXPECT_THROW(c.validate(), Error);
  // Misuse at the call: untied config without output weights, bad token shapes.
  LlamaParams p = llama_init(LlamaConfig::tiny(), random::key(0));
  EXPECT_THROW(llama_hidden(p, zeros({4}, DType::kI32), LlamaConfig::tiny()), Error);
  EXPECT_THROW(llama_hidden(p, zeros({1, 4}, DType::kF32), LlamaConfig::tiny()), Error);
  p.output.reset();
  EXPECT_THROW(llama_logits(p, zeros({1, 4}, DType::kI32), LlamaConfig::tiny()), Error);
}

}  // namespace
}  // namespace graft::nn
