// Times the shape kernels on large f32 arrays and prints GB/s (bytes read + written).
// Usage: bazel run -c opt //bench/shape:shape_bench [-- n]   (n x n, default 2048)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <vector>

#include "core/backend/cpu/parallel.h"
#include "core/ops.h"

namespace {

double seconds_of(const std::function<void()>& fn) {
  auto t0 = std::chrono::steady_clock::now();
  fn();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Best and median of `reps` runs, as GB/s for `bytes` moved per run.
void report(const char* name, double bytes, int reps, const std::function<void()>& fn) {
  fn();  // warm up (page faults, thread pool)
  std::vector<double> t;
  for (int i = 0; i < reps; ++i) t.push_back(seconds_of(fn));
  std::sort(t.begin(), t.end());
  std::printf("%-34s best %7.3f ms  %6.1f GB/s   median %7.3f ms  %6.1f GB/s\n", name, t[0] * 1e3,
              bytes / t[0] / 1e9, t[reps / 2] * 1e3, bytes / t[reps / 2] / 1e9);
}

}  // namespace

int main(int argc, char** argv) {
  using namespace graft;
  int64_t n = argc > 1 ? std::atoll(argv[1]) : 2048;
  const int reps = 20;
  std::printf("threads: %d, n = %lld\n", cpu::num_threads(), static_cast<long long>(n));
  std::vector<float> host(n * n);
  for (int64_t i = 0; i < n * n; ++i) host[i] = static_cast<float>(i % 1000);
  Array x = array<float>(host, Shape{n, n});
  eval(x);
  double bytes = 2.0 * n * n * 4;

  std::vector<float> dst(n * n);
  report("memcpy (baseline)", bytes, reps,
         [&] { std::memcpy(dst.data(), host.data(), n * n * 4); });
  report("transpose f32 (n, n)", bytes, reps, [&] { eval(transpose(x)); });
  Array x3 = reshape(slice(x, {0, 0}, {n / 64 * 64, n}), {n / 64, 64, n});
  eval(x3);
  report("transpose f32 (n/64, 64, n) 2,1,0", x3.size() * 8.0, reps, [&] {
    eval(transpose(x3, std::vector<int>{2, 1, 0}));
  });
  report("transpose f32 (n/64, 64, n) 0,2,1", x3.size() * 8.0, reps, [&] {
    eval(transpose(x3, std::vector<int>{0, 2, 1}));
  });
  Array row = slice(x, {0, 0}, {1, n});
  eval(row);
  report("broadcast row -> (n, n)", n * n * 4.0, reps, [&] {
    eval(broadcast_in_dim(reshape(row, {n}), {n, n}, {1}));
  });
  report("broadcast scalar -> (n, n)", n * n * 4.0, reps, [&] {
    eval(broadcast_to(scalar(1.0, DType::kF32), {n, n}));
  });
  report("concatenate 2 x (n, n/2) axis 1", bytes, reps, [&] {
    static Array a = slice(x, {0, 0}, {n, n / 2}), b = slice(x, {0, n / 2}, {n, n});
    eval(concatenate({a, b}, 1));
  });
  return 0;
}
