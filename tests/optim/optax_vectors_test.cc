// graft::optim against Optax 0.2.8: tools/make_optax_vectors.py ran each optimizer (under
// jax.jit, f32) on the same initial params and gradient sequence and recorded the params after
// every step, the schedule values and the global norms. Here graft runs the same optimizers
// eagerly on the recorded inputs and must agree to f32 rounding.
#include <string>
#include <vector>

#include "core/ops.h"
#include "gtest/gtest.h"
#include "optim/optim.h"
#include "tests/optim/optax_fixture.h"
#include "tests/util/test_vectors.h"

namespace graft::optim {
namespace {

using namespace optax_fixture;

TEST(OptaxVectors, Sgd) {
  check_against_optax(sgd({.learning_rate = 0.1}), "sgd");
  check_against_optax(sgd({.learning_rate = 0.1, .momentum = 0.9}), "sgd_momentum");
  check_against_optax(sgd({.learning_rate = 0.1, .momentum = 0.9, .nesterov = true}),
                      "sgd_nesterov");
  check_against_optax(sgd({.learning_rate = linear_schedule(0.2, 0.0, 4)}), "sgd_linear_lr");
}

TEST(OptaxVectors, Adam) {
  check_against_optax(adam({.learning_rate = 0.01}), "adam");
  check_against_optax(adam({.learning_rate = 0.01, .nesterov = true}), "adam_nesterov");
}

TEST(OptaxVectors, AdamWWithMask) {
  check_against_optax(adamw({.learning_rate = 0.01, .weight_decay = 0.1, .mask = ndim_at_least(2)}),
                      "adamw");
}

TEST(OptaxVectors, Lion) {
  check_against_optax(lion({.learning_rate = 0.01, .weight_decay = 0.1}), "lion");
}

TEST(OptaxVectors, ClipThenAdamWWithWarmupCosine) {
  Schedule lr = warmup_cosine_decay(0.0, 0.1, 2, 10, 0.01);
  check_against_optax(
      chain(clip_by_global_norm(1.0),
            adamw({.learning_rate = lr, .weight_decay = 0.1, .mask = ndim_at_least(2)})),
      "clip_adamw_warmup_cosine");
  for (int t = 0; t < kSteps; ++t) {
    std::string what = "clip_adamw_warmup_cosine/" + std::to_string(t) + "/lr";
    EXPECT_NEAR(lr(t), vectors().get(what).item<float>(), 1e-7) << what;
  }
}

TEST(OptaxVectors, Adafactor) {
  check_against_optax(adafactor({.learning_rate = 0.1, .min_dim_size_to_factor = 2}), "adafactor");
  check_against_optax(adafactor({.learning_rate = 0.05,
                                 .min_dim_size_to_factor = 2,
                                 .multiply_by_parameter_scale = false,
                                 .clipping_threshold = std::nullopt,
                                 .weight_decay_rate = 0.1,
                                 .weight_decay_mask = ndim_at_least(2)}),
                      "adafactor_wd");
}

TEST(OptaxVectors, MultiStepsAdam) {
  check_against_optax(MultiSteps(adam({.learning_rate = 0.1}), 3), "multi_steps_adam");
  check_against_optax(MultiSteps(sgd({.learning_rate = 0.5, .momentum = 0.9}), 2),
                      "multi_steps_sgd_momentum");
}

TEST(OptaxVectors, GlobalNorm) {
  for (int t = 0; t < kSteps; ++t) {
    std::string what = "global_norm/" + std::to_string(t);
    expect_allclose(global_norm(tree("grads/" + std::to_string(t))), vectors().get(what), kRtol, 0,
                    what);
  }
}

TEST(OptaxVectors, Schedules) {
  std::vector<int> steps = vectors().get("sched/steps").to_vector<int>();
  std::map<std::string, Schedule> schedules = {
      {"constant", constant_schedule(0.5)},
      {"linear", linear_schedule(1.0, 0.1, 10, 5)},
      {"cosine", cosine_decay(1.0, 20, 0.1)},
      {"warmup_cosine", warmup_cosine_decay(0.0, 1.0, 5, 25, 0.05)},
      {"wsd_linear",
       warmup_stable_decay(
           {.peak_value = 1.0, .warmup_steps = 4, .total_steps = 30, .decay_fraction = 0.2})},
      {"wsd_cosine", warmup_stable_decay({.peak_value = 1.0,
                                          .warmup_steps = 4,
                                          .total_steps = 30,
                                          .decay_fraction = 0.2,
                                          .init_value = 0.1,
                                          .end_value = 0.05,
                                          .decay = DecayShape::kCosine})},
      {"wsd_sqrt", warmup_stable_decay({.peak_value = 1.0,
                                        .warmup_steps = 4,
                                        .total_steps = 30,
                                        .decay_fraction = 0.2,
                                        .decay = DecayShape::kSqrt})},
  };
  for (const auto& [name, sched] : schedules) {
    std::vector<float> want = vectors().get("sched/" + name).to_vector<float>();
    ASSERT_EQ(want.size(), steps.size()) << name;
    for (size_t i = 0; i < steps.size(); ++i) {
      EXPECT_NEAR(sched(static_cast<int64_t>(steps[i])), want[i], 2e-6)
          << name << " at step " << steps[i];
    }
  }
}

}  // namespace
}  // namespace graft::optim
