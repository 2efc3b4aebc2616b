// Tests of the dropless MoE layer (nn/moe.h) and its grouped matmul (ragged_dot).
// References: a dense formulation written here with plain ops (every expert on every token,
// top-k chosen by ranking comparisons rather than a sort, combined through a gate mask),
// host loops for the losses, a loop over batch members for vmap, and vectors recorded by
// running the same layer in JAX (tools/make_moe_vectors.py -> testdata/moe_small.json).
#include "nn/moe.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "core/backend/cpu/onednn_matmul.h"
#include "core/ops.h"
#include "core/random/random.h"
#include "gtest/gtest.h"
#include "tests/util/test_vectors.h"
#include "transforms/autodiff.h"
#include "transforms/control_flow.h"
#include "transforms/jit.h"
#include "transforms/vmap.h"

namespace graft::nn {
namespace {

using graft::testing::expect_allclose;

std::vector<double> host(const Array& a) { return a.to_vector<double>(); }

Array rand_normal(uint32_t seed, const Shape& s, double scale = 1.0) {
  return random::normal(random::key(seed), s) * scale;
}

MoEConfig small_cfg(RouterScore r = RouterScore::kSoftmax, bool normalize = true,
                    int64_t shared = 1) {
  MoEConfig c;
  c.dim = 8;
  c.n_experts = 4;
  c.top_k = 2;
  c.expert_ffn_dim = 6;
  c.n_shared_experts = shared;
  c.shared_ffn_dim = 5;
  c.router = r;
  c.normalize_topk = normalize;
  c.aux_loss_weight = 0.01;
  c.z_loss_weight = 0.001;
  c.init_std = 0.3;  // larger than the default so the routing is not near-uniform
  return c;
}

// The e-th [a, b] slice of an [E, a, b] array.
Array expert(const Array& w, int64_t e) {
  return reshape(slice_axis(w, 0, e, e + 1), {w.shape()[1], w.shape()[2]});
}

Array swiglu(const Array& x, const Array& w1, const Array& w3, const Array& w2) {
  Array a = matmul(x, w1);
  return matmul(a * sigmoid(a) * matmul(x, w3), w2);
}

// Dense reference: the top-k mask from ranks (count of strictly larger scores, no ties in
// these inputs), every expert on every token, combined by the masked weights.
Array dense_moe(const MoEParams& p, const Array& x, const MoEConfig& cfg) {
  Array logits = matmul(x, p.router);
  Array s = cfg.router == RouterScore::kSoftmax ? softmax(logits) : sigmoid(logits);
  Array rank = sum(astype(expand_dims(s, {1}) > expand_dims(s, {2}), DType::kF32), {2});
  Array gate = where(rank < static_cast<double>(cfg.top_k), s, zeros_like(s));
  if (cfg.normalize_topk) gate = gate / sum(gate, {1}, true);
  Array y = zeros_like(x);
  for (int64_t e = 0; e < cfg.n_experts; ++e) {
    Array ye = swiglu(x, expert(p.w1, e), expert(p.w3, e), expert(p.w2, e));
    y = y + ye * slice_axis(gate, 1, e, e + 1);
  }
  if (cfg.n_shared_experts > 0) y = y + swiglu(x, p.shared_w1, p.shared_w3, p.shared_w2);
  return y;
}

TEST(MoEConfig, ValidateAndErrors) {
  MoEConfig c = small_cfg();
  EXPECT_TRUE(c.validate().ok());
  MoEConfig bad = c;
  bad.top_k = 5;
  EXPECT_EQ(bad.validate().code(), absl::StatusCode::kInvalidArgument);
  bad = c;
  bad.n_shared_experts = 1;
  bad.shared_ffn_dim = 0;
  EXPECT_FALSE(bad.validate().ok());
  bad = c;
  bad.dim = 0;
  EXPECT_FALSE(bad.validate().ok());
  try {
    moe_init(bad, random::key(0));
    ADD_FAILURE() << "no throw";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("[moe_init]", 0), 0u) << e.what();
  }
  MoEParams p = moe_init(c, random::key(0));
  try {
    moe_apply(p, zeros({3, 7}), c);
    ADD_FAILURE() << "no throw";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("[moe_apply]", 0), 0u) << e.what();
  }
}

