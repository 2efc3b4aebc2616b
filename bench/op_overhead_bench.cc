// Op overhead: what graft's lazy graph costs per op, against baselines measured in the same
// run (the machine is shared and noisy, so ratios matter more than absolute figures).
//
//   bazel run -c opt //bench:op_overhead_bench
//
// - build: ns to create one node (a + b on tiny arrays), vs. one heap allocation of a node-
//   sized object (the unavoidable part).
// - eval: us to evaluate one tiny op (4 floats), vs. allocating a buffer and adding 4 floats
//   by hand.
// - chain: per-op cost inside one eval of a 1000-op chain.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <vector>

#include "bench/timing.h"
#include "core/ops.h"

namespace g = graft;

struct alignas(64) NodeSized {
  char bytes[192];
};

int main() {
  g::Array a = g::array<float>({1, 2, 3, 4});
  g::Array b = g::array<float>({5, 6, 7, 8});
  g::eval(a, b);
  volatile float sink = 0;

  std::vector<g::Array> keep(1000);
  double build =
      graft::bench::median_ns_per_call(100000, 7, [&](int i) { keep[i % 1000] = a + b; });
  std::vector<std::shared_ptr<NodeSized>> keep_alloc(1000);
  double alloc = graft::bench::median_ns_per_call(
      100000, 7, [&](int i) { keep_alloc[i % 1000] = std::make_shared<NodeSized>(); });

  double eval_one = graft::bench::median_ns_per_call(20000, 7, [&](int) {
    g::Array c = a + b;
    g::eval(c);
    sink = sink + static_cast<const float*>(c.raw_data())[0];
  });
  double by_hand = graft::bench::median_ns_per_call(20000, 7, [&](int) {
    float* out = static_cast<float*>(std::aligned_alloc(64, 64));
    const float* x = static_cast<const float*>(a.raw_data());
    const float* y = static_cast<const float*>(b.raw_data());
    for (int k = 0; k < 4; ++k) out[k] = x[k] + y[k];
    sink = sink + out[0];
    std::free(out);
  });

  double chain = graft::bench::median_ns_per_call(50, 5,
                                                  [&](int) {
                                                    g::Array c = a;
                                                    for (int k = 0; k < 1000; ++k) c = c + b;
                                                    g::eval(c);
                                                  }) /
                 1000;

  std::printf("%-34s %12s %12s %8s\n", "measure", "graft", "baseline", "ratio");
  std::printf("%-34s %10.0fns %10.0fns %8.1f  (baseline: one make_shared)\n",
              "build one node (a + b)", build, alloc, build / alloc);
  std::printf("%-34s %10.2fus %10.2fus %8.1f  (baseline: malloc + 4 adds)\n",
              "build + eval one tiny op", eval_one / 1000, by_hand / 1000, eval_one / by_hand);
  std::printf("%-34s %10.2fus %12s\n", "per op in a 1000-op chain eval", chain / 1000, "");
  return 0;
}
