// Elementwise fusion: a chain of 8 elementwise ops on a 64 MiB f32 array, jitted (one fused
// tiled loop) vs eager (one pass and one temporary per op), against memcpy of the same bytes
// into a warmed-up buffer and into a freshly allocated one (first-touch page faults).
//
//   bazel run -c opt //bench:fusion_bench
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "core/backend/cpu/parallel.h"
#include "core/ops.h"
#include "transforms/jit.h"

namespace g = graft;
using Clock = std::chrono::steady_clock;

template <typename F>
double median_ms(int repeats, F f) {
  f();  // warm-up
  std::vector<double> t;
  for (int r = 0; r < repeats; ++r) {
    auto s = Clock::now();
    f();
    t.push_back(std::chrono::duration<double, std::milli>(Clock::now() - s).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

g::Array chain(const g::Array& x) {
  g::Array a = g::tanh(x * 1.5 + 0.5);  // mul, add, tanh
  g::Array b = g::exp(-(a * x));        // mul, neg, exp
  return g::maximum(b - a, x) * x + a;  // sub, max, mul, add
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

  std::printf("8-op elementwise chain on %lld f32 (64 MiB), %d threads:\n",
              static_cast<long long>(n), g::cpu::num_threads());
  std::printf("  jit (fused)        %8.2f ms\n", fused);
  std::printf("  eager (unfused)    %8.2f ms   %.2fx fused\n", eager, eager / fused);
  std::printf("  memcpy warm dst    %8.2f ms   fused = %.2fx memcpy\n", copy_warm,
              fused / copy_warm);
  std::printf("  memcpy fresh dst   %8.2f ms   fused = %.2fx memcpy (fresh allocation)\n",
              copy_fresh, fused / copy_fresh);
  return 0;
}
