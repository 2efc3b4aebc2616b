// Causal GQA attention: the fused flash_attention kernel (nn::causal_attention) against the naive
// one (materializes softmax(q k^T)), forward and forward + backward, eager and under jit, on
// the llama-small attention shape (bench-configs.md: B=8, T=256, H=8, KV=4, D=64, f32). Also
// what each keeps for the backward pass and the planned peak memory of the jitted step, and
// a sweep of block sizes. Ratios are measured within one run (the machine is shared).
//
//   bazel run -c opt //bench:attention_bench            # all block sizes
//   bazel run -c opt //bench:attention_bench -- quick   # the default blocks only
//
// Last, the same fused attention on bf16 q, k, v (o bf16, lse f32; AVX512-BF16 tile products
// where the CPU has them) against f32, alternating, as a time ratio.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <vector>

#include "bench/timing.h"
#include "core/backend/cpu/openmp_policy.h"
#include "core/ops.h"
#include "core/random/random.h"
#include "nn/attention.h"
#include "transforms/autodiff.h"
#include "transforms/jit.h"
#include "transforms/remat.h"

namespace g = graft;

constexpr int64_t kB = 8, kT = 256, kH = 8, kKV = 4, kD = 64;

using g::bench::best_ms;

using Attn = std::function<g::Array(const g::Array&, const g::Array&, const g::Array&)>;

struct Figures {
  double fwd_eager, fwd_jit, step_eager, step_jit;
  int64_t residual_bytes, step_peak_bytes;
};

Figures measure(const Attn& attn, const g::Array& q, const g::Array& k, const g::Array& v,
                const g::Array& w, int repeats) {
  auto loss = [attn, w](const g::Array& q, const g::Array& k, const g::Array& v) {
    return g::sum(attn(q, k, v) * w);
  };
  auto grads = g::grad(loss, g::argnums<0, 1, 2>);
  auto jfwd = g::jit(
      [attn](const g::Array& q, const g::Array& k, const g::Array& v) { return attn(q, k, v); });
  auto jstep = g::jit(
      [grads](const g::Array& q, const g::Array& k, const g::Array& v) { return grads(q, k, v); });
  Figures f;
  f.fwd_eager = best_ms(repeats, [&] { g::eval(attn(q, k, v)); });
  f.fwd_jit = best_ms(repeats, [&] { jfwd(q, k, v); });
  f.step_eager = best_ms(repeats, [&] {
    auto [a, b, c] = grads(q, k, v);
    g::eval(a, b, c);
  });
  f.step_jit = best_ms(repeats, [&] { jstep(q, k, v); });
  int64_t total = 0;
  for (const auto& r : g::saved_residuals(attn, q, k, v)) total += r.bytes;
  f.residual_bytes = total;
  f.step_peak_bytes = jstep.memory_analysis(q, k, v).peak_bytes;
  return f;
}

void print(const char* name, const Figures& f) {
  std::printf(
      "%-22s fwd eager %7.2f ms  fwd jit %7.2f ms  fwd+bwd eager %7.2f ms  fwd+bwd jit %7.2f "
      "ms  residuals %6.2f MiB  jit step peak %6.2f MiB\n",
      name, f.fwd_eager, f.fwd_jit, f.step_eager, f.step_jit, f.residual_bytes / 1048576.0,
      f.step_peak_bytes / 1048576.0);
}

int main(int argc, char** argv) {
  // oneDNN (the naive version) runs on OpenMP: its spinning threads would slow graft's pool.
  g::cpu::reexec_with_passive_openmp(argv);
  bool quick = argc > 1 && std::strcmp(argv[1], "quick") == 0;
  g::Array ks = g::random::split(g::random::key(0), 4);
  auto normal = [&](int i, const g::Shape& s) {
    return g::random::normal(g::take(ks, g::Array(i), 0), s);
  };
  g::Array q = normal(0, {kB, kT, kH, kD}), k = normal(1, {kB, kT, kKV, kD}),
           v = normal(2, {kB, kT, kKV, kD}), w = normal(3, {kB, kT, kH, kD});
  g::eval(q, k, v, w);
  std::printf(
      "causal GQA attention, B=%ld T=%ld H=%ld KV=%ld D=%ld, f32; fastest of 7 (shared "
      "machine); OMP_WAIT_POLICY=%s\n",
      kB, kT, kH, kKV, kD, std::getenv("OMP_WAIT_POLICY"));
  const int repeats = 7;
  Figures naive = measure([](const g::Array& q, const g::Array& k,
                             const g::Array& v) { return g::nn::naive_causal_attention(q, k, v); },
                          q, k, v, w, repeats);
  print("naive", naive);
  std::vector<std::pair<int64_t, int64_t>> blocks = {{64, 64}};
  if (!quick) blocks = {{32, 32}, {64, 64}, {128, 128}, {64, 128}, {128, 64}, {256, 256}};
  for (auto [bq, bk] : blocks) {
    g::nn::AttentionOptions o{.block_q = bq, .block_k = bk};
    Figures t = measure([o](const g::Array& q, const g::Array& k,
                            const g::Array& v) { return g::nn::causal_attention(q, k, v, o); },
                        q, k, v, w, repeats);
    char name[64];
    std::snprintf(name, sizeof name, "fused %ldx%ld", bq, bk);
    print(name, t);
    std::printf(
        "%-22s naive/fused time: fwd eager %.2fx, fwd jit %.2fx, fwd+bwd eager %.2fx, "
        "fwd+bwd jit %.2fx; residuals %.1fx smaller\n",
        "", naive.fwd_eager / t.fwd_eager, naive.fwd_jit / t.fwd_jit,
        naive.step_eager / t.step_eager, naive.step_jit / t.step_jit,
        double(naive.residual_bytes) / t.residual_bytes);
  }
  // bf16 against f32, the default blocks, three alternating rounds (best of each).
  auto fused = [](const g::Array& q, const g::Array& k, const g::Array& v) {
    return g::nn::causal_attention(q, k, v);
  };
  auto half = [](const g::Array& x) { return g::astype(x, g::DType::kBF16); };
  g::Array qh = half(q), kh = half(k), vh = half(v);
  g::eval(qh, kh, vh);
  Figures f32{1e30, 1e30, 1e30, 1e30, 0, 0}, b16 = f32;
  auto keep_best = [](Figures& best, const Figures& f) {
    best.fwd_jit = std::min(best.fwd_jit, f.fwd_jit);
    best.step_jit = std::min(best.step_jit, f.step_jit);
  };
  for (int round = 0; round < 3; ++round) {
    keep_best(f32, measure(fused, q, k, v, w, repeats));
    keep_best(b16, measure(fused, qh, kh, vh, w, repeats));
  }
  std::printf(
      "fused 64x64, jit: f32 fwd %.2f ms, fwd+bwd %.2f ms; bf16 fwd %.2f ms, fwd+bwd %.2f ms; "
      "f32/bf16 time: fwd %.2fx, fwd+bwd %.2fx\n",
      f32.fwd_jit, f32.step_jit, b16.fwd_jit, b16.step_jit, f32.fwd_jit / b16.fwd_jit,
      f32.step_jit / b16.step_jit);
  return 0;
}