TEST(RaggedDot, ShapeErrorsNameTheOp) {
  Array gs = array<int32_t>({1, 2});
  auto starts_with = [](auto fn, const char* op) {
    try {
      fn();
      ADD_FAILURE() << "no throw";
    } catch (const Error& e) {
      EXPECT_EQ(std::string(e.what()).rfind(op, 0), 0u) << e.what();
    }
  };
  starts_with([&] { ragged_dot(zeros({3, 4}), zeros({2, 5, 6}), gs); }, "[ragged_dot]");
  starts_with([&] { ragged_dot(zeros({3, 4}), zeros({3, 4, 6}), gs); }, "[ragged_dot]");
  starts_with([&] { ragged_dot(zeros({3, 4}), zeros({2, 4, 6}), zeros({2})); }, "[ragged_dot]");
  starts_with(
      [&] {
        ragged_dot(zeros({3, 4}, DType::kI32), zeros({2, 4, 6}, DType::kI32), gs);
      },
      "[ragged_dot]");
  starts_with(
      [&] {
        ragged_dot_transposed(zeros({3, 4}), zeros({4, 6}), gs);
      },
      "[ragged_dot_transposed]");
}

// vmap folds members into one call; members with different group sizes (including bad
// ones, clamped per member) must not leak rows into each other. Also the Eigen fallback.
TEST(RaggedDot, VmapWithDifferentSizesPerMemberAndEigenFallback) {
  const int64_t m = 6, k = 3, n = 2;
  Array l = rand_normal(1, {3, m, k}), r = rand_normal(2, {3, 2, k, n});
  Array rt = rand_normal(3, {3, m, n});
  Array gs = array<int32_t>({1, 4, 0, 9, -3, 2}, Shape{3, 2});
  Array batched = vmap([](Array a, Array b, Array g) { return ragged_dot(a, b, g); })(l, r, gs);
  Array batched_t =
      vmap([](Array a, Array b, Array g) { return ragged_dot_transposed(a, b, g); })(l, rt, gs);
  for (int64_t i = 0; i < 3; ++i) {
    auto at = [i](const Array& x) {
      Shape s(x.shape().begin() + 1, x.shape().end());
      return reshape(slice_axis(x, 0, i, i + 1), s);
    };
    expect_allclose(at(batched), ragged_dot(at(l), at(r), at(gs)), 1e-6, 1e-6, "vmap rows");
    expect_allclose(at(batched_t), ragged_dot_transposed(at(l), at(rt), at(gs)), 1e-6, 1e-6,
                    "vmap contract");
  }
  // Member 1 (sizes 0, 9 -> 0, 6): every row in group 1; member 2 (-3, 2): rows 2.. are 0.
  std::vector<double> v = host(batched);
  for (int64_t row = 2; row < m; ++row) {
    for (int64_t j = 0; j < n; ++j) EXPECT_EQ(v[(2 * m + row) * n + j], 0.0);
  }
  // The Eigen fallback computes the same as oneDNN.
  Array l2 = rand_normal(4, {700, 16}), r2 = rand_normal(5, {3, 16, 8}),
        c2 = rand_normal(6, {700, 8});
  Array g2 = array<int32_t>({300, 0, 390});
  Array a = ragged_dot(l2, r2, g2), at = ragged_dot_transposed(l2, c2, g2);
  eval(a, at);
  cpu::set_onednn_enabled(false);
  Array b = ragged_dot(l2, r2, g2), bt = ragged_dot_transposed(l2, c2, g2);
  eval(b, bt);
  cpu::set_onednn_enabled(true);
  expect_allclose(b, a, 1e-5, 1e-5, "eigen vs onednn rows");
  expect_allclose(bt, at, 1e-5, 1e-4, "eigen vs onednn contract");
}

TEST(MoE, RoutingInvariants) {
  MoEConfig c = small_cfg();
  MoEParams p = moe_init(c, random::key(3));
  Array x = rand_normal(4, {32, c.dim});
  MoERouting r = moe_route(p.router, x, c);
  std::vector<double> w = host(r.weights), ex = host(r.experts), gs = host(r.group_sizes);
  std::vector<double> s = host(r.scores);
  for (int64_t t = 0; t < 32; ++t) {
    EXPECT_NEAR(w[2 * t] + w[2 * t + 1], 1.0, 1e-6);
    EXPECT_NE(ex[2 * t], ex[2 * t + 1]);
    // Best first, and no unselected expert scores higher than a selected one.
    double s0 = s[t * 4 + static_cast<int>(ex[2 * t])];
    double s1 = s[t * 4 + static_cast<int>(ex[2 * t + 1])];
    EXPECT_GE(s0, s1);
    for (int e = 0; e < 4; ++e) {
      if (e != ex[2 * t] && e != ex[2 * t + 1]) {
        EXPECT_LE(s[t * 4 + e], s1);
      }
    }
  }
  EXPECT_EQ(std::accumulate(gs.begin(), gs.end(), 0.0), 64.0);
  for (int e = 0; e < 4; ++e) {
    EXPECT_EQ(gs[e], std::count(ex.begin(), ex.end(), static_cast<double>(e)));
  }
}

