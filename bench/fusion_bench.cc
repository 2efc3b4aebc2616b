// Elementwise fusion: a chain of 8 elementwise ops on a 64 MiB f32 array, jitted (one fused
// tiled loop) vs eager (one pass and one temporary per op), against memcpy of the same bytes
// into a warmed-up buffer and into a freshly allocated one (first-touch page faults). Also:
// the same chain's compute alone (run on a 4 MiB array that stays in cache, scaled to 64 MiB),
// and an 8-op chain without transcendentals, to separate arithmetic from memory traffic.
//
//   bazel run -c opt //bench:fusion_bench
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "bench/timing.h"
#include "core/backend/cpu/parallel.h"
#include "core/ops.h"
#include "transforms/jit.h"

namespace g = graft;

using graft::bench::median_ms;

// 8 ops, two of them transcendental.
g::Array chain(const g::Array& x) {
  g::Array a = g::tanh(x * 1.5);    // mul, tanh
  g::Array b = g::exp(-(a * x));    // mul, neg, exp
  return g::maximum(b - a, x) * x;  // sub, max, mul
}

// The same length of chain with cheap ops only (mul, add, mul, neg, sub, max, mul, add).
g::Array arithmetic_chain(const g::Array& x) {
  g::Array a = x * 1.5 + 0.5;
  g::Array b = -(a * x);
  return g::maximum(b - a, x) * x + a;
}

// ms per 64 MiB of f32 for a jitted fn run on a 4 MiB array (input and output stay in the
// L3 cache): its compute, without DRAM traffic.
template <typename F>
double in_cache_ms(F fn, int64_t n) {
  constexpr int64_t m = (4 << 20) / 4;
  std::vector<float> host(m);
  for (int64_t i = 0; i < m; ++i) host[i] = static_cast<float>((i % 2001) - 1000) * 1e-3f;
  g::Array x = g::array<float>(host, g::Shape{m});
  g::eval(x);
  auto j = g::jit(fn);
  constexpr int kCalls = 16;
  return median_ms(5,
                   [&] {
                     for (int c = 0; c < kCalls; ++c) j(x);
                   }) /
         kCalls * static_cast<double>(n) / m;
}

int main() {
  constexpr int64_t n = (64 << 20) / 4;
  std::vector<float> host(n);
  for (int64_t i = 0; i < n; ++i) host[i] = static_cast<float>((i % 2001) - 1000) * 1e-3f;
  g::Array x = g::array<float>(host, g::Shape{n});
  g::eval(x);
  size_t bytes = n * sizeof(float);

  auto jchain = g::jit(chain);
  double fused = median_ms(9, [&] { jchain(x); });
  double eager = median_ms(5, [&] { g::eval(chain(x)); });
  auto jarith = g::jit(arithmetic_chain);
  double arith = median_ms(9, [&] { jarith(x); });
  double chain_compute = in_cache_ms(chain, n);
  double arith_compute = in_cache_ms(arithmetic_chain, n);

  // memcpy split over the same thread pool, as the kernels are.
  const char* src = static_cast<const char*>(x.raw_data());
  auto pcopy = [&](char* dst) {
    g::cpu::parallel_for(static_cast<int64_t>(bytes), 1 << 20,
                         [&](int64_t b, int64_t e) { std::memcpy(dst + b, src + b, e - b); });
  };
  char* warm = static_cast<char*>(std::aligned_alloc(64, bytes));
  std::memset(warm, 0, bytes);
  double copy_warm = median_ms(9, [&] { pcopy(warm); });
  double copy_fresh = median_ms(9, [&] {
    char* fresh = static_cast<char*>(std::aligned_alloc(64, bytes));
    pcopy(fresh);
    std::free(fresh);
  });
  std::free(warm);

  std::printf("8-op chain (mul tanh mul neg exp sub max mul) on %lld f32 (64 MiB), %d threads:\n",
              static_cast<long long>(n), g::cpu::num_threads());
  std::printf("  jit (fused)        %8.2f ms\n", fused);
  std::printf("  eager (unfused)    %8.2f ms   %.2fx fused\n", eager, eager / fused);
  std::printf("  memcpy warm dst    %8.2f ms   fused = %.2fx memcpy\n", copy_warm,
              fused / copy_warm);
  std::printf("  memcpy fresh dst   %8.2f ms   fused = %.2fx memcpy (fresh allocation)\n",
              copy_fresh, fused / copy_fresh);
  std::printf("  compute alone      %8.2f ms   (in cache, scaled) = %.2fx memcpy\n", chain_compute,
              chain_compute / copy_warm);
  std::printf("8-op chain without tanh / exp (mul add mul neg sub max mul add):\n");
  std::printf("  jit (fused)        %8.2f ms   fused = %.2fx memcpy\n", arith, arith / copy_warm);
  std::printf("  compute alone      %8.2f ms   (in cache, scaled) = %.2fx memcpy\n", arith_compute,
              arith_compute / copy_warm);
  return 0;
}
