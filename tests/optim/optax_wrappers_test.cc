// Optax's muon, clip, ema, multi_transform, inject_hyperparams, apply_every, apply_if_finite and
// zero_nans against Optax 0.2.8: tools/make_optax_vectors.py ran each (opt.init / opt.update /
// optax.apply_updates, f32 on CPU) over the recorded params and gradients and recorded the params
// after every step (and, for the NaN cases, the wrapper's counters). graft runs the same here.
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "core/ops.h"
#include "gtest/gtest.h"
#include "optim/optim.h"
#include "tests/optim/optax_fixture.h"

namespace graft::optim {
namespace {

using namespace optax_fixture;

// The recorded gradients with NaN where the generator's NAN_STEPS puts them ({leaf, flat
// index} per step); JSON has no NaN, so they are rebuilt here, not read.
Params nan_grads(int t) {
  static const std::map<int, std::vector<std::pair<std::string, int>>> kNanAt = {
      {1, {{"b", 1}}}, {3, {{"w", 2}}}, {4, {{"b", 0}, {"s", 0}}}};
  Params g = recorded_grads(t);
  auto it = kNanAt.find(t);
  if (it == kNanAt.end()) return g;
  for (const auto& [k, i] : it->second) {
    std::vector<float> data = g[k].to_vector<float>();
    data[i] = std::numeric_limits<float>::quiet_NaN();
    g[k] = array(data, g[k].shape());
  }
  return g;
}

int as_int(const Array& a) { return astype(a, DType::kI32).item<int>(); }

TEST(OptaxWrappers, Muon) {
  check_against_optax(muon({.learning_rate = 0.02}), "muon");
  check_against_optax(muon({.learning_rate = 0.02,
                            .ns_coeffs = {{4.0848, -6.8946, 2.9270},
                                          {3.9505, -6.3029, 2.6377},
                                          {3.7418, -5.5913, 2.3037},
                                          {2.8769, -3.1427, 1.2046},
                                          {2.8366, -3.0525, 1.2012}},
                            .weight_decay = 0.1,
                            .nesterov = false,
                            .adam_learning_rate = Schedule(0.01),
                            .consistent_rms = 0.2}),
                      "muon_dion_wd");
  check_against_optax(
      muon({.learning_rate = 0.05, .ns_steps = 3, .beta = 0.9, .adaptive = true}),
      "muon_adaptive_3steps");
}

TEST(OptaxWrappers, MuonRejectsBadCoefficientsAndShapes) {
  MuonOptions too_many;
  too_many.ns_coeffs = std::vector<std::array<double, 3>>(3, {1, 0, 0});
  too_many.ns_steps = 2;
  EXPECT_THROW(muon(too_many), Error);
  std::vector<Array> vec{zeros({3})};
  EXPECT_THROW(scale_by_muon().init(vec), Error);
}

TEST(OptaxWrappers, ClipAndEma) {
  check_against_optax(chain(clip(0.3), sgd({.learning_rate = 0.1})), "clip_sgd");
  check_against_optax(chain(ema(0.9), sgd({.learning_rate = 0.1})), "ema_sgd");
  check_against_optax(chain(ema(0.8, /*debias=*/false), sgd({.learning_rate = 0.1})),
                      "ema_no_debias_sgd");
}

TEST(OptaxWrappers, MultiTransformByFunctionAndByList) {
  std::map<std::string, GradientTransformation> tx = {
      {"mat", adam({.learning_rate = 0.01})},
      {"vec", sgd({.learning_rate = 0.1, .momentum = 0.9})}};
  check_against_optax(multi_transform(tx,
                                      [](const std::string& path, const Array&) {
                                        return std::string(path == "v" || path == "w" ? "mat"
                                                                                      : "vec");
                                      }),
                      "multi_transform");
  // Leaves in tree order: b, s, v, w.
  check_against_optax(multi_transform(tx, std::vector<std::string>{"vec", "vec", "mat", "mat"}),
                      "multi_transform");
}

TEST(OptaxWrappers, MultiTransformRejectsUnknownLabelsAndWrongLengths) {
  Params p = tree("params0");
  auto tx = multi_transform({{"a", sgd({})}},
                            [](const std::string&, const Array&) { return std::string("b"); });
  try {
    tx.init(p);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("optim.multi_transform"), std::string::npos) << e.what();
  }
  EXPECT_THROW(multi_transform({{"a", sgd({})}}, std::vector<std::string>{"a"}).init(p), Error);
}

TEST(OptaxWrappers, InjectHyperparamsSchedule) {
  check_against_optax(
      inject_hyperparams(
          [](const Hyperparams& h) {
            return adam({.learning_rate = injected(h.at("learning_rate"))});
          },
          {{"learning_rate", linear_schedule(0.02, 0.0, 5)}}),
      "inject_adam_linear_lr");
}

TEST(OptaxWrappers, InjectHyperparamsSetInState) {
  // As the generator: learning_rate overwritten in the state (0.03) before step 3.
  auto opt = inject_hyperparams(
      [](const Hyperparams& h) {
        return sgd({.learning_rate = injected(h.at("learning_rate")), .momentum = 0.9});
      },
      {{"learning_rate", 0.1}});
  Params params = tree("params0");
  State state = opt.init(params);
  EXPECT_NEAR(get_hyperparam(state, "learning_rate").item<float>(), 0.1f, 1e-7);
  for (int t = 0; t < kSteps; ++t) {
    if (t == 3) state = set_hyperparam(state, "learning_rate", 0.03);
    auto [u, next] = opt.update(recorded_grads(t), state, params);
    params = apply_updates(params, u);
    state = next;
    for (const auto& [k, v] : params) {
      std::string what = "inject_sgd_set_lr/" + std::to_string(t) + "/" + k;
      expect_allclose(v, vectors().get(what), kRtol, kAtol, what);
    }
  }
  EXPECT_NEAR(get_hyperparam(state, "learning_rate").item<float>(), 0.03f, 1e-7);
  EXPECT_THROW(get_hyperparam(state, "momentum"), Error);
}

TEST(OptaxWrappers, ApplyEvery) {
  check_against_optax(chain(apply_every(3), sgd({.learning_rate = 0.1, .momentum = 0.5})),
                      "apply_every_sgd");
  EXPECT_THROW(apply_every(0), Error);
}

TEST(OptaxWrappers, ApplyIfFiniteSkipsAndCounts) {
  for (const auto& [name, inner] :
       std::vector<std::pair<std::string, GradientTransformation>>{
           {"apply_if_finite_sgd", sgd({.learning_rate = 0.1, .momentum = 0.9})},
           {"apply_if_finite_adam", adam({.learning_rate = 0.01})}}) {
    check_against_optax(apply_if_finite(inner, 2), name, nan_grads,
                        [name = name](int t, const State& s) {
                          std::string at = name + "/" + std::to_string(t) + "/";
                          const Slots& c = s.parts[0];
                          EXPECT_EQ(as_int(c.at("notfinite_count")[0]),
                                    vectors().get(at + "notfinite_count").item<int>()) << at;
                          EXPECT_EQ(as_int(c.at("total_notfinite")[0]),
                                    vectors().get(at + "total_notfinite").item<int>()) << at;
                          EXPECT_EQ(as_int(c.at("last_finite")[0]),
                                    vectors().get(at + "last_finite").item<int>()) << at;
                        });
  }
}

TEST(OptaxWrappers, ApplyIfFiniteGivesUpAfterMaxConsecutiveErrors) {
  // Hand-derived: with max_consecutive_errors = 1, the first Inf step is skipped, the second
  // in a row is applied (plain sgd, so the param becomes -inf), as Optax's docs state.
  auto opt = apply_if_finite(sgd({.learning_rate = 1.0}), 1);
  std::vector<Array> p{full({2}, 1.0)};
  State s = opt.init(p);
  std::vector<Array> g{array(std::vector<float>{INFINITY, 1.0f})};
  auto [u1, s1] = opt.update(g, s, p);
  EXPECT_EQ(u1[0].to_vector<float>(), (std::vector<float>{0.0f, 0.0f}));
  auto [u2, s2] = opt.update(g, s1, p);
  EXPECT_EQ(u2[0].to_vector<float>(), (std::vector<float>{-INFINITY, -1.0f}));
  EXPECT_EQ(as_int(s2.parts[0].at("total_notfinite")[0]), 2);
}

TEST(OptaxWrappers, ZeroNans) {
  check_against_optax(chain(zero_nans(), sgd({.learning_rate = 0.1})), "zero_nans_sgd", nan_grads,
                      [](int t, const State& s) {
                        std::string what = "zero_nans_sgd/" + std::to_string(t) + "/found_nan";
                        std::vector<int> want = vectors().get(what).to_vector<int>();
                        const std::vector<Array>& found = s.parts[0].at("found_nan");
                        ASSERT_EQ(found.size(), want.size());
                        for (size_t i = 0; i < found.size(); ++i) {
                          EXPECT_EQ(as_int(found[i]), want[i]) << what << " leaf " << i;
                        }
                      });
}

TEST(OptaxWrappers, JitsAWholeStep) {
  // The wrappers build graphs only (no C++ branch on values), so a jitted step agrees with
  // the eager one.
  auto opt = apply_if_finite(chain(zero_nans(), ema(0.9), clip(0.2), apply_every(2)), 3);
  Params params = tree("params0");
  State s0 = opt.init(params);
  auto step = jit([&](Params p, State s, Params g) {
    auto [u, s2] = opt.update(g, s, p);
    return std::tuple{apply_updates(p, u), s2};
  });
  Params pe = params, pj = params;
  State se = s0, sj = s0;
  for (int t = 0; t < 4; ++t) {
    Params g = nan_grads(t);
    auto [u, se2] = opt.update(g, se, pe);
    pe = apply_updates(pe, u);
    se = se2;
    auto [pj2, sj2] = step(pj, sj, g);
    pj = pj2;
    sj = sj2;
    for (const auto& [k, v] : pe) expect_allclose(pj.at(k), v, 1e-6, 1e-7, k);
  }
}

}  // namespace
}  // namespace graft::optim
