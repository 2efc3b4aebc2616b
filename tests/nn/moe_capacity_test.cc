// The MoE layer's capacity dispatch (nn/moe_capacity.h, MoEConfig::capacity_factor > 0) on one
// device: with room for every assignment it equals the dropless layer (nn/moe.h) in value and
// gradients; with little room its drops match a plain host loop over the assignments in
// GShard's priority order written here; bad configs are errors.
#include "nn/moe_capacity.h"

#include <cmath>
#include <string>
#include <vector>

#include "core/ops.h"
#include "core/random/random.h"
#include "gtest/gtest.h"
#include "nn/moe.h"
#include "tests/util/test_vectors.h"
#include "transforms/autodiff.h"
#include "transforms/jit.h"

namespace graft::nn {
namespace {

using graft::testing::expect_allclose;

MoEConfig cfg_of(double capacity_factor, int64_t groups) {
  MoEConfig c;
  c.dim = 8;
  c.n_experts = 4;
  c.top_k = 2;
  c.expert_ffn_dim = 6;
  c.n_shared_experts = 1;
  c.shared_ffn_dim = 5;
  c.z_loss_weight = 0.001;
  c.init_std = 0.3;  // routing far from uniform, so small capacities drop
  c.capacity_factor = capacity_factor;
  c.token_groups = groups;
  return c;
}

Array expert(const Array& w, int64_t e) { return squeeze(slice_axis(w, 0, e, e + 1), {0}); }

Array swiglu(const Array& x, const Array& w1, const Array& w3, const Array& w2) {
  Array a = matmul(x, w1);
  return matmul(a * sigmoid(a) * matmul(x, w3), w2);
}

// Value and gradients (params and x) of capacity mode with C = S (nothing can drop) equal
// the dropless layer's. f32: tolerance 1e-5 (relative, and absolute 1e-6).
TEST(MoECapacity, RoomForAllEqualsDropless) {
  MoEConfig dropless = cfg_of(0, 1);
  MoEConfig cap = cfg_of(/*capacity_factor=*/4.0, /*groups=*/4);
  MoEParams p = moe_init(dropless, random::key(1));
  Array x = random::normal(random::key(2), {32, 8});
  Array r = random::normal(random::key(3), {32, 8});
  EXPECT_EQ(moe_capacity(cap, 32), 8);  // S = 8: every token can reach every expert
  auto loss = [&](const MoEConfig& c) {
    return [&, c](const MoEParams& q, const Array& xx) {
      MoEOutput o = moe_apply(q, xx, c);
      return sum(o.y * r) + o.stats.loss;
    };
  };
  auto [l1, g1] = value_and_grad(loss(cap), argnums<0, 1>)(p, x);
  auto [l2, g2] = value_and_grad(loss(dropless), argnums<0, 1>)(p, x);
  expect_allclose(l1, l2, 1e-5, 1e-6, "loss");
  expect_allclose(moe_apply(p, x, cap).y, moe_apply(p, x, dropless).y, 1e-5, 1e-6, "y");
  auto a = tree_leaves(std::get<0>(g1)), b = tree_leaves(std::get<0>(g2));
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    expect_allclose(a[i], b[i], 1e-5, 1e-6, "grad leaf " + std::to_string(i));
  }
  expect_allclose(std::get<1>(g1), std::get<1>(g2), 1e-5, 1e-6, "grad x");
  // And under jit.
  auto j = jit([&](const MoEParams& q, const Array& xx) { return moe_apply(q, xx, cap).y; });
  expect_allclose(j(p, x), moe_apply(p, x, dropless).y, 1e-5, 1e-6, "jit");
}

// A small capacity: the kept assignments are those a host loop keeps, visiting each group's
// first choices in token order, then its second choices, an expert taking at most C.
TEST(MoECapacity, DropsFollowGShardPriority) {
  for (int64_t groups : {1, 2}) {
    MoEConfig c = cfg_of(/*capacity_factor=*/0.75, groups);
    MoEParams p = moe_init(c, random::key(5));
    const int64_t n = 24, k = c.top_k, E = c.n_experts, s = n / groups;
    Array x = random::normal(random::key(6), {n, 8});
    const int64_t cap = moe_capacity(c, n);
    EXPECT_EQ(cap, static_cast<int64_t>(std::ceil(0.75 * s * k / E)));
    MoERouting r = moe_route(p.router, x, c);
    std::vector<int> ex = r.experts.to_vector<int>();
    std::vector<double> w = r.weights.to_vector<double>();
    std::vector<double> gate(n * E, 0.0);  // kept weight of (token, expert)
    int dropped = 0;
    for (int64_t g = 0; g < groups; ++g) {
      std::vector<int64_t> used(E, 0);
      for (int64_t j = 0; j < k; ++j) {
        for (int64_t t = g * s; t < (g + 1) * s; ++t) {
          const int e = ex[t * k + j];
          if (used[e] < cap) {
            ++used[e];
            gate[t * E + e] += w[t * k + j];
          } else {
            ++dropped;
          }
        }
      }
    }
    EXPECT_GT(dropped, 0) << "the capacity should drop something here";
    Array gates = array(gate, Shape{n, E});
    Array want = swiglu(x, p.shared_w1, p.shared_w3, p.shared_w2);
    for (int64_t e = 0; e < E; ++e) {
      want = want + swiglu(x, expert(p.w1, e), expert(p.w3, e), expert(p.w2, e)) *
                        astype(slice_axis(gates, 1, e, e + 1), DType::kF32);
    }
    expect_allclose(moe_apply(p, x, c).y, want, 1e-5, 1e-6, "groups " + std::to_string(groups));
    // Every slot holds at most one assignment.
    MoEDispatch d = moe_dispatch(r, c, n, DType::kF32);
    EXPECT_EQ(d.dispatch.shape(), (Shape{groups, s, E, cap}));
    EXPECT_LE(max(sum(d.dispatch, {1})).item<float>(), 1.0f);
  }
}

TEST(MoECapacity, BadConfigsAreErrors) {
  MoEConfig c = cfg_of(-1.0, 1);
  EXPECT_FALSE(c.validate().ok());
  EXPECT_NE(std::string(c.validate().message()).find("capacity_factor"), std::string::npos);
  c = cfg_of(1.0, 0);
  EXPECT_NE(std::string(c.validate().message()).find("token_groups"), std::string::npos);
  c = cfg_of(0.0, 1);
  c.sharding = MoESharding{Mesh({2}, {"ep"}), "ep"};
  EXPECT_NE(std::string(c.validate().message()).find("capacity mode"), std::string::npos)
      << c.validate().message();
  c.capacity_factor = 1.0;
  c.sharding = MoESharding{Mesh({2}, {"ep"}), "experts"};
  EXPECT_NE(std::string(c.validate().message()).find("not an axis"), std::string::npos);
  c = cfg_of(1.0, 5);
  MoEParams p = moe_init(cfg_of(1.0, 1), random::key(1));
  try {
    moe_apply(p, zeros({12, 8}), c);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("[moe_apply]", 0), 0u) << e.what();
    EXPECT_NE(std::string(e.what()).find("token_groups (5)"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace graft::nn
