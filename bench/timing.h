// Timing helpers shared by the benchmark programs: one warm-up call (page faults, thread
// pool, jit compile), then `repeats` timed calls; or rounds of many calls for tiny ones.
#pragma once

#include <algorithm>
#include <chrono>
#include <type_traits>
#include <vector>

namespace graft::bench {

// The timed calls' durations in ms, sorted.
template <typename F>
std::vector<double> sorted_times_ms(int repeats, F&& f) {
  f();
  std::vector<double> t;
  for (int r = 0; r < repeats; ++r) {
    auto start = std::chrono::steady_clock::now();
    f();
    t.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                    .count());
  }
  std::sort(t.begin(), t.end());
  return t;
}

template <typename F>
double median_ms(int repeats, F&& f) {
  std::vector<double> t = sorted_times_ms(repeats, f);
  return t[t.size() / 2];
}

// The fastest call: on a shared machine the slower ones measure the neighbours.
template <typename F>
double best_ms(int repeats, F&& f) {
  return sorted_times_ms(repeats, f).front();
}

// Time of one call in ns: the median over `repeats` rounds of each round's mean over `iters`
// calls (for calls too short to time one by one). f takes the call's index or nothing.
template <typename F>
double median_ns_per_call(int iters, int repeats, F&& f) {
  std::vector<double> t;
  for (int r = 0; r < repeats; ++r) {
    auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < iters; ++i) {
      if constexpr (std::is_invocable_v<F&, int>) {
        f(i);
      } else {
        f();
      }
    }
    t.push_back(
        std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start).count() /
        iters);
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

}  // namespace graft::bench
