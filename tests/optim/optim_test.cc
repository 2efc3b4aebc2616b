// graft::optim: state as a pytree, masks by path, errors, and jit. References are closed
// forms (the first Adam step), eager evaluation (the model for jit) and Optax's recorded
// vectors (tools/make_optax_vectors.py) for the jitted MultiSteps run.
#include "optim/optim.h"

#include <cmath>
#include <string>
#include <vector>

#include "core/ops.h"
#include "gtest/gtest.h"
#include "tests/util/test_vectors.h"
#include "transforms/jit.h"

namespace graft::test_optim {
struct Layer {
  graft::Array w, norm;
};
struct Net {
  std::vector<Layer> layers;
  graft::Array head;
};
}  // namespace graft::test_optim
GRAFT_TREE(graft::test_optim::Layer, w, norm);
GRAFT_TREE(graft::test_optim::Net, layers, head);

namespace graft::optim {
namespace {

using Params = std::map<std::string, Array>;
using graft::test_optim::Layer;
using graft::test_optim::Net;
using graft::testing::expect_allclose;

template <class F>
void expect_error(F&& f, const std::string& prefix) {
  try {
    f();
    ADD_FAILURE() << "no error, expected one starting with " << prefix;
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).rfind(prefix, 0), 0u) << e.what();
  }
}

Params small_params() {
  return {{"b", array<float>({0.5f, -0.25f}, Shape{2})},
          {"w", array<float>({1.f, 2.f, -3.f, 0.5f}, Shape{2, 2})}};
}
Params small_grads() {
  return {{"b", array<float>({0.1f, -0.2f}, Shape{2})},
          {"w", array<float>({-0.3f, 0.4f, 0.05f, -1.f}, Shape{2, 2})}};
}

Net make_net() {
  Net n;
  for (int i = 0; i < 2; ++i) {
    n.layers.push_back({full({2, 2}, 1.0 + i), full({2}, 2.0 + i)});
  }
  n.head = full({2, 3}, -1.0);
  return n;
}

TEST(OptimState, LeafPathsAndRoundTrip) {
  auto opt = adamw({.learning_rate = 0.1, .weight_decay = 0.1, .mask = ndim_at_least(2)});
  State s = opt.init(small_params());
  auto [leaves, def] = tree_flatten(s);
  // Part 0: scale_by_adam's slots (maps sort by key); parts 1 and 2 (masked decay with a
  // constant rate, constant lr) are stateless.
  std::vector<std::string> want = {"0.count.0", "0.mu.0", "0.mu.1", "0.nu.0", "0.nu.1"};
  EXPECT_EQ(tree_leaf_paths(def), want);
  EXPECT_EQ(s.parts.size(), 3u);
  EXPECT_EQ(leaves[0].dtype(), DType::kI32);
  EXPECT_EQ(leaves[1].dtype(), DType::kF32);
  EXPECT_EQ(leaves[4].shape(), (Shape{2, 2}));
  State back = tree_unflatten<State>(def, leaves);
  EXPECT_EQ(tree_structure(back), def);
  EXPECT_EQ(tree_leaves(back)[3].node(), leaves[3].node());
}

TEST(OptimMask, SeesPathsAndDecaysOnlySelectedLeaves) {
  Net params = make_net();
  Net grads = tree_map([](const Array& p) { return 0.5 * ones_like(p) - 0.1 * p; }, params);
  std::vector<std::string> seen;
  Mask no_norm = [&seen](const std::string& path, const Array&) {
    seen.push_back(path);
    return path.find("norm") == std::string::npos;
  };
  const double lr = 0.1, wd = 0.3, eps = 1e-8;
  auto opt = adamw({.learning_rate = lr, .eps = eps, .weight_decay = wd, .mask = no_norm});
  State s = opt.init(params);
  std::vector<std::string> paths = {"layers.0.w", "layers.0.norm", "layers.1.w", "layers.1.norm",
                                    "head"};
  EXPECT_EQ(seen, paths);
  auto [updates, s2] = opt.update(grads, s, params);
  Net next = apply_updates(params, updates);
  // Closed form of the first Adam step: m_hat = g, v_hat = g^2, so the step is
  // g / (|g| + eps), plus wd * p on the decayed leaves, times -lr.
  auto pl = tree_leaves(params), gl = tree_leaves(grads), nl = tree_leaves(next);
  for (size_t i = 0; i < pl.size(); ++i) {
    bool decays = paths[i].find("norm") == std::string::npos;
    auto p = pl[i].to_vector<float>(), g = gl[i].to_vector<float>();
    std::vector<double> want(p.size());
    for (size_t j = 0; j < p.size(); ++j) {
      want[j] = p[j] - lr * (g[j] / (std::abs(g[j]) + eps) + (decays ? wd * p[j] : 0.0));
    }
    expect_allclose(nl[i], astype(array<double>(want, pl[i].shape()), DType::kF32), 1e-6, 1e-7,
                    paths[i]);
  }
}