// Every token picks expert 2 first (a large router column): nothing is dropped (capacity is
// never an issue) and the output still equals the dense reference.
TEST(MoE, AllTokensOnOneExpertDropNothing) {
  MoEConfig c = small_cfg();
  MoEParams p = moe_init(c, random::key(5));
  Array x = abs(rand_normal(6, {40, c.dim})) + 0.1;
  std::vector<double> bias(c.dim * c.n_experts, 0.0);
  for (int64_t d = 0; d < c.dim; ++d) bias[d * c.n_experts + 2] = 3.0;
  p.router = p.router + astype(array(bias, Shape{c.dim, c.n_experts}), DType::kF32);
  MoEOutput o = moe_apply(p, x, c);
  MoERouting r = moe_route(p.router, x, c);
  std::vector<double> gs = host(r.group_sizes);
  EXPECT_EQ(gs[2], 40.0);
  EXPECT_EQ(std::accumulate(gs.begin(), gs.end(), 0.0), 80.0);
  expect_allclose(o.y, dense_moe(p, x, c), 1e-5, 1e-6, "y, all on one expert");
  EXPECT_NEAR(host(o.stats.expert_load)[2], 0.5, 1e-7);
}

class MoEDense : public ::testing::TestWithParam<int> {};

MoEConfig param_cfg(int i) {
  return i == 0 ? small_cfg() : small_cfg(RouterScore::kSigmoid, false, 0);
}

TEST_P(MoEDense, ValueAndGradientsMatchTheDenseReference) {
  MoEConfig c = param_cfg(GetParam());
  MoEParams p = moe_init(c, random::key(7));
  Array x = rand_normal(8, {24, c.dim});
  Array ct = rand_normal(9, {24, c.dim});
  expect_allclose(moe_apply(p, x, c).y, dense_moe(p, x, c), 1e-5, 1e-6, "y");
  auto f = [&](const MoEParams& pp, const Array& xx) { return sum(moe_apply(pp, xx, c).y * ct); };
  auto fd = [&](const MoEParams& pp, const Array& xx) { return sum(dense_moe(pp, xx, c) * ct); };
  auto [gp, gx] = grad(f, argnums<0, 1>)(p, x);
  auto [dp, dx] = grad(fd, argnums<0, 1>)(p, x);
  expect_allclose(gx, dx, 1e-4, 1e-6, "grad x");
  expect_allclose(gp.router, dp.router, 1e-4, 1e-6, "grad router");
  expect_allclose(gp.w1, dp.w1, 1e-4, 1e-6, "grad w1");
  expect_allclose(gp.w3, dp.w3, 1e-4, 1e-6, "grad w3");
  expect_allclose(gp.w2, dp.w2, 1e-4, 1e-6, "grad w2");
  if (c.n_shared_experts > 0) {
    expect_allclose(gp.shared_w1, dp.shared_w1, 1e-4, 1e-6, "grad shared_w1");
    expect_allclose(gp.shared_w2, dp.shared_w2, 1e-4, 1e-6, "grad shared_w2");
  }
}

