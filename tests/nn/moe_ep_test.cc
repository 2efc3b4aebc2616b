// Expert parallelism by annotations (nn/moe.h MoESharding) over 4 virtual devices
// (GRAFT_CPU_DEVICES=8, BUILD.bazel): jit of an MoE layer, and of the MoE Llama's loss and
// gradients, with the experts split over the mesh axis equals the same jit on one device
// without annotations; the partitioned program exchanges tokens with all_to_all and never
// gathers the expert weights.
#include <string>
#include <vector>

#include "core/ops.h"
#include "core/random/random.h"
#include "core/sharding/device_put.h"
#include "gtest/gtest.h"
#include "tests/transforms/pass_test_util.h"
#include "nn/moe.h"
#include "nn/moe_llama.h"
#include "tests/util/test_vectors.h"
#include "transforms/autodiff.h"
#include "transforms/jit.h"

namespace graft::nn {
namespace {

using graft::testing::expect_allclose;

using pass_test::count;

// The all_gathers of the printed program whose result has the shape of an expert weight
// block stack (`shape`, e.g. "f32[4,8,6]"): there must be none.
int gathers_of(const std::string& text, const std::string& shape) {
  int n = 0;
  size_t at = 0;
  while ((at = text.find("all_gather", at)) != std::string::npos) {
    const size_t line = text.rfind('\n', at);
    if (text.substr(line + 1, at - line).find(shape) != std::string::npos) ++n;
    ++at;
  }
  return n;
}

const Mesh& mesh4() {
  static const Mesh m({4}, {"ep"});
  return m;
}

MoEConfig layer_cfg() {
  MoEConfig c;
  c.dim = 8;
  c.n_experts = 8;
  c.top_k = 2;
  c.expert_ffn_dim = 6;
  c.n_shared_experts = 1;
  c.shared_ffn_dim = 5;
  c.z_loss_weight = 0.001;
  c.init_std = 0.3;
  c.capacity_factor = 1.25;  // some assignments drop: the drops must agree too
  c.token_groups = 8;
  return c;
}

// Experts (w1 / w3 / w2) split on E over 'ep'; everything else replicated.
MoEParams place(const MoEParams& p, const Mesh& mesh, int e_dim) {
  MoEParams q = p;
  std::vector<DimSplit> spec(static_cast<size_t>(e_dim), none);
  spec.push_back("ep");
  NamedSharding by_expert(mesh, PartitionSpec(spec));
  q.w1 = device_put(p.w1, by_expert);
  q.w3 = device_put(p.w3, by_expert);
  q.w2 = device_put(p.w2, by_expert);
  return q;
}

TEST(MoEExpertParallel, LayerEqualsOneDevice) {
  MoEConfig plain = layer_cfg(), ep = layer_cfg();
  ep.sharding = MoESharding{mesh4(), "ep"};
  MoEParams p = moe_init(plain, random::key(1));
  Array x = random::normal(random::key(2), {64, 8});
  Array r = random::normal(random::key(3), {64, 8});
  auto step = [&](const MoEConfig& c) {
    return [&, c](const MoEParams& q, const Array& xx) {
      return value_and_grad(
          [&](const MoEParams& q, const Array& xx) {
            MoEOutput o = moe_apply(q, xx, c);
            return sum(o.y * r) + o.stats.loss;
          },
          argnums<0, 1>)(q, xx);
    };
  };
  auto one = jit(step(plain));
  auto sharded = jit(step(ep));
  MoEParams pp = place(p, mesh4(), 0);
  Array xs = device_put(x, NamedSharding(mesh4(), P("ep")));
  auto [l1, g1] = sharded(pp, xs);
  auto [l2, g2] = one(p, x);
  expect_allclose(l1, l2, 1e-5, 1e-6, "loss");
  auto a = tree_leaves(std::get<0>(g1)), b = tree_leaves(std::get<0>(g2));
  for (size_t i = 0; i < a.size(); ++i) {
    expect_allclose(a[i], b[i], 1e-5, 1e-6, "grad leaf " + std::to_string(i));
  }
  expect_allclose(std::get<1>(g1), std::get<1>(g2), 1e-5, 1e-6, "grad x");
  // The expert gradients stay split by expert.
  EXPECT_EQ(std::get<0>(g1).w1.sharding(), NamedSharding(mesh4(), P("ep")));
  const std::string text = sharded.as_text(pp, xs);
  EXPECT_GE(count(text, "all_to_all"), 4) << text;  // dispatch and return, forward and back
  EXPECT_EQ(gathers_of(text, "[8,8,6]"), 0) << text;
  EXPECT_EQ(gathers_of(text, "[8,6,8]"), 0) << text;
  EXPECT_EQ(count(text, "all_gather"), 0) << text;
}

TEST(MoEExpertParallel, MoELlamaLossAndGradEqualOneDevice) {
  MoELlamaConfig plain = MoELlamaConfig::tiny();
  plain.moe.capacity_factor = 1.5;
  plain.moe.token_groups = 4;
  MoELlamaConfig ep = plain;
  ep.moe.sharding = MoESharding{mesh4(), "ep"};
  MoELlamaParams p = moe_llama_init(plain, random::key(7));
  Array x = random::randint(random::key(8), {4, 16}, 0, plain.base.vocab_size);
  Array y = random::randint(random::key(9), {4, 16}, 0, plain.base.vocab_size);
  auto step = [](const MoELlamaConfig& c) {
    return [c](const MoELlamaParams& q, const Array& x, const Array& y) {
      return value_and_grad(
          [&](const MoELlamaParams& q) { return moe_llama_loss(q, x, y, c).loss; })(q);
    };
  };
  MoELlamaParams pp = p;
  pp.moe_layers.moe = place(p.moe_layers.moe, mesh4(), 1);  // [groups, E, ...]
  NamedSharding batch(mesh4(), P("ep"));
  auto sharded = jit(step(ep));
  auto [l1, g1] = sharded(pp, device_put(x, batch), device_put(y, batch));
  auto [l2, g2] = jit(step(plain))(p, x, y);
  expect_allclose(l1, l2, 1e-5, 1e-6, "loss");
  auto a = tree_leaves(g1), b = tree_leaves(g2);
  auto paths = tree_leaf_paths(tree_structure(g1));
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    const double scale = max(abs(b[i])).item<float>() + 1e-12;
    expect_allclose(a[i], b[i], 1e-4, 1e-5 * scale, "grad " + paths[i]);
  }
  const std::string text = sharded.as_text(pp, device_put(x, batch), device_put(y, batch));
  EXPECT_GE(count(text, "all_to_all"), 4) << text;
  const int64_t e = plain.moe.n_experts, d = plain.base.dim, h = plain.moe.expert_ffn_dim;
  const std::string w13 =
      "[" + std::to_string(e) + "," + std::to_string(d) + "," + std::to_string(h) + "]";
  const std::string w2 =
      "[" + std::to_string(e) + "," + std::to_string(h) + "," + std::to_string(d) + "]";
  EXPECT_EQ(gathers_of(text, w13), 0) << text;
  EXPECT_EQ(gathers_of(text, w2), 0) << text;
  // (The dense parts still gather a few activations, as data parallelism does: rope's
  // backward pads and the embedding's scatter_add have no sharding rules yet.)
}

}  // namespace
}  // namespace graft::nn
