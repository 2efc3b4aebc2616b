// In-process collective throughput against memcpy measured in the same run (the machine is
// shared and noisy: the ratios matter more than the absolute figures).
//
//   bazel run -c opt //bench:collectives_bench
//
// For 2, 4 and 8 virtual devices, each holding 4 MiB of f32: a jitted pmap of the identity
// (the cost of splitting the input over the devices and stacking the outputs), then of psum,
// all_gather (of a 1/n slice, so each device again ends with 4 MiB) and all_to_all. "GB/s" is the
// bytes the devices hold together (n x 4 MiB) per second; "x memcpy" compares the collective's time
// beyond the identity pmap with one memcpy of those bytes (what moving them once costs).
//
// Across processes (core/distributed/mpi.h): under mpirun the same program runs over the
// devices of all processes, e.g. 2 processes of 1 device each (the collective crosses the
// process boundary for every byte) or of 2 devices each:
//
//   bazel build -c opt //bench:collectives_bench
//   mpirun -np 2 -x GRAFT_CPU_DEVICES=1 bazel-bin/bench/collectives_bench   (as root:
//     --allow-run-as-root)
//
// There the identity pmap also fetches the other process's output blocks (every process ends
// with whole arrays), so "x memcpy" beyond it is the collective's own cost.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "bench/timing.h"
#include "core/device/device.h"
#include "core/distributed/mpi.h"
#include "core/ops.h"
#include "transforms/jit.h"
#include "transforms/pmap.h"

namespace g = graft;
using graft::Array;
using graft::bench::median_ms;

int main() {
  const bool under_mpi = std::getenv("OMPI_COMM_WORLD_SIZE") != nullptr;
  std::vector<int> counts = {2, 4, 8};
  if (under_mpi) {
    if (absl::Status s = g::distributed::initialize(); !s.ok()) {
      std::fprintf(stderr, "%s\n", std::string(s.message()).c_str());
      return 1;
    }
    counts = {g::device_count()};
  } else {
    setenv("GRAFT_CPU_DEVICES", "8", 0);  // before the device list is first read
  }
  const bool print = g::process_index() == 0;
  const int64_t per = 1 << 20;  // f32 elements per device: 4 MiB
  if (print) {
    std::printf("%d process(es), %d device(s) each\n", g::process_count(),
                g::local_device_count());
    std::printf("%-12s %8s %10s %8s %10s\n", "op", "devices", "ms", "GB/s", "x memcpy");
  }
  for (int n : counts) {
    const double bytes = static_cast<double>(n * per) * 4;
    std::vector<char> src(static_cast<size_t>(bytes)), dst(static_cast<size_t>(bytes), 1);
    const double copy = median_ms(9, [&] { std::memcpy(dst.data(), src.data(), src.size()); });
    if (print) {
      std::printf("%-12s %8d %10.3f %8.2f %10s\n", "memcpy", n, copy, bytes / copy / 1e6, "1.00");
    }
    Array x =
        g::reshape(g::astype(g::arange(0.0, static_cast<double>(n * per), 1.0, g::DType::kF32),
                             g::DType::kF32),
                   {n, per});
    g::eval({x});
    const std::vector<std::pair<std::string, std::function<Array(const Array&)>>> ops = {
        {"identity", [](const Array& v) { return v * 1.0f; }},
        {"psum", [](const Array& v) { return g::psum(v, {"i"}); }},
        // Each device contributes 1/n of its block and receives all n of them: 4 MiB out.
        {"all_gather",
         [per, n](const Array& v) {
           return g::all_gather(g::slice_axis(v, 0, 0, per / n), "i", 0, true);
         }},
        {"all_to_all", [](const Array& v) { return g::all_to_all(v, "i", 0, 0, true); }},
    };
    double base = 0;
    for (const auto& [name, op] : ops) {
      auto f = g::jit(g::pmap(op, "i"));
      double ms = median_ms(9, [&] { g::eval({f(x)}); });
      if (name == "identity") base = ms;
      char ratio[32];
      std::snprintf(ratio, sizeof ratio, "%.2f",
                    name == "identity" ? ms / copy : (ms - base) / copy);
      if (print) {
        std::printf("%-12s %8d %10.3f %8.2f %10s\n", name.c_str(), n, ms, bytes / ms / 1e6, ratio);
      }
    }
  }
  return 0;
}
