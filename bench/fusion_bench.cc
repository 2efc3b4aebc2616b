// Elementwise fusion: chains of 8 elementwise ops on a 64 MiB f32 array, jitted (one fused
// loop; compiled to native code by default, or the tile interpreter) vs eager (one pass and
// one temporary per op), against memcpy of the same bytes into a warmed-up buffer and into a
// freshly allocated one (first-touch page faults). Also each chain's compute alone (run on a
// 4 MiB array that stays in cache, scaled to 64 MiB) and the cost of the first call of a new
// jitted chain (trace, passes, LLVM compile), and the cheap chain on a bf16 array (32 MiB). Both
// fused paths run in this process, alternately.
//
//   bazel run -c opt //bench:fusion_bench
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "bench/timing.h"
#include "core/backend/cpu/fusion_codegen.h"
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

using Codegen = graft::cpu::fusion::Codegen;

// ms per 64 MiB of f32 for a jitted fn run on a 4 MiB array (input and output stay in the
// L3 cache): its compute, without DRAM traffic.
template <typename J>
double in_cache_ms(J& j, int64_t n, g::DType dtype) {
  constexpr int64_t m = (4 << 20) / 4;
  std::vector<float> host(m);
  for (int64_t i = 0; i < m; ++i) host[i] = static_cast<float>((i % 2001) - 1000) * 1e-3f;
  g::Array x = g::astype(g::array<float>(host, g::Shape{m}), dtype);
  g::eval(x);
  constexpr int kCalls = 16;
  return median_ms(5,
                   [&] {
                     for (int c = 0; c < kCalls; ++c) j(x);
                   }) /
         kCalls * static_cast<double>(n) / m;
}

struct Times {
  double fused[2] = {0, 0};    // compiled loop, interpreter
  double compute[2] = {0, 0};  // the same, in cache
  double eager = 0;
};

template <typename F>
Times measure(F fn, const g::Array& x, int64_t n) {
  Times t;
  auto j = g::jit(fn);
  const Codegen modes[2] = {Codegen::kAuto, Codegen::kOff};
  for (int round = 0; round < 2; ++round) {  // alternate: the machine's load drifts
    for (int m = 0; m < 2; ++m) {
      g::cpu::fusion::set_codegen(modes[m]);
      double f = median_ms(5, [&] { j(x); });
      double c = in_cache_ms(j, n, x.dtype());
      t.fused[m] = round ? std::min(t.fused[m], f) : f;
      t.compute[m] = round ? std::min(t.compute[m], c) : c;
    }
  }
  g::cpu::fusion::set_codegen(Codegen::kAuto);
  t.eager = median_ms(5, [&] { g::eval(fn(x)); });
  return t;
}

void report(const char* title, const Times& t, double copy) {
  std::printf("%s\n", title);
  std::printf("  jit, compiled loop     %8.2f ms   %.2fx memcpy\n", t.fused[0], t.fused[0] / copy);
  std::printf("  jit, tile interpreter  %8.2f ms   %.2fx memcpy\n", t.fused[1], t.fused[1] / copy);
  std::printf("  eager (unfused)        %8.2f ms   %.2fx memcpy, %.2fx the compiled loop\n",
              t.eager, t.eager / copy, t.eager / t.fused[0]);
  std::printf(
      "  compute alone (in cache, scaled): compiled %.2f ms (%.2fx memcpy), "
      "interpreter %.2f ms\n",
      t.compute[0], t.compute[0] / copy, t.compute[1]);
}

int main() {
  constexpr int64_t n = (64 << 20) / 4;
  std::vector<float> host(n);
  for (int64_t i = 0; i < n; ++i) host[i] = static_cast<float>((i % 2001) - 1000) * 1e-3f;
  g::Array x = g::array<float>(host, g::Shape{n});
  g::eval(x);
  size_t bytes = n * sizeof(float);

  // First calls of chains not seen before in this process, minus a later call: tracing,
  // passes, LLVM compile of the fused group (the process's first compile also sets up the JIT).
  auto first_call_ms = [&](auto fn) {
    auto j = g::jit(fn);
    auto t0 = std::chrono::steady_clock::now();
    j(x);
    double first =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    return first - median_ms(5, [&] { j(x); });
  };
  double setup_ms = first_call_ms(
      [](const g::Array& v) { return g::maximum(g::abs(v * 0.25f) - v, v + 2.0f) * v - 1.0f; });
  double compile_ms = first_call_ms(
      [](const g::Array& v) { return g::minimum(g::abs(v * 0.5f) + v, v - 3.0f) / v + 1.0f; });
  // A chain with tanh and exp gets the software-pipelined loop (its steps emitted twice).
  double compile_pipelined_ms = first_call_ms(
      [](const g::Array& v) { return g::exp(-g::tanh(v * 0.75f) * v) * v + g::tanh(v); });

  Times arith = measure(arithmetic_chain, x, n);
  Times trans = measure(chain, x, n);
  g::Array xb = g::astype(x, g::DType::kBF16);  // 32 MiB
  g::eval(xb);
  Times arith_bf16 = measure(arithmetic_chain, xb, n);

  // memcpy split over the same thread pool, as the kernels are.
  const char* src = static_cast<const char*>(x.raw_data());
  auto pcopy = [&](char* dst, size_t len = 0) {
    g::cpu::parallel_for(static_cast<int64_t>(len ? len : bytes), 1 << 20,
                         [&](int64_t b, int64_t e) { std::memcpy(dst + b, src + b, e - b); });
  };
  char* warm = static_cast<char*>(std::aligned_alloc(64, bytes));
  std::memset(warm, 0, bytes);
  double copy_warm = median_ms(9, [&] { pcopy(warm); });
  double copy_half = median_ms(9, [&] { pcopy(warm, bytes / 2); });
  double copy_fresh = median_ms(9, [&] {
    char* fresh = static_cast<char*>(std::aligned_alloc(64, bytes));
    pcopy(fresh);
    std::free(fresh);
  });
  std::free(warm);

  std::printf("8-op elementwise chains on %lld f32 (64 MiB), %d threads\n",
              static_cast<long long>(n), g::cpu::num_threads());
  std::printf("memcpy of the same bytes: %.2f ms (warm dst), %.2f ms (fresh allocation)\n",
              copy_warm, copy_fresh);
  report("8 cheap ops (mul add mul neg sub max mul add):", arith, copy_warm);
  report("8 ops with tanh and exp (mul tanh mul neg exp sub max mul):", trans, copy_warm);
  std::printf("memcpy of 32 MiB (the bf16 array's bytes): %.2f ms\n", copy_half);
  report("8 cheap ops on bf16 (carried in f32 inside the group, rounded on store):", arith_bf16,
         copy_half);
  std::printf(
      "first call of a new 7-op chain minus a later call (trace, passes, LLVM "
      "compile): %.1f ms (a new tanh / exp chain, pipelined: %.1f ms); the process's first such "
      "call (also sets up the JIT): %.1f ms\n",
      compile_ms, compile_pipelined_ms, setup_ms);
  std::printf(
      "target, fused within 2x of memcpy: cheap chain %.2fx (%s), tanh/exp chain %.2fx "
      "(its compute alone is %.2fx)\n",
      arith.fused[0] / copy_warm, arith.fused[0] <= 2 * copy_warm ? "met" : "NOT met",
      trans.fused[0] / copy_warm, trans.compute[0] / copy_warm);
  return 0;
}
