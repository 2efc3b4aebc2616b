// The breadth of Optax against Optax 0.2.8 itself: rmsprop (plain, centered,
// momentum, bias-corrected, scheduled), adagrad, adamax, nadam, radam, lamb and lars, the
// exponential / piecewise-constant / polynomial / one-cycle schedules, and optax.losses.
//
// How the numbers were made: tools/make_optax_vectors.py (run with the peers' venv,
// ~/.cache/graft-peers/venv/bin/python) ran each optimizer under jax.jit in f32 on the same
// initial params (params0/*) and gradient sequence (grads/<t>/*) as optax_vectors_test.cc,
// recorded the params after every step (<name>/<t>/*), evaluated each schedule at the int32
// steps in sched/steps (sched/<name>), and each loss on the fixed inputs stored under loss/
// (loss/<name>), all into testdata/optax_vectors.json. graft runs the same sequence eagerly on
// the recorded inputs and must agree to f32 rounding (rtol 1e-5).
#include <map>
#include <string>
#include <vector>

#include "core/ops.h"
#include "gtest/gtest.h"
#include "optim/optim.h"
#include "tests/optim/optax_fixture.h"
#include "tests/util/test_vectors.h"
#include "transforms/autodiff.h"

namespace graft::optim {
namespace {

using namespace optax_fixture;

TEST(OptaxParity, Rmsprop) {
  check_against_optax(rmsprop({.learning_rate = 0.01}), "rmsprop");
  check_against_optax(rmsprop({.learning_rate = 0.01, .centered = true, .momentum = 0.9}),
                      "rmsprop_centered_momentum");
  check_against_optax(rmsprop({.learning_rate = 0.01,
                               .decay = 0.95,
                               .eps_in_sqrt = false,
                               .momentum = 0.5,
                               .nesterov = true,
                               .bias_correction = true}),
                      "rmsprop_bc_nesterov");
  check_against_optax(
      rmsprop({.learning_rate = exponential_decay(0.05, 2, 0.5, 0, /*staircase=*/true),
               .initial_scale = 0.1}),
      "rmsprop_initial_scale_exp_lr");
}

TEST(OptaxParity, Adagrad) {
  check_against_optax(adagrad({.learning_rate = 0.1}), "adagrad");
  check_against_optax(
      adagrad({.learning_rate = 0.1, .initial_accumulator_value = 0.0, .eps = 1e-6}),
      "adagrad_zero_init");
}

TEST(OptaxParity, Adamax) { check_against_optax(adamax({.learning_rate = 0.01}), "adamax"); }

TEST(OptaxParity, Nadam) { check_against_optax(nadam({.learning_rate = 0.01}), "nadam"); }

TEST(OptaxParity, Radam) {
  check_against_optax(radam({.learning_rate = 0.01}), "radam");
  // b2 = 0.9: rho_t crosses the threshold at step 5, so both branches are checked.
  check_against_optax(radam({.learning_rate = 0.01, .b2 = 0.9, .threshold = 4.5}),
                      "radam_rectified");
  check_against_optax(radam({.learning_rate = 0.01, .b2 = 0.9, .threshold = 4.5, .nesterov = true}),
                      "radam_rectified_nesterov");
}

TEST(OptaxParity, Lamb) {
  check_against_optax(lamb({.learning_rate = 0.01, .weight_decay = 0.1, .mask = ndim_at_least(2)}),
                      "lamb");
}

TEST(OptaxParity, Lars) {
  check_against_optax(lars({.learning_rate = 0.1, .weight_decay = 0.01}), "lars");
  check_against_optax(lars({.learning_rate = 0.1,
                            .weight_decay = 0.01,
                            .trust_coefficient = 0.5,
                            .momentum = 0.8,
                            .nesterov = true}),
                      "lars_nesterov");
}

// The state is a pytree of the documented slots, so jit can carry it.
TEST(OptaxParity, JittedStepMatchesEager) {
  GradientTransformation opt =
      lamb({.learning_rate = 0.01, .weight_decay = 0.1, .mask = ndim_at_least(2)});
  Params params = tree("params0");
  State state = opt.init(params);
  auto step = jit([opt](const Params& p, const State& s, const Params& g) {
    auto [u, s2] = opt.update(g, s, p);
    return std::pair{apply_updates(p, u), s2};
  });
  Params eager = params;
  State eager_state = state;
  for (int t = 0; t < 3; ++t) {
    Params g = tree("grads/" + std::to_string(t));
    std::tie(params, state) = step(params, state, g);
    auto [u, s2] = opt.update(g, eager_state, eager);
    eager = apply_updates(eager, u);
    eager_state = s2;
  }
  for (const auto& [k, v] : params) {
    expect_allclose(v, eager.at(k), 1e-6, 1e-7, k);
    expect_allclose(v, vectors().get("lamb/2/" + k), kRtol, kAtol, k);
  }
}

TEST(OptaxParity, Schedules) {
  std::vector<int> steps = vectors().get("sched/steps").to_vector<int>();
  std::map<std::string, Schedule> schedules = {
      {"exp_decay", exponential_decay(1.0, 5, 0.5, 3)},
      {"exp_decay_staircase_end", exponential_decay(1.0, 4, 0.5, 0, true, 0.1)},
      {"exp_growth_end", exponential_decay(0.1, 3, 2.0, 0, false, 1.0)},
      {"piecewise_constant", piecewise_constant_schedule(1.0, {{5, 0.5}, {10, 0.1}, {20, 2.0}})},
      {"polynomial", polynomial_schedule(1.0, 0.01, 2, 20, 5)},
      {"polynomial_sqrt", polynomial_schedule(0.0, 1.0, 0.5, 10)},
      {"onecycle", cosine_onecycle_schedule(30, 1.0)},
      {"linear_onecycle", linear_onecycle_schedule(40, 2.0)},
      {"piecewise_linear", piecewise_interpolate_schedule(InterpolateType::kLinear, 1.0,
                                                          {{4, 3.0}, {12, 0.25}, {13, 0.0}})},
      {"onecycle_custom", cosine_onecycle_schedule(20, 0.5, 0.25, 10.0, 100.0)},
  };
  for (const auto& [name, sched] : schedules) {
    std::vector<float> want = vectors().get("sched/" + name).to_vector<float>();
    ASSERT_EQ(want.size(), steps.size()) << name;
    for (size_t i = 0; i < steps.size(); ++i) {
      float got = sched(static_cast<int64_t>(steps[i]));
      EXPECT_NEAR(got, want[i], 1e-6 + 1e-5 * std::abs(want[i])) << name << " at step " << steps[i];
    }
  }
}

TEST(OptaxParity, Losses) {
  auto in = [](const std::string& k) { return vectors().get("loss/" + k); };
  auto check = [](const Array& got, const std::string& name) {
    expect_allclose(got, vectors().get("loss/" + name), kRtol, kAtol, name);
  };
  check(l2_loss(in("pred"), in("targ")), "l2");
  check(l2_loss(in("pred")), "l2_no_targets");
  check(huber_loss(in("pred"), in("targ")), "huber");
  check(huber_loss(in("pred"), in("targ"), 0.5), "huber_delta");
  check(sigmoid_binary_cross_entropy(in("logits"), in("bin_labels")), "sigmoid_bce");
  check(softmax_cross_entropy(in("logits"), in("prob_labels")), "softmax_ce");
  check(softmax_cross_entropy(in("logits"), in("prob_labels"), 0), "softmax_ce_axis0");
  check(softmax_cross_entropy_with_integer_labels(in("logits"), in("int_labels")),
        "softmax_ce_int");
  check(kl_divergence(in("log_preds"), in("prob_labels")), "kl");
  check(kl_divergence(in("log_preds"), in("prob_labels"), 0), "kl_axis0");
  EXPECT_THROW(softmax_cross_entropy_with_integer_labels(in("logits"), in("prob_labels")), Error);
  EXPECT_THROW(l2_loss(in("pred"), in("logits")), Error);  // shapes differ
  // Extreme logits stay finite (the softplus never overflows), values and gradients.
  for (double x : {-200.0, 200.0}) {
    Array logit = scalar(x, DType::kF32), zero = scalar(0.0, DType::kF32);
    EXPECT_NEAR(sigmoid_binary_cross_entropy(logit, zero).item<float>(), x > 0 ? 200.0 : 0.0, 1e-4);
    float g = grad([&](const Array& l) { return sigmoid_binary_cross_entropy(l, zero); })(logit)
                  .item<float>();
    EXPECT_NEAR(g, x > 0 ? 1.0 : 0.0, 1e-6) << x;
  }
}

// jax.grad of each summed loss w.r.t. its first argument, against graft::grad.
TEST(OptaxParity, LossGradients) {
  auto in = [](const std::string& k) { return vectors().get("loss/" + k); };
  auto check = [](const Array& got, const std::string& name) {
    expect_allclose(got, vectors().get("loss/" + name), kRtol, kAtol, name);
  };
  Array pred = in("pred"), targ = in("targ"), logits = in("logits");
  Array bin = in("bin_labels"), probs = in("prob_labels"), ints = in("int_labels");
  check(grad([&](const Array& x) { return sum(l2_loss(x, targ)); })(pred), "grad_l2");
  check(grad([&](const Array& x) { return sum(huber_loss(x, targ, 0.5)); })(pred),
        "grad_huber_delta");
  check(grad([&](const Array& x) { return sum(sigmoid_binary_cross_entropy(x, bin)); })(logits),
        "grad_sigmoid_bce");
  check(grad([&](const Array& x) { return sum(softmax_cross_entropy(x, probs)); })(logits),
        "grad_softmax_ce");
  check(grad([&](const Array& x) {
          return sum(softmax_cross_entropy_with_integer_labels(x, ints));
        })(logits),
        "grad_softmax_ce_int");
  check(grad([&](const Array& x) { return sum(kl_divergence(x, probs)); })(in("log_preds")),
        "grad_kl");
}

// A schedule called on a traced count (under jit) gives what it gives eagerly.
TEST(OptaxParity, SchedulesTrace) {
  std::vector<Schedule> schedules = {
      exponential_decay(1.0, 4, 0.5, 0, true, 0.1),
      piecewise_constant_schedule(1.0, {{5, 0.5}, {10, 0.1}}),
      polynomial_schedule(1.0, 0.01, 2, 20, 5),
      cosine_onecycle_schedule(30, 1.0),
      linear_onecycle_schedule(40, 2.0),
  };
  for (size_t k = 0; k < schedules.size(); ++k) {
    Schedule s = schedules[k];
    auto traced = jit([s](const Array& count) { return s(count); });
    for (int step : {0, 3, 7, 12, 29, 35}) {
      float got = traced(scalar(step, DType::kI32)).item<float>();
      EXPECT_FLOAT_EQ(got, s(static_cast<int64_t>(step))) << "schedule " << k << " step " << step;
    }
  }
}

// The trust ratio is 1 where a norm is 0 (all-zero params or updates): no NaN, no update.
TEST(OptaxParity, TrustRatioZeroNorms) {
  Params params{{"a", zeros({3}, DType::kF32)}, {"b", full({2}, 1.0, DType::kF32)}};
  Params grads{{"a", full({3}, 0.5, DType::kF32)}, {"b", zeros({2}, DType::kF32)}};
  GradientTransformation opt = scale_by_trust_ratio({.trust_coefficient = 0.3});
  State state = opt.init(params);
  auto [u, s] = opt.update(grads, state, params);
  expect_allclose(u.at("a"), grads.at("a"), 0, 1e-12, "a");
  expect_allclose(u.at("b"), grads.at("b"), 0, 1e-12, "b");
  EXPECT_THROW(opt.update(grads, state), Error);  // needs params
  // lars with masks: only "b" gets the trust ratio, only "a" decays.
  GradientTransformation l =
      lars({.learning_rate = 0.1,
            .weight_decay = 0.5,
            .weight_decay_mask = [](const std::string& path, const Array&) { return path == "a"; },
            .trust_ratio_mask = [](const std::string& path, const Array&) { return path == "b"; },
            .momentum = 0.0});
  Params p2{{"a", full({3}, 2.0, DType::kF32)}, {"b", full({2}, 3.0, DType::kF32)}};
  Params g2{{"a", full({3}, 1.0, DType::kF32)}, {"b", full({2}, 4.0, DType::kF32)}};
  auto [u2, s2] = l.update(g2, l.init(p2), p2);
  // a: -0.1 * (1 + 0.5 * 2) = -0.2; b: -0.1 * 4 * 0.001 * |3, 3| / |4, 4| = -0.0003.
  expect_allclose(u2.at("a"), full({3}, -0.2, DType::kF32), 1e-6, 0, "lars a");
  expect_allclose(u2.at("b"), full({2}, -0.0003, DType::kF32), 1e-5, 0, "lars b");
}

}  // namespace
}  // namespace graft::optim
