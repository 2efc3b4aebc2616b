// The MoE Llama: its scan over groups of (dense..., MoE) layers equals the same model written
// as a plain loop over layers from the public pieces (llama_layer, llama_attention_block,
// moe_apply), in value and gradient; parameter counts match the initialized tree.
#include "nn/moe_llama.h"

#include "core/ops.h"
#include "core/random/random.h"
#include "gtest/gtest.h"
#include "nn/cross_entropy.h"
#include "nn/norm.h"
#include "nn/rope.h"
#include "tests/util/test_vectors.h"
#include "transforms/autodiff.h"

namespace graft::nn {
namespace {

Array at(const Array& a, int64_t i) { return squeeze(slice_axis(a, 0, i, i + 1), {0}); }

// The reference: layer by layer, no scan, no grouping.
Array unrolled_loss(const MoELlamaParams& p, const Array& x, const Array& y,
                    const MoELlamaConfig& c) {
  const LlamaConfig& b = c.base;
  const int64_t B = x.shape()[0], T = x.shape()[1], D = b.dim;
  RopeTables rope = rope_tables(T, b.head_dim(), b.rope_theta, b.rope_scaling);
  Array h = take(p.embed, x, 0);
  Array moe_loss = zeros({});
  for (int64_t l = 0; l < b.n_layers; ++l) {
    const int64_t g = l / c.moe_every, j = l % c.moe_every;
    if (j + 1 < c.moe_every) {
      LlamaLayer dl = tree_map([&](const Array& a) { return at(at(a, g), j); }, *p.dense);
      h = llama_layer(dl, h, rope, b);
      continue;
    }
    MoELlamaLayer m = tree_map([&](const Array& a) { return at(a, g); }, p.moe_layers);
    h = llama_attention_block(attention_weights(m), h, rope, b);
    MoEOutput o = moe_apply(m.moe, reshape(rms_norm(h, m.ffn_norm, b.norm_eps), {B * T, D}), c.moe);
    h = h + reshape(o.y, {B, T, D});
    moe_loss = moe_loss + o.stats.loss;
  }
  h = rms_norm(h, p.final_norm, b.norm_eps);
  return mean(softmax_cross_entropy(matmul(h, *p.output), y)) + moe_loss;
}

void expect_equal_to_unrolled(int64_t moe_every) {
  MoELlamaConfig c = MoELlamaConfig::tiny();
  c.base.n_layers = 4;
  c.moe_every = moe_every;
  MoELlamaParams p = moe_llama_init(c, random::key(3));
  Array x = random::randint(random::key(4), {2, 16}, 0, c.base.vocab_size);
  Array y = random::randint(random::key(5), {2, 16}, 0, c.base.vocab_size);
  auto loss = [&](const MoELlamaParams& q) { return moe_llama_loss(q, x, y, c).loss; };
  auto ref = [&](const MoELlamaParams& q) { return unrolled_loss(q, x, y, c); };
  auto [l1, g1] = value_and_grad(loss)(p);
  auto [l2, g2] = value_and_grad(ref)(p);
  testing::expect_allclose(l1, l2, 1e-5, 1e-6, "loss");
  auto a = tree_leaves(g1), b = tree_leaves(g2);
  auto paths = tree_leaf_paths(tree_structure(g1));
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    double scale = max(abs(b[i])).item<float>() + 1e-12;
    testing::expect_allclose(a[i], b[i], 1e-4, 1e-4 * scale, "grad " + paths[i]);
  }
}

TEST(MoELlamaTest, EveryLayerMoeEqualsTheUnrolledModel) { expect_equal_to_unrolled(1); }
TEST(MoELlamaTest, EverySecondLayerMoeEqualsTheUnrolledModel) { expect_equal_to_unrolled(2); }

// Against the same model run in JAX (tools/make_moe_llama_vectors.py: the plain-jnp Llama
// blocks of make_llama_vectors.py with the MoE layer of make_moe_vectors.py in every layer).
TEST(MoELlamaTest, LossAndEveryGradientEqualJax) {
  auto tv = testing::TestVectors::Load("tests/nn/testdata/moe_llama_tiny.json");
  ASSERT_TRUE(tv.ok()) << tv.status();
  MoELlamaConfig c;
  c.base.vocab_size = 64;
  c.base.dim = 16;
  c.base.n_layers = 2;
  c.base.n_heads = 4;
  c.base.n_kv_heads = 2;
  c.base.ffn_dim = 12;
  c.moe.dim = 16;
  c.moe.n_experts = 4;
  c.moe.top_k = 2;
  c.moe.expert_ffn_dim = 12;
  c.moe.n_shared_experts = 1;
  c.moe.shared_ffn_dim = 12;
  c.moe.aux_loss_weight = 0.01;
  c.moe.z_loss_weight = 0.001;
  c.moe_every = 1;
  auto [leaves, def] = tree_flatten(moe_llama_init(c, random::key(0)));
  std::vector<std::string> paths = tree_leaf_paths(def);
  for (size_t i = 0; i < leaves.size(); ++i) leaves[i] = tv->get("param." + paths[i]);
  MoELlamaParams p = tree_unflatten<MoELlamaParams>(def, leaves);
  Array x = tv->get("tokens"), y = tv->get("targets");
  auto [l, g] =
      value_and_grad([&](const MoELlamaParams& q) { return moe_llama_loss(q, x, y, c).loss; })(p);
  testing::expect_allclose(l, tv->get("loss"), 1e-5, 1e-6, "loss");
  testing::expect_allclose(moe_llama_loss(p, x, y, c).cross_entropy, tv->get("cross_entropy"), 1e-5,
                           1e-6, "cross_entropy");
  std::vector<Array> grads = tree_leaves(g);
  for (size_t i = 0; i < grads.size(); ++i) {
    Array want = tv->get("grad." + paths[i]);
    double scale = max(abs(want)).item<float>();
    testing::expect_allclose(grads[i], want, 1e-4, 1e-4 * scale, "grad " + paths[i]);
  }
}

TEST(MoELlamaTest, ParameterCountsMatchTheInitializedTree) {
  MoELlamaConfig c = MoELlamaConfig::tiny();
  c.base.n_layers = 4;
  c.moe_every = 2;
  int64_t n = 0;
  for (const Array& a : tree_leaves(moe_llama_init(c, random::key(0)))) n += a.size();
  EXPECT_EQ(count_params(c), n);
  // Active: every expert but top_k / n_experts of them per MoE layer.
  const int64_t inactive =
      c.groups() * (c.moe.n_experts - c.moe.top_k) * 3 * c.base.dim * c.moe.expert_ffn_dim;
  const int64_t embed_and_norms = c.base.vocab_size * c.base.dim + 2 * 4 * c.base.dim + c.base.dim;
  EXPECT_EQ(count_active_matmul_params(c), n - inactive - embed_and_norms);
}

TEST(MoELlamaTest, BadConfigsAreErrors) {
  MoELlamaConfig c = MoELlamaConfig::tiny();
  c.moe_every = 3;  // 2 layers
  EXPECT_THROW(c.validate(), Error);
  c = MoELlamaConfig::tiny();
  c.moe.dim = 10;
  EXPECT_THROW(c.validate(), Error);
}

}  // namespace
}  // namespace graft::nn
