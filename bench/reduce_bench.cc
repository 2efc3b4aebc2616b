// Reduction throughput against memory bandwidth measured in the same run (the machine is
// shared and noisy, so the ratios matter more than absolute figures).
//
//   bazel run -c opt //bench:reduce_bench
//
// For each case: median ms over several runs and GB/s of input read. Baselines: memcpy of
// the same bytes (reads and writes them) and a plain single-threaded read loop.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <vector>

#include "bench/timing.h"
#include "core/backend/cpu/parallel.h"
#include "core/ops.h"
#include "transforms/jit.h"

namespace g = graft;

using graft::bench::median_ms;

void report(const char* name, double bytes, double ms) {
  std::printf("%-44s %8.2f ms  %6.2f GB/s\n", name, ms, bytes / ms / 1e6);
}

int main() {
  const int64_t n = 16 << 20;  // 16M f32 = 64 MiB
  const double bytes = static_cast<double>(n) * 4;
  std::printf("threads: %d\n", g::cpu::num_threads());

  std::vector<float> host(n);
  for (int64_t i = 0; i < n; ++i) host[i] = static_cast<float>(i % 1000) * 1e-3f;
  std::vector<float> dst(n);
  report("memcpy 64 MiB (read + write)", bytes,
         median_ms(9, [&] { std::memcpy(dst.data(), host.data(), bytes); }));
  volatile float sink = 0;
  // What every op producing a fresh 64 MiB output also pays: page faults on a new buffer.
  report("memcpy 64 MiB into a fresh allocation", bytes, median_ms(9, [&] {
           float* p = static_cast<float*>(std::aligned_alloc(64, bytes));
           std::memcpy(p, host.data(), bytes);
           sink = p[n / 2];
           std::free(p);
         }));
  report("plain loop sum, 1 thread", bytes, median_ms(9, [&] {
           float acc = 0;
           for (int64_t i = 0; i < n; ++i) acc += host[i];
           sink = acc;
         }));

  g::Array x = g::array<float>(host);
  g::eval(x);
  auto run = [&](const char* name, double in_bytes, const std::function<g::Array()>& op) {
    report(name, in_bytes, median_ms(9, [&] { g::eval(op()); }));
  };
  run("sum f32[16M]", bytes, [&] { return g::sum(x); });
  run("max f32[16M]", bytes, [&] { return g::max(x); });
  run("argmax f32[16M]", bytes, [&] { return g::argmax(x); });
  run("cumsum f32[16M] (reads + writes)", 2 * bytes, [&] { return g::cumsum(x); });

  g::Array m = g::reshape(x, {4096, 4096});
  g::Array c = g::reshape(x, {64, 256, 1024});
  g::eval(m, c);
  run("sum f32[4096,4096] axis 1 (rows)", bytes, [&] { return g::sum(m, {1}); });
  run("sum f32[4096,4096] axis 0 (columns)", bytes, [&] { return g::sum(m, {0}); });
  run("sum f32[64,256,1024] axes (0, 2)", bytes, [&] { return g::sum(c, {0, 2}); });
  run("max f32[4096,4096] axis 0", bytes, [&] { return g::max(m, {0}); });
  run("cumsum f32[4096,4096] axis 1 (reads + writes)", 2 * bytes, [&] { return g::cumsum(m, 1); });
  run("cumsum f32[4096,4096] axis 0 (reads + writes)", 2 * bytes, [&] { return g::cumsum(m, 0); });
  run("x + 1 f32[16M] (reads + writes)", 2 * bytes, [&] { return x + 1.0f; });

  g::Array h = g::astype(m, g::DType::kBF16);
  g::eval(h);
  run("sum bf16[4096,4096] axis 1 (f32 accumulate)", bytes / 2, [&] { return g::sum(h, {1}); });
  run("softmax f32[4096,4096] axis 1 (in bytes)", bytes, [&] { return g::softmax(m, 1); });

  // Reduction fusion (fused_reduce): a product and its sum in one pass under jit, against
  // eager's two kernels (the product written out whole, then read by the sum).
  auto sum_sq = [](const g::Array& a) { return g::sum(a * a); };
  auto jit_sum_sq = g::jit(sum_sq);
  run("sum(x * x) f32[16M], eager (mul, then sum)", bytes, [&] { return sum_sq(x); });
  run("sum(x * x) f32[16M], jit (fused_reduce)", bytes, [&] { return jit_sum_sq(x); });
  auto rms = [](const g::Array& a) { return g::rsqrt(g::mean(a * a, {1}) + 1e-5f); };
  auto jit_rms = g::jit(rms);
  run("rsqrt(mean(x * x, 1)) f32[4096,4096], eager", bytes, [&] { return rms(m); });
  run("rsqrt(mean(x * x, 1)) f32[4096,4096], jit", bytes, [&] { return jit_rms(m); });
  // Columns (a norm weight's gradient sums over the batch and sequence) and a middle axis.
  auto col_sq = [](const g::Array& a) { return g::sum(a * a, {0}); };
  auto jit_col_sq = g::jit(col_sq);
  run("sum(x * x, 0) f32[4096,4096], eager", bytes, [&] { return col_sq(m); });
  run("sum(x * x, 0) f32[4096,4096], jit", bytes, [&] { return jit_col_sq(m); });
  auto mid_sq = [](const g::Array& a) { return g::sum(a * a, {1}); };
  auto jit_mid_sq = g::jit(mid_sq);
  run("sum(x * x, 1) f32[64,256,1024], eager", bytes, [&] { return mid_sq(c); });
  run("sum(x * x, 1) f32[64,256,1024], jit", bytes, [&] { return jit_mid_sq(c); });
  (void)sink;
  return 0;
}