TEST(OptimDecay, ScheduledWeightDecayCountsSteps) {
  // updates = g + wd(t) * p with wd = 1, 0.5, 0 at t = 0, 1, 2 (linear over 2 steps).
  auto opt = add_decayed_weights(linear_schedule(1.0, 0.0, 2));
  Params p = small_params(), g = small_grads();
  State s = opt.init(p);
  const double wd[] = {1.0, 0.5, 0.0};
  for (int t = 0; t < 3; ++t) {
    auto [u, next] = opt.update(g, s, p);
    s = next;
    for (const auto& [k, v] : u) {
      auto gv = g[k].to_vector<float>(), pv = p[k].to_vector<float>();
      std::vector<double> want;
      for (size_t j = 0; j < gv.size(); ++j) want.push_back(gv[j] + wd[t] * pv[j]);
      expect_allclose(v, astype(array<double>(want, v.shape()), DType::kF32), 1e-6, 1e-7,
                      k + " step " + std::to_string(t));
    }
  }
  EXPECT_EQ(tree_leaves(s)[0].item<int>(), 3);
}

TEST(OptimDtypes, Bf16ParamsKeepTheirDtypeAndCountsAreI32) {
  Params p = tree_map([](const Array& x) { return astype(x, DType::kBF16); }, small_params());
  Params g = tree_map([](const Array& x) { return astype(x, DType::kBF16); }, small_grads());
  std::vector<std::pair<std::string, GradientTransformation>> opts = {
      {"adamw", adamw({.learning_rate = 0.1})},
      {"lion", lion({.learning_rate = 0.1})},
      {"sgd", sgd({.learning_rate = linear_schedule(0.1, 0.0, 3), .momentum = 0.9})},
      {"adafactor", adafactor({.learning_rate = 0.1, .min_dim_size_to_factor = 2})},
      {"multi_steps", MultiSteps(adam({.learning_rate = 0.1}), 2)},
  };
  for (const auto& [name, opt] : opts) {
    State s = opt.init(p);
    auto [u, s2] = opt.update(g, s, p);
    Params next = apply_updates(p, u);
    for (const auto& [k, v] : next) EXPECT_EQ(v.dtype(), DType::kBF16) << name << " " << k;
    auto [leaves, def] = tree_flatten(s2);
    std::vector<std::string> paths = tree_leaf_paths(def);
    for (size_t i = 0; i < leaves.size(); ++i) {
      bool counter =
          paths[i].find("count") != std::string::npos || paths[i].find("step") != std::string::npos;
      bool acc = paths[i].find("acc_grads") != std::string::npos;  // f32, as Optax
      DType want = counter ? DType::kI32 : acc ? DType::kF32 : DType::kBF16;
      EXPECT_EQ(leaves[i].dtype(), want) << name << " " << paths[i];
    }
  }
}

TEST(OptimErrors, MismatchedTreesAndStates) {
  auto opt = adamw({.learning_rate = 0.1});
  Params p = small_params();
  State s = opt.init(p);
  Params missing = small_grads();
  missing.erase("b");
  expect_error([&] { opt.update(missing, s, p); }, "[optim.update] grads and params");
  Params wrong_shape = small_grads();
  wrong_shape["b"] = zeros({3});
  expect_error([&] { opt.update(wrong_shape, s, p); }, "[optim.update] grad leaf 'b'");
  // A state from another optimizer, or for another tree.
  State sgd_state = sgd({.learning_rate = 0.1, .momentum = 0.9}).init(p);
  expect_error([&] { opt.update(small_grads(), sgd_state, p); }, "[optim.update]");
  Params bigger = small_params();
  bigger["c"] = zeros({1});
  expect_error([&] { opt.update(bigger, s, bigger); }, "[optim.update] state slot 'mu'");
  // Weight decay needs the params.
  expect_error([&] { opt.update(small_grads(), s); }, "[optim.update] add_decayed_weights");
  expect_error([&] { apply_updates(p, missing); }, "[optim.apply_updates]");
  expect_error([&] { cosine_decay(1.0, 0); }, "[optim.cosine_decay]");
  expect_error([&] { warmup_cosine_decay(0, 1, 10, 5); }, "[optim.warmup_cosine_decay]");
  expect_error([&] { warmup_stable_decay({.warmup_steps = 10, .total_steps = 10}); },
               "[optim.warmup_stable_decay]");
  expect_error([&] { MultiSteps(sgd(), 0); }, "[optim.MultiSteps]");
}

