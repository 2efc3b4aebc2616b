// jit: what a call of a cached jitted function costs on small inputs, against calling the
// same function eagerly (build the graph, evaluate it), and the compile time of long chains.
//
//   bazel run -c opt //bench:jit_bench
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

#include "core/ops.h"
#include "transforms/jit.h"

namespace g = graft;
using Clock = std::chrono::steady_clock;

template <typename F>
double median_us_per_iter(int iters, int repeats, F f) {
  std::vector<double> t;
  for (int r = 0; r < repeats; ++r) {
    auto s = Clock::now();
    for (int i = 0; i < iters; ++i) f();
    t.push_back(std::chrono::duration<double, std::micro>(Clock::now() - s).count() / iters);
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

int main() {
  g::Array x = g::array<float>(std::vector<float>(16, 0.5f), g::Shape{4, 4});
  g::Array y = g::array<float>(std::vector<float>(16, 2.0f), g::Shape{4, 4});
  g::eval(x, y);

  auto small = [](const g::Array& a, const g::Array& b) {
    return g::sum(g::tanh(a) * b + 1.0, {1}) * 2.0;
  };
  auto jsmall = g::jit(small);
  jsmall(x, y);
  double eager = median_us_per_iter(20000, 7, [&] { g::eval(small(x, y)); });
  double jitted = median_us_per_iter(20000, 7, [&] { jsmall(x, y); });
  std::printf(
      "small fn (tanh, mul, add 1.0, sum, mul 2.0 on 4x4): eager %.2f us/call, "
      "jit (cache hit) %.2f us/call\n",
      eager, jitted);

  auto ident = g::jit([](const g::Array& a, const g::Array& b) { return std::make_pair(a, b); });
  ident(x, y);
  double overhead = median_us_per_iter(50000, 7, [&] { ident(x, y); });
  std::printf("jit hit path with no instructions (key + lookup + unflatten): %.2f us/call\n",
              overhead);

  for (int kind = 0; kind < 2; ++kind) {
    auto chain = [kind](const g::Array& a) {
      g::Array r = a;
      for (int i = 0; i < 1000; ++i) r = kind == 0 ? g::tanh(r) : r * 0.999 + 0.001;
      return r;
    };
    auto jchain = g::jit(chain);
    jchain(x);
    double e = median_us_per_iter(20, 5, [&] { g::eval(chain(x)); });
    double j = median_us_per_iter(20, 5, [&] { jchain(x); });
    std::printf("%s: compile %.1f ms; per call eager %.0f us, jit %.0f us\n",
                kind == 0 ? "1000 x tanh chain" : "1000 x (r * 0.999 + 0.001) chain",
                jchain.stats().compile_seconds * 1e3, e, j);
  }
  return 0;
}
