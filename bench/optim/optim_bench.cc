// Times one AdamW step (clip_by_global_norm + adamw with a warmup-cosine schedule) on f32
// params, eager and under jit (params and state donated), against memcpy of the bytes an
// ideal fused step moves: it reads params, grads, mu, nu and writes params, mu, nu (7 arrays).
// Usage: bazel run -c opt //bench/optim:optim_bench [-- n]   (n floats per leaf x 4 leaves)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "core/ops.h"
#include "optim/optim.h"
#include "transforms/jit.h"

namespace {

using Params = std::map<std::string, graft::Array>;

double median_seconds(int reps, const std::function<void()>& fn) {
  fn();  // warm up (compile, page faults)
  std::vector<double> t;
  for (int i = 0; i < reps; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    fn();
    t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(t.begin(), t.end());
  return t[reps / 2];
}

}  // namespace

int main(int argc, char** argv) {
  namespace g = graft;
  namespace optim = graft::optim;
  int64_t n = argc > 1 ? std::atoll(argv[1]) : (1 << 20);
  const int reps = 15;
  Params params, grads;
  for (int i = 0; i < 4; ++i) {
    std::string k = "w" + std::to_string(i);
    params[k] = g::full({n}, 0.5 + i);
    grads[k] = g::full({n}, 0.01 * (i + 1));
  }
  auto opt = optim::chain(
      optim::clip_by_global_norm(1.0),
      optim::adamw({.learning_rate = optim::warmup_cosine_decay(0.0, 3e-4, 100, 10000, 3e-5),
                    .weight_decay = 0.1}));
  auto step = [&opt](const Params& p, const optim::State& s, const Params& gr) {
    auto [u, s2] = opt.update(gr, s, p);
    return std::tuple{optim::apply_updates(p, u), s2};
  };
  auto jitted = g::jit(step, {.donate_argnums = {0, 1}});

  Params p = params;
  optim::State s = opt.init(p);
  double eager = median_seconds(reps, [&] {
    auto [p2, s2] = step(p, s, grads);
    g::eval(g::tree_leaves(std::tuple{p2, s2}));
    p = p2;
    s = s2;
  });
  Params pj = params;
  optim::State sj = opt.init(pj);
  double jit = median_seconds(reps, [&] { std::tie(pj, sj) = jitted(pj, sj, grads); });

  double bytes = 7.0 * 4 * n * 4;
  std::vector<char> a(static_cast<size_t>(bytes / 7 * 3)), b(a.size());
  double copy = median_seconds(reps, [&] { std::memcpy(b.data(), a.data(), a.size()); });
  double copy_all = copy * 7 / 3 / 2;  // memcpy reads and writes: scale to 7 array passes
  std::printf("adamw step, 4 x %lld f32 (%.1f MB params)\n", static_cast<long long>(n),
              4.0 * n * 4 / 1e6);
  std::printf("  eager            %8.3f ms\n", eager * 1e3);
  std::printf("  jit (donated)    %8.3f ms   (%.2fx eager)\n", jit * 1e3, eager / jit);
  std::printf("  memcpy of 7 arrays' bytes %8.3f ms   (jit / memcpy %.1fx)\n", copy_all * 1e3,
              jit / copy_all);
  std::printf("  jit stats: %lld hits, %lld misses, compile %.1f ms\n",
              static_cast<long long>(jitted.stats().hits),
              static_cast<long long>(jitted.stats().misses), jitted.stats().compile_seconds * 1e3);
  return 0;
}
