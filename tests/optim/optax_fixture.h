// The Optax-recorded vectors (tools/make_optax_vectors.py -> testdata/optax_vectors.json)
// and the check both Optax test files run: an optimizer over the recorded params and
// gradients, the params compared after every step to f32 rounding.
#pragma once

#include <functional>
#include <map>
#include <string>

#include "core/ops.h"
#include "gtest/gtest.h"
#include "optim/optim.h"
#include "tests/util/test_vectors.h"

namespace graft::optim::optax_fixture {

using Params = std::map<std::string, Array>;
using graft::testing::expect_allclose;
using graft::testing::TestVectors;

constexpr int kSteps = 6;
constexpr double kRtol = 1e-5, kAtol = 1e-6;

inline const TestVectors& vectors() {
  static const TestVectors* tv = [] {
    auto loaded = TestVectors::Load("tests/optim/testdata/optax_vectors.json");
    if (!loaded.ok()) {
      ADD_FAILURE() << loaded.status();
      return new TestVectors();
    }
    return new TestVectors(*std::move(loaded));
  }();
  return *tv;
}

inline Params tree(const std::string& prefix) {
  Params p;
  for (const char* k : {"b", "s", "v", "w"}) p[k] = vectors().get(prefix + "/" + k);
  return p;
}

inline Params recorded_grads(int t) { return tree("grads/" + std::to_string(t)); }

// Runs `opt` over the gradients (the recorded ones unless given) and checks the params after
// every step; `after_step(t, state)` may look at (and check) the state after step t.
inline void check_against_optax(
    const GradientTransformation& opt, const std::string& name,
    const std::function<Params(int)>& grads = recorded_grads,
    const std::function<void(int, const State&)>& after_step = nullptr) {
  SCOPED_TRACE(name);
  Params params = tree("params0");
  State state = opt.init(params);
  for (int t = 0; t < kSteps; ++t) {
    auto [updates, next] = opt.update(grads(t), state, params);
    params = apply_updates(params, updates);
    state = next;
    for (const auto& [k, v] : params) {
      std::string what = name + "/" + std::to_string(t) + "/" + k;
      expect_allclose(v, vectors().get(what), kRtol, kAtol, what);
    }
    if (after_step) after_step(t, state);
  }
}

}  // namespace graft::optim::optax_fixture
