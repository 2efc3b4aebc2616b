// Timing helpers shared by the benchmark programs: one warm-up call (page faults, thread
// pool, jit compile), then `repeats` timed calls.
#pragma once

#include <algorithm>
#include <chrono>
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

}  // namespace graft::bench
