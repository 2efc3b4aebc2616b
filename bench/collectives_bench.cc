// Collective throughput. In one process (`bazel run -c opt //bench:collectives_bench`): for 2,
// 4 and 8 virtual devices, each holding 4 MiB of f32, a jitted pmap of the identity (the cost
// of splitting the input over the devices and stacking the outputs), then of psum, all_gather
// (of a 1/n slice, so each device again ends with 4 MiB) and all_to_all. "GB/s" is the bytes
// the devices hold together (n x 4 MiB) per second; "x memcpy" compares the collective's time
// beyond the identity pmap with one memcpy of those bytes (what moving them once costs).
//
// Across processes, under mpirun (core/distributed/mpi.h), over the devices of all processes:
//
//   bazel build -c opt //bench:collectives_bench
//   mpirun -np 2 -x GRAFT_CPU_DEVICES=1 bazel-bin/bench/collectives_bench   (as root:
//     --allow-run-as-root; -np 4, or GRAFT_CPU_DEVICES=2, likewise)
//
// For 1 KiB to 64 MiB of f32 per device: psum, all_gather, all_to_all and psum_scatter over
// every device, each against the raw MPI collective that moves the same bytes between the
// processes in the same run (MPI_Allreduce of one device's bytes: graft reduces a process's
// devices in memory first; MPI_Allgather of the process's slices; MPI_Alltoall of the blocks
// between processes; MPI_Reduce_scatter_block of the process's share).
// Each pmap sums its output to one number per device, so that the outputs other processes
// computed are not fetched (every process ends with whole arrays); "graft ms" is its time
// beyond the same pmap of the identity; "x raw" is raw MPI's time over graft's, 1.0 when
// graft adds nothing to MPI's algorithm. Under psum, "(Iallreduce)" is raw MPI's non-blocking
// allreduce polled with MPI_Test, which is what graft calls.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include <mpi.h>

#include "bench/timing.h"
#include "core/device/device.h"
#include "core/distributed/mpi.h"
#include "core/ops.h"
#include "transforms/jit.h"
#include "transforms/pmap.h"

namespace g = graft;
using graft::Array;
using graft::bench::median_ms;

