// Train-step time of llama-small (bench/configs.md: batch 8, seq 256) on 1, 2,
// 4 and 8 virtual devices with the same global batch: data parallel (the loss under
// shard_map, parameters replicated: examples/llama/train_step.h) and FSDP by jit shardings
// (parameters and AdamW state split over the devices, place_fsdp) and, on 2 and 4 devices,
// Megatron tensor parallelism by jit shardings (examples/llama/placement.h), each against
// the one-device step measured in the same run (before and after the others: the machine is
// shared). Also the per-device peak bytes the partitioned steps plan against the one-device
// step's (arguments plus its planned peak). 2 warm-up steps (compiling), then the median of
// `timed` steps; timed_steps = 0 compiles and reports the bytes only (no step runs).
//
//   GRAFT_CPU_DEVICES=8 bazel run -c opt //bench:parallel_train_bench -- [timed_steps]
//
// On the CPU the virtual devices share the host's cores: a step over n devices does the same
// work in n concurrent pieces (plus the collectives), so these ratios measure the overhead of
// partitioning, not a speed-up.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "core/backend/cpu/openmp_policy.h"
#include "core/device/device.h"
#include "core/ops.h"
#include "core/random/random.h"
#include "core/sharding/device_put.h"
#include "examples/llama/model.h"
#include "examples/llama/train_step.h"
#include "optim/optim.h"

namespace {

using namespace graft;
using Clock = std::chrono::steady_clock;
constexpr int64_t kBatch = 8, kSeq = 256;

struct Result {
  double seconds;
  int64_t per_device_bytes;
};

int64_t bytes_of(const std::vector<Array>& leaves) {
  int64_t n = 0;
  for (const Array& a : leaves) n += a.nbytes();
  return n;
}

// mode: "one", "dp", "fsdp" or "tp"; n devices.
Result run(const std::string& mode, int64_t n, int timed) {
  llama_train::DenseLlama model{nn::LlamaConfig::small()};
  auto opt = optim::chain(
      optim::clip_by_global_norm(1.0),
      optim::adamw(
          {.learning_rate = 3e-4, .b1 = 0.9, .b2 = 0.95, .eps = 1e-8, .weight_decay = 0.1}));
  auto params = model.init(random::key(0));
  optim::State state = opt.init(params);
  const bool fsdp = mode == "fsdp" || mode == "tp";
  std::optional<Mesh> mesh;
  if (mode == "fsdp") {
    mesh = llama_train::fsdp_mesh(1, n);
    params = llama_train::place_fsdp(params, *mesh);
    state = llama_train::place_fsdp(state, *mesh);
  } else if (mode == "tp") {
    mesh = llama_train::parallel_mesh(1, 1, n);
    state = llama_train::place_state(state, params, *mesh);
    params = llama_train::place_params(params, *mesh);
  }
  auto step = llama_train::make_train_step(model, opt, mode == "dp" ? n : 1, mesh);
  Array key = random::key(1234);
  std::vector<double> times;
  int64_t per_device = 0;
  for (int i = 0; i < 2 + timed; ++i) {
    Array tokens = random::randint(random::fold_in(key, i), {1, kBatch, kSeq + 1}, 0,
                                   model.config.vocab_size);
    Array x = slice_axis(tokens, 2, 0, kSeq), y = slice_axis(tokens, 2, 1, kSeq + 1);
    eval({x, y});
    if (fsdp) x = llama_train::place_batch(x, *mesh), y = llama_train::place_batch(y, *mesh);
    if (i == 0) {
      MemoryAnalysis m = step.memory_analysis(params, state, x, y);
      // Not measured for data parallel (its shard_map sits inside an unpartitioned program).
      per_device = fsdp            ? m.per_device_peak_bytes
                   : mode == "dp" ? -1
                                  : m.peak_bytes + bytes_of(tree_leaves(params)) +
                                        bytes_of(tree_leaves(state)) + x.nbytes() + y.nbytes();
      if (timed == 0) return {0, per_device};
    }
    auto t0 = Clock::now();
    auto [p2, s2, metrics] = step(params, state, x, y);
    const float loss = metrics.at("loss").template item<float>();
    const double dt = std::chrono::duration<double>(Clock::now() - t0).count();
    params = std::move(p2);
    state = std::move(s2);
    std::printf("  %s x%lld step %d: %.3f s, loss %.4f%s\n", mode.c_str(),
                static_cast<long long>(n), i, dt, loss, i < 2 ? " (warm-up)" : "");
    std::fflush(stdout);
    if (i >= 2) times.push_back(dt);
  }
  std::sort(times.begin(), times.end());
  return {times[times.size() / 2], per_device};
}

}  // namespace

int main(int argc, char** argv) {
  cpu::reexec_with_passive_openmp(argv);
  const int timed = argc > 1 ? std::atoi(argv[1]) : 3;
  std::printf("llama-small, batch %lld x seq %lld, %d virtual devices\n",
              static_cast<long long>(kBatch), static_cast<long long>(kSeq), device_count());
  const Result base = run("one", 1, timed);
  std::vector<std::pair<std::string, Result>> rows;
  for (int64_t n : {2, 4, 8}) {
    if (n > device_count()) break;
    rows.push_back({"dp x" + std::to_string(n), run("dp", n, timed)});
    rows.push_back({"fsdp x" + std::to_string(n), run("fsdp", n, timed)});
    // llama-small's 4 kv heads split over at most 4 devices.
    if (n <= 4) rows.push_back({"tp x" + std::to_string(n), run("tp", n, timed)});
  }
  const Result again = run("one", 1, timed);
  const double one = std::max(1e-9, std::min(base.seconds, again.seconds));
  std::printf("\n%-10s %10s %14s %22s\n", "config", "step (s)", "time / 1 dev",
              "per-device MiB (/ 1 dev)");
  std::printf("%-10s %10.3f %14s %14.1f\n", "1 device", one,
              (std::to_string(base.seconds).substr(0, 5) + "|" +
               std::to_string(again.seconds).substr(0, 5))
                  .c_str(),
              base.per_device_bytes / 1048576.0);
  for (const auto& [name, r] : rows) {
    if (r.per_device_bytes < 0) {
      std::printf("%-10s %10.3f %14.2f %14s\n", name.c_str(), r.seconds, r.seconds / one, "-");
      continue;
    }
    std::printf("%-10s %10.3f %14.2f %14.1f (%.2f)\n", name.c_str(), r.seconds, r.seconds / one,
                r.per_device_bytes / 1048576.0,
                static_cast<double>(r.per_device_bytes) / base.per_device_bytes);
  }
  return 0;
}
