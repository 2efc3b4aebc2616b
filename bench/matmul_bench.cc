// Square matmul throughput: graft's matmul (pre-evaluated inputs, one eval per iteration,
// output allocated by graft each time) against a direct oneDNN matmul call on preallocated
// buffers, measured interleaved in the same run so machine noise hits both alike.
//
//   bazel run -c opt //bench:matmul_bench -- [max_n] [seconds_per_point]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "core/backend/cpu/onednn_matmul.h"
#include "core/backend/cpu/parallel.h"
#include "core/ops.h"
#include "oneapi/dnnl/dnnl.hpp"

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// A plain oneDNN matmul on dense row-major n x n operands, created once.
struct Direct {
  dnnl::engine eng{dnnl::engine::kind::cpu, 0};
  dnnl::stream stream{eng};
  dnnl::matmul prim;
  dnnl::memory a, b, c;
  Direct(int64_t n, graft::DType dt, void* pa, void* pb, void* pc) {
    auto t =
        dt == graft::DType::kBF16 ? dnnl::memory::data_type::bf16 : dnnl::memory::data_type::f32;
    dnnl::memory::desc md({n, n}, t, dnnl::memory::format_tag::ab);
    prim = dnnl::matmul(dnnl::matmul::primitive_desc(dnnl::matmul::desc(md, md, md), eng));
    a = dnnl::memory(md, eng, pa);
    b = dnnl::memory(md, eng, pb);
    c = dnnl::memory(md, eng, pc);
  }
  void run() {
    prim.execute(stream, {{DNNL_ARG_SRC, a}, {DNNL_ARG_WEIGHTS, b}, {DNNL_ARG_DST, c}});
    stream.wait();
  }
};

}  // namespace

int main(int argc, char** argv) {
  using namespace graft;
  const int64_t max_n = argc > 1 ? std::atoll(argv[1]) : 2048;
  const double budget = argc > 2 ? std::atof(argv[2]) : 2.0;  // seconds per (n, dtype)
  std::printf("graft pool threads: %d, OMP_NUM_THREADS=%s\n", cpu::num_threads(),
              std::getenv("OMP_NUM_THREADS") ? std::getenv("OMP_NUM_THREADS") : "(unset)");
  std::printf("%-5s %6s %6s %12s %12s %7s\n", "dtype", "n", "runs", "graft GF/s", "oneDNN GF/s",
              "ratio");
  for (DType dt : {DType::kF32, DType::kBF16}) {
    for (int64_t n = 256; n <= max_n; n *= 2) {
      std::mt19937 gen(42);
      std::uniform_real_distribution<float> dist(-1, 1);
      std::vector<float> av(n * n), bv(n * n);
      for (auto& x : av) x = dist(gen);
      for (auto& x : bv) x = dist(gen);
      Array a = astype(array<float>(av, Shape{n, n}), dt);
      Array b = astype(array<float>(bv, Shape{n, n}), dt);
      eval(a, b);
      auto out = Buffer::make(n * n * dtype_size(dt));
      Direct direct(n, dt, const_cast<void*>(a.raw_data()), const_cast<void*>(b.raw_data()),
                    out->data());
      // Warm up both (primitive creation, page faults, thread start).
      for (int i = 0; i < 2; ++i) {
        eval(matmul(a, b));
        direct.run();
      }
      std::vector<double> tg, td;
      auto start = Clock::now();
      while (tg.size() < 5 || (seconds_since(start) < budget && tg.size() < 200)) {
        auto t0 = Clock::now();
        Array c = matmul(a, b);
        eval(c);
        tg.push_back(seconds_since(t0));
        t0 = Clock::now();
        direct.run();
        td.push_back(seconds_since(t0));
      }
      const double flops = 2.0 * n * n * n;
      const double g = flops / median(tg) / 1e9, d = flops / median(td) / 1e9;
      std::printf("%-5s %6lld %6zu %12.1f %12.1f %7.3f\n", dtype_name(dt),
                  static_cast<long long>(n), tg.size(), g, d, g / d);
      std::fflush(stdout);
    }
  }
  // Per-call overhead on a tiny matmul (the primitive comes from graft's cache).
  {
    Array a = ones({8, 8}), b = ones({8, 8});
    eval(a, b);
    auto out = Buffer::make(8 * 8 * 4);
    Direct direct(8, DType::kF32, const_cast<void*>(a.raw_data()), const_cast<void*>(b.raw_data()),
                  out->data());
    std::vector<double> tg, td;
    for (int i = 0; i < 2000; ++i) {
      auto t0 = Clock::now();
      eval(matmul(a, b));
      tg.push_back(seconds_since(t0));
      t0 = Clock::now();
      direct.run();
      td.push_back(seconds_since(t0));
    }
    std::printf("8x8 f32 latency: graft %.1f us (build + eval), direct oneDNN %.1f us\n",
                median(tg) * 1e6, median(td) * 1e6);
  }
  // An elementwise op (graft's own thread pool) right after a matmul (oneDNN's OpenMP
  // threads) against the same op alone: shows whether OpenMP's spinning workers get in
  // the way of graft's pool.
  {
    const int64_t n = 512, m = 1 << 22;
    Array a = ones({n, n}), b = ones({n, n}), x = ones({m}), y = ones({m});
    eval(a, b, x, y);
    std::vector<double> alone, after;
    for (int i = 0; i < 30; ++i) {
      auto t0 = Clock::now();
      eval(x + y);
      alone.push_back(seconds_since(t0));
      eval(matmul(a, b));
      t0 = Clock::now();
      eval(x + y);
      after.push_back(seconds_since(t0));
    }
    std::printf("add of 4M f32: alone %.2f ms, right after a matmul %.2f ms\n", median(alone) * 1e3,
                median(after) * 1e3);
  }
  auto s = cpu::onednn_cache_stats();
  std::printf("graft oneDNN primitive cache: %lld hits, %lld misses, %lld entries\n",
              static_cast<long long>(s.hits), static_cast<long long>(s.misses),
              static_cast<long long>(s.size));
  return 0;
}