namespace {

// The pmaps timed in both modes, for devices of `per` f32 elements among n.
std::vector<std::pair<std::string, std::function<Array(const Array&)>>> ops(int64_t per, int n) {
  return {
      {"identity", [](const Array& v) { return v * 1.0f; }},
      {"psum", [](const Array& v) { return g::psum(v, {"i"}); }},
      // Each device contributes 1/n of its block and receives all n of them.
      {"all_gather",
       [per, n](const Array& v) {
         return g::all_gather(g::slice_axis(v, 0, 0, per / n), "i", 0, true);
       }},
      {"all_to_all", [](const Array& v) { return g::all_to_all(v, "i", 0, 0, true); }},
      // Each device keeps 1/n of the sum.
      {"psum_scatter", [](const Array& v) { return g::psum_scatter(v, "i", 0, true); }},
  };
}

Array input(int n, int64_t per) {
  Array x = g::reshape(g::arange(0.0, static_cast<double>(n * per), 1.0, g::DType::kF32), {n, per});
  g::eval({x});
  return x;
}

void in_process() {
  const int64_t per = 1 << 20;  // f32 elements per device: 4 MiB
  std::printf("%-12s %8s %10s %8s %10s\n", "op", "devices", "ms", "GB/s", "x memcpy");
  for (int n : {2, 4, 8}) {
    const double bytes = static_cast<double>(n * per) * 4;
    std::vector<char> src(static_cast<size_t>(bytes)), dst(static_cast<size_t>(bytes), 1);
    const double copy = median_ms(9, [&] { std::memcpy(dst.data(), src.data(), src.size()); });
    std::printf("%-12s %8d %10.3f %8.2f %10s\n", "memcpy", n, copy, bytes / copy / 1e6, "1.00");
    Array x = input(n, per);
    double base = 0;
    for (const auto& [name, op] : ops(per, n)) {
      auto f = g::jit(g::pmap(op, "i"));
      double ms = median_ms(9, [&] { g::eval({f(x)}); });
      if (name == "identity") base = ms;
      std::printf("%-12s %8d %10.3f %8.2f %10.2f\n", name.c_str(), n, ms, bytes / ms / 1e6,
                  name == "identity" ? ms / copy : (ms - base) / copy);
    }
  }
}

// Raw MPI moving what graft's collective moves between the processes (see the header).
double raw_mpi_ms(const std::string& op, int64_t per, int n) {
  const int procs = g::process_count(), local = g::local_device_count();
  std::vector<float> a(static_cast<size_t>(per * local) + 1, 1.0f), b(a.size() * procs + 1);
  MPI_Barrier(MPI_COMM_WORLD);
  if (op == "psum") {
    return median_ms(per < (1 << 18) ? 41 : 9, [&] {
      MPI_Allreduce(a.data(), b.data(), static_cast<int>(per), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    });
  }
  if (op == "psum, non-blocking") {  // what graft calls: MPI_Iallreduce, polled
    return median_ms(per < (1 << 18) ? 41 : 9, [&] {
      MPI_Request r;
      MPI_Iallreduce(a.data(), b.data(), static_cast<int>(per), MPI_FLOAT, MPI_SUM,
                     MPI_COMM_WORLD, &r);
      for (int done = 0; !done;) MPI_Test(&r, &done, MPI_STATUS_IGNORE);
    });
  }
  if (op == "all_gather") {
    const int count = static_cast<int>(per / n * local);
    return median_ms(per < (1 << 18) ? 41 : 9, [&] {
      MPI_Allgather(a.data(), count, MPI_FLOAT, b.data(), count, MPI_FLOAT, MPI_COMM_WORLD);
    });
  }
  if (op == "psum_scatter") {  // a process's devices summed in memory first
    const int count = static_cast<int>(per / n * local);
    return median_ms(per < (1 << 18) ? 41 : 9, [&] {
      MPI_Reduce_scatter_block(a.data(), b.data(), count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    });
  }
  const int count = static_cast<int>(per / n * local * local);  // all_to_all, per process pair
  return median_ms(per < (1 << 18) ? 41 : 9, [&] {
    MPI_Alltoall(a.data(), count, MPI_FLOAT, b.data(), count, MPI_FLOAT, MPI_COMM_WORLD);
  });
}

// Across processes each collective's output is summed to one number per device, and so is the
// input in the baseline pmap: the outputs other processes computed are then not fetched, and
// the difference of the two is the collective (plus one pass over its output).
void across_processes() {
  const int n = g::device_count();
  const bool print = g::process_index() == 0;
  if (print) {
    std::printf("%-12s %10s %10s %10s %8s\n", "op", "per device", "graft ms", "raw MPI ms",
                "x raw");
  }
  for (int64_t per : {int64_t{256}, int64_t{1} << 14, int64_t{1} << 18, int64_t{1} << 22,
                      int64_t{1} << 24}) {
    if (per % n != 0) continue;
    Array x = input(n, per);
    double base = 0;
    for (const auto& [name, op] : ops(per, n)) {
      auto f = g::jit(g::pmap([op = op](const Array& v) { return g::sum(op(v)); }, "i"));
      const double ms = median_ms(per < (1 << 18) ? 41 : 9, [&] { g::eval({f(x)}); });
      if (name == "identity") {
        base = ms;
        continue;
      }
      const double raw = raw_mpi_ms(name, per, n);
      const double mine = std::max(ms - base, 1e-6);
      if (print) {
        std::printf("%-12s %7.0f KiB %10.3f %10.3f %8.2f\n", name.c_str(), per * 4 / 1024.0,
                    mine, raw, raw / mine);
      }
      if (name == "psum") {  // raw MPI's non-blocking allreduce, as graft calls it
        const double nb = raw_mpi_ms("psum, non-blocking", per, n);
        if (print) {
          std::printf("%-12s %7.0f KiB %10s %10.3f\n", "(Iallreduce)", per * 4 / 1024.0, "", nb);
        }
      }
    }
  }
}

}  // namespace

int main() {
  if (std::getenv("OMPI_COMM_WORLD_SIZE") == nullptr) {
    setenv("GRAFT_CPU_DEVICES", "8", 0);  // before the device list is first read
    in_process();
    return 0;
  }
  if (absl::Status s = g::distributed::initialize(); !s.ok()) {
    std::fprintf(stderr, "%s\n", std::string(s.message()).c_str());
    return 1;
  }
  if (g::process_index() == 0) {
    std::printf("%d processes, %d device(s) each\n", g::process_count(), g::local_device_count());
  }
  across_processes();
  return 0;
}