// aux and z losses against host loops over the router logits.
TEST_P(MoEDense, LossesMatchHandComputation) {
  MoEConfig c = param_cfg(GetParam());
  MoEParams p = moe_init(c, random::key(10));
  const int64_t n = 30, d = c.dim, e = c.n_experts, k = c.top_k;
  Array x = rand_normal(11, {n, d});
  MoEOutput o = moe_apply(p, x, c);
  std::vector<double> xv = host(x), rv = host(p.router);
  std::vector<double> count(e, 0), pmean(e, 0);
  double z = 0;
  for (int64_t t = 0; t < n; ++t) {
    std::vector<double> lg(e, 0), sc(e);
    for (int64_t j = 0; j < e; ++j) {
      for (int64_t i = 0; i < d; ++i) lg[j] += xv[t * d + i] * rv[i * e + j];
    }
    double mx = *std::max_element(lg.begin(), lg.end()), se = 0;
    for (double l : lg) se += std::exp(l - mx);
    double lse = mx + std::log(se);
    z += lse * lse / n;
    for (int64_t j = 0; j < e; ++j) {
      sc[j] =
          c.router == RouterScore::kSoftmax ? std::exp(lg[j] - lse) : 1 / (1 + std::exp(-lg[j]));
    }
    double tot = std::accumulate(sc.begin(), sc.end(), 0.0);
    for (int64_t j = 0; j < e; ++j) pmean[j] += sc[j] / tot / n;
    std::vector<int> idx(e);
    std::iota(idx.begin(), idx.end(), 0);
    std::sort(idx.begin(), idx.end(), [&](int a, int b) { return sc[a] > sc[b]; });
    for (int64_t j = 0; j < k; ++j) count[idx[j]] += 1;
  }
  double aux = 0;
  for (int64_t j = 0; j < e; ++j) aux += e * (count[j] / (n * k)) * pmean[j];
  EXPECT_NEAR(host(o.stats.aux_loss)[0], aux, 1e-5 * aux);
  EXPECT_NEAR(host(o.stats.z_loss)[0], z, 1e-5 * z);
  EXPECT_NEAR(host(o.stats.loss)[0], c.aux_loss_weight * aux + c.z_loss_weight * z, 1e-6);
  std::vector<double> load = host(o.stats.expert_load);
  for (int64_t j = 0; j < e; ++j) EXPECT_NEAR(load[j], count[j] / (n * k), 1e-7);  // f32
}

TEST_P(MoEDense, JitValueAndGradEqualsEager) {
  MoEConfig c = param_cfg(GetParam());
  MoEParams p = moe_init(c, random::key(12));
  Array x = rand_normal(13, {16, c.dim});
  auto loss = [c](const MoEParams& pp, const Array& xx) {
    MoEOutput o = moe_apply(pp, xx, c);
    return sum(square(o.y)) + o.stats.loss;
  };
  auto vg = value_and_grad(loss, argnums<0, 1>);
  auto jitted = jit([vg](const MoEParams& pp, const Array& xx) { return vg(pp, xx); });
  auto [v, g] = vg(p, x);
  for (int call = 0; call < 2; ++call) {
    auto [jv, jg] = jitted(p, x);
    expect_allclose(jv, v, 1e-6, 1e-7, "jit value");
    expect_allclose(std::get<1>(jg), std::get<1>(g), 1e-5, 1e-7, "jit grad x");
    expect_allclose(std::get<0>(jg).w1, std::get<0>(g).w1, 1e-5, 1e-7, "jit grad w1");
    expect_allclose(std::get<0>(jg).router, std::get<0>(g).router, 1e-5, 1e-7, "jit grad router");
  }
}

INSTANTIATE_TEST_SUITE_P(Routers, MoEDense, ::testing::Values(0, 1));

TEST(MoE, VmapOverTokenSetsEqualsALoop) {
  MoEConfig c = small_cfg();
  MoEParams p = moe_init(c, random::key(14));
  Array xs = rand_normal(15, {3, 10, c.dim});
  auto f = [c](const MoEParams& pp, const Array& x) { return moe_apply(pp, x, c); };
  MoEOutput b = vmap(f, {none, 0})(p, xs);
  for (int64_t i = 0; i < 3; ++i) {
    Array xi = reshape(slice_axis(xs, 0, i, i + 1), {10, c.dim});
    MoEOutput o = f(p, xi);
    expect_allclose(reshape(slice_axis(b.y, 0, i, i + 1), {10, c.dim}), o.y, 1e-5, 1e-6, "vmap y");
    expect_allclose(reshape(slice_axis(b.stats.aux_loss, 0, i, i + 1), {}), o.stats.aux_loss, 1e-6,
                    1e-7, "vmap aux");
  }
}