TEST(OptimMultiSteps, EmitsEveryKthCallWithTheMeanGradient) {
  // k = 2 around plain SGD (lr 1): the update on every 2nd call is -(g1 + g2) / 2, else 0.
  MultiSteps opt(sgd({.learning_rate = 1.0}), 2);
  Params p = small_params();
  State s = opt.init(p);
  Params g1 = small_grads();
  Params g2 = tree_map([](const Array& g) { return 3.0 * g + 1.0; }, g1);
  auto [u1, s1] = opt.update(g1, s, p);
  EXPECT_FALSE(MultiSteps::has_updated(s1).item<bool>());
  for (const auto& [k, v] : u1) expect_allclose(v, zeros_like(v), 0, 1e-30, "u1 " + k);
  auto [u2, s2] = opt.update(g2, s1, p);
  EXPECT_TRUE(MultiSteps::has_updated(s2).item<bool>());
  for (const auto& [k, v] : u2) {
    auto a = g1[k].to_vector<float>(), b = g2[k].to_vector<float>();
    std::vector<double> want;
    for (size_t j = 0; j < a.size(); ++j) want.push_back(-(double(a[j]) + b[j]) / 2);
    expect_allclose(v, astype(array<double>(want, v.shape()), DType::kF32), 1e-6, 1e-7, "u2 " + k);
  }
}

TEST(OptimJit, TrainStepEqualsEagerAndHitsTheCache) {
  auto opt = chain(clip_by_global_norm(1.0),
                   adamw({.learning_rate = warmup_cosine_decay(0.0, 0.1, 2, 10, 0.01),
                          .weight_decay = 0.1,
                          .mask = ndim_at_least(2)}));
  auto step = [&opt](const Params& p, const State& s, const Params& g) {
    auto [updates, s2] = opt.update(g, s, p);
    return std::tuple{apply_updates(p, updates), s2};
  };
  auto jitted = jit(step);
  Params p_eager = small_params(), p_jit = small_params();
  State s_eager = opt.init(p_eager), s_jit = opt.init(p_jit);
  for (int t = 0; t < 4; ++t) {
    Params g = tree_map([t](const Array& x) { return (t + 1.0) * x; }, small_grads());
    std::tie(p_eager, s_eager) = step(p_eager, s_eager, g);
    std::tie(p_jit, s_jit) = jitted(p_jit, s_jit, g);
    auto e = tree_leaves(std::tuple{p_eager, s_eager});
    auto j = tree_leaves(std::tuple{p_jit, s_jit});
    ASSERT_EQ(e.size(), j.size());
    for (size_t i = 0; i < e.size(); ++i) {
      expect_allclose(j[i], e[i], 1e-6, 1e-7,
                      "step " + std::to_string(t) + " leaf " + std::to_string(i));
    }
  }
  EXPECT_EQ(jitted.stats().misses, 1);
  EXPECT_EQ(jitted.stats().hits, 3);
}

TEST(OptimJit, MultiStepsUnderJitMatchesOptax) {
  auto tv = graft::testing::TestVectors::Load("tests/optim/testdata/optax_vectors.json");
  ASSERT_TRUE(tv.ok()) << tv.status();
  auto tree = [&](const std::string& prefix) {
    Params p;
    for (const char* k : {"b", "s", "v", "w"}) p[k] = tv->get(prefix + "/" + k);
    return p;
  };
  MultiSteps opt(adam({.learning_rate = 0.1}), 3);
  auto step = jit([&opt](const Params& p, const State& s, const Params& g) {
    auto [updates, s2] = opt.update(g, s, p);
    return std::tuple{apply_updates(p, updates), s2};
  });
  Params p = tree("params0");
  State s = opt.init(p);
  for (int t = 0; t < 6; ++t) {
    std::tie(p, s) = step(p, s, tree("grads/" + std::to_string(t)));
    for (const auto& [k, v] : p) {
      std::string what = "multi_steps_adam/" + std::to_string(t) + "/" + k;
      expect_allclose(v, tv->get(what), 1e-5, 1e-6, what);
    }
  }
  EXPECT_EQ(step.stats().misses, 1);  // one program for emitting and accumulating steps
}

TEST(OptimSchedule, TracedUnderJitEqualsEager) {
  Schedule sched = warmup_stable_decay({.peak_value = 2.0,
                                        .warmup_steps = 3,
                                        .total_steps = 20,
                                        .decay_fraction = 0.25,
                                        .decay = DecayShape::kCosine});
  auto f = jit([&sched](const Array& count) { return sched(count); });
  for (int t : {0, 1, 3, 10, 15, 16, 19, 20, 50}) {
    Array c = scalar(t, DType::kI32);
    EXPECT_EQ(f(c).item<float>(), sched(t)) << t;
  }
  EXPECT_EQ(f.stats().misses, 1);
  // Closed forms at a few points: warmup is linear, the middle is flat, the end is end_value.
  EXPECT_FLOAT_EQ(sched(0), 0.0f);
  EXPECT_FLOAT_EQ(sched(1), 2.0f / 3.0f);
  EXPECT_FLOAT_EQ(sched(10), 2.0f);
  EXPECT_FLOAT_EQ(sched(100), 0.0f);
  EXPECT_EQ(Schedule(0.25)(7), 0.25f);
}

}  // namespace
}  // namespace graft::optim
