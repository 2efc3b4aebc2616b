// One timed train step, shared by train_bench and peer_step: runs `step` on (params, state,
// x, y), replaces params and state with its results and returns the loss and the seconds it
// took (reading the loss waits for the whole step).
#pragma once

#include <chrono>
#include <utility>

#include "core/array.h"
#include "optim/optim.h"

namespace graft::bench {

template <class Step, class Params>
std::pair<float, double> timed_train_step(const Step& step, Params& params, optim::State& state,
                                          const Array& x, const Array& y) {
  auto t0 = std::chrono::steady_clock::now();
  auto [p2, s2, metrics] = step(params, state, x, y);
  const float loss = metrics.at("loss").template item<float>();
  const double dt = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  params = std::move(p2);
  state = std::move(s2);
  return {loss, dt};
}

}  // namespace graft::bench
