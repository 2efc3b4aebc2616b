// jit: what a call of a cached jitted function costs on small inputs, against calling the
// same function eagerly (build the graph, evaluate it), the compile time of long chains, and
// of an MLP training step (value_and_grad of a 3-layer MLP + SGD update): the first call
// (trace, passes, run) against a cached call and an eager step.
//
//   bazel run -c opt //bench:jit_bench
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

#include "bench/timing.h"
#include "core/ops.h"
#include "core/random/random.h"
#include "transforms/autodiff.h"
#include "transforms/jit.h"

namespace g = graft;

struct BenchMlp {
  g::Array w1, b1, w2, b2, w3, b3;
};
GRAFT_TREE(BenchMlp, w1, b1, w2, b2, w3, b3);
using Clock = std::chrono::steady_clock;

// us per call (bench/timing.h).
template <typename F>
double median_us_per_iter(int iters, int repeats, F f) {
  return graft::bench::median_ns_per_call(iters, repeats, f) / 1e3;
}

g::Array mlp_loss(const BenchMlp& p, const g::Array& x, const g::Array& y) {
  g::Array h = g::tanh(g::matmul(x, p.w1) + p.b1);
  h = g::tanh(g::matmul(h, p.w2) + p.b2);
  return g::mean(g::square(g::matmul(h, p.w3) + p.b3 - y));
}

// One SGD step of a 32-256-256-1 tanh MLP on a batch of 128.
void mlp_step_bench() {
  const int64_t batch = 128, in = 32, hidden = 256;
  auto normal = [](int seed, g::Shape s, double scale) {
    g::Array a = g::random::normal(g::random::key(seed), s) * scale;
    g::eval(a);
    return a;
  };
  BenchMlp p{normal(1, {in, hidden}, 0.18),     g::zeros({hidden}),
             normal(2, {hidden, hidden}, 0.06), g::zeros({hidden}),
             normal(3, {hidden, 1}, 0.06),      g::zeros({1})};
  g::Array x = normal(4, {batch, in}, 1.0), y = normal(5, {batch, 1}, 1.0);
  auto step = [](const BenchMlp& params, const g::Array& xs, const g::Array& ys) {
    auto [l, grads] = g::value_and_grad(mlp_loss)(params, xs, ys);
    BenchMlp next = g::tree_map([](const g::Array& a, const g::Array& d) { return a - 0.01 * d; },
                                params, grads);
    return std::make_pair(l, next);
  };
  auto eager_step = [&] {
    auto [l, next] = step(p, x, y);
    g::eval(g::tree_leaves(next));
    g::eval(l);
  };
  eager_step();  // warms oneDNN's primitive cache, so the first jit call times jit's own work
  auto jstep = g::jit(step);
  auto s = Clock::now();
  jstep(p, x, y);
  double first = std::chrono::duration<double, std::milli>(Clock::now() - s).count();
  double compile = jstep.stats().compile_seconds * 1e3;
  double cached = median_us_per_iter(50, 7, [&] { jstep(p, x, y); });
  double eager = median_us_per_iter(50, 7, eager_step);
  std::printf(
      "MLP training step (value_and_grad of 32-256-256-1 tanh MLP, batch 128, + SGD): jit first "
      "call %.2f ms (trace + passes %.2f ms), cached call %.0f us, eager %.0f us\n",
      first, compile, cached, eager);
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
  mlp_step_bench();
  return 0;
}