// Stacked params ([n_layers] leading axis) run under scan, as the Llama integration will.
TEST(MoE, StackedParamsUnderScanEqualLayerByLayer) {
  MoEConfig c = small_cfg();
  std::vector<MoEParams> layers{moe_init(c, random::key(20)), moe_init(c, random::key(21))};
  auto stack_field = [&](auto get) { return stack({get(layers[0]), get(layers[1])}, 0); };
  MoEParams stacked{stack_field([](auto& l) { return l.router; }),
                    stack_field([](auto& l) { return l.w1; }),
                    stack_field([](auto& l) { return l.w3; }),
                    stack_field([](auto& l) { return l.w2; }),
                    stack_field([](auto& l) { return l.shared_w1; }),
                    stack_field([](auto& l) { return l.shared_w3; }),
                    stack_field([](auto& l) { return l.shared_w2; })};
  Array x = rand_normal(22, {12, c.dim});
  auto [y, aux] = scan(
      [c](const Array& h, const MoEParams& lp) {
        MoEOutput o = moe_apply(lp, h, c);
        return std::pair{h + o.y, o.stats.aux_loss};
      },
      x, stacked);
  Array h = x;
  for (const MoEParams& lp : layers) h = h + moe_apply(lp, h, c).y;
  expect_allclose(y, h, 1e-5, 1e-6, "scan over layers");
  EXPECT_EQ(aux.shape(), (Shape{2}));
}

// Against the layer run in JAX (tools/make_moe_vectors.py), value and all gradients.
TEST(MoE, MatchesJaxVectors) {
  auto tv = graft::testing::TestVectors::Load("tests/nn/testdata/moe_small.json");
  ASSERT_TRUE(tv.ok()) << tv.status();
  struct Cfg {
    const char* prefix;
    MoEConfig c;
  };
  MoEConfig soft = small_cfg();
  soft.aux_loss_weight = 0.01;
  soft.z_loss_weight = 0.001;
  MoEConfig sig;
  sig.dim = 6;
  sig.n_experts = 5;
  sig.top_k = 3;
  sig.expert_ffn_dim = 4;
  sig.router = RouterScore::kSigmoid;
  sig.normalize_topk = false;
  sig.aux_loss_weight = 0.1;
  sig.z_loss_weight = 0.01;
  for (const Cfg& cf : {Cfg{"softmax.", soft}, Cfg{"sigmoid.", sig}}) {
    SCOPED_TRACE(cf.prefix);
    const std::string pre = cf.prefix;
    auto get = [&](const std::string& n) { return tv->get(pre + n); };
    MoEParams p{get("param.router"),   get("param.w1"),        get("param.w3"),
                get("param.w2"),       get("param.shared_w1"), get("param.shared_w3"),
                get("param.shared_w2")};
    MoEConfig c = cf.c;
    c.n_shared_experts = p.shared_w1.shape()[1] > 0 ? 1 : 0;
    c.shared_ffn_dim = p.shared_w1.shape()[1];
    Array x = get("x"), ct = get("ct");
    MoEOutput o = moe_apply(p, x, c);
    expect_allclose(o.y, get("y"), 1e-4, 1e-5, "y");
    expect_allclose(o.stats.aux_loss, get("aux_loss"), 1e-4, 1e-6, "aux_loss");
    expect_allclose(o.stats.z_loss, get("z_loss"), 1e-4, 1e-6, "z_loss");
    expect_allclose(o.stats.expert_load, get("expert_load"), 0, 1e-7, "expert_load");
    auto loss = [&](const MoEParams& pp, const Array& xx) {
      MoEOutput oo = moe_apply(pp, xx, c);
      return sum(oo.y * ct) + oo.stats.loss;
    };
    auto [l, g] = value_and_grad(loss, argnums<0, 1>)(p, x);
    expect_allclose(l, get("loss"), 1e-4, 1e-5, "loss");
    auto [gp, gx] = g;
    expect_allclose(gx, get("grad.x"), 1e-4, 1e-5, "grad.x");
    expect_allclose(gp.router, get("grad.router"), 1e-4, 1e-5, "grad.router");
    expect_allclose(gp.w1, get("grad.w1"), 1e-4, 1e-5, "grad.w1");
    expect_allclose(gp.w3, get("grad.w3"), 1e-4, 1e-5, "grad.w3");
    expect_allclose(gp.w2, get("grad.w2"), 1e-4, 1e-5, "grad.w2");
    expect_allclose(gp.shared_w1, get("grad.shared_w1"), 1e-4, 1e-5, "grad.shared_w1");
    expect_allclose(gp.shared_w3, get("grad.shared_w3"), 1e-4, 1e-5, "grad.shared_w3");
    expect_allclose(gp.shared_w2, get("grad.shared_w2"), 1e-4, 1e-5, "grad.shared_w2");
  }
}

}  // namespace
}  // namespace graft::nn
