// Train-step throughput of the shapes in bench/configs.md (llama-small, and
// moe-small once MoE is in): tokens/s and MFU (torchtitan's 6N + 12 L H d_head T FLOPs per
// token) against the f32 and bf16 matmul peaks measured at the start of the same run.
// AdamW (lr 3e-4, betas 0.9 / 0.95, eps 1e-8, wd 0.1), clipping at 1.0, causal LM loss on
// uniform random tokens (fixed seed); 3 warm-up steps, then the median of 10 timed steps.
//
//   bazel run -c opt //bench:train_bench -- [llama-small|llama-small-bf16|moe-small|all]
//       [timed_steps]
// GRAFT_PROFILE=1 adds the kernel profile of the timed steps (core/backend/cpu/kernel_profile.h).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "bench/timed_train_step.h"
#include "core/backend/cpu/kernel_profile.h"
#include "core/backend/cpu/openmp_policy.h"
#include "core/ops.h"
#include "core/random/random.h"
#include "examples/llama/model.h"
#include "examples/llama/train_step.h"
#include "examples/train/progress.h"
#include "optim/optim.h"

namespace {

struct Row {
  std::string name;
  double step_seconds, tokens_per_second, flops_per_token;
};

template <class Model>
Row time_model(const std::string& name, const Model& model, int64_t vocab, int64_t batch,
               int64_t seq, int timed_steps) {
  using namespace graft;
  auto opt = optim::chain(
      optim::clip_by_global_norm(1.0),
      optim::adamw(
          {.learning_rate = 3e-4, .b1 = 0.9, .b2 = 0.95, .eps = 1e-8, .weight_decay = 0.1}));
  auto params = model.init(random::key(0));
  optim::State state = opt.init(params);
  auto step = llama_train::make_train_step(model, opt);
  Array key = random::key(1234);
  std::vector<double> times;
  for (int i = 0; i < 3 + timed_steps; ++i) {
    Array tokens = random::randint(random::fold_in(key, i), {1, batch, seq + 1}, 0, vocab);
    eval({tokens});
    if (i == 3) cpu::profile_reset();  // GRAFT_PROFILE=1: the timed steps only
    Array x = slice_axis(tokens, 2, 0, seq), y = slice_axis(tokens, 2, 1, seq + 1);
    auto [loss, dt] = bench::timed_train_step(step, params, state, x, y);
    std::printf("  %s step %2d: %.3f s, loss %.4f%s\n", name.c_str(), i, dt, loss,
                i < 3 ? " (warm-up)" : "");
    std::fflush(stdout);
    if (i >= 3) times.push_back(dt);
  }
  std::sort(times.begin(), times.end());
  const double median = times[times.size() / 2];
  return {name, median, batch * seq / median, model.flops_per_token(seq)};
}

}  // namespace

int main(int argc, char** argv) {
  using namespace graft;
  cpu::reexec_with_passive_openmp(argv);
  const std::string which = argc > 1 ? argv[1] : "all";
  const int timed = argc > 2 ? std::atoi(argv[2]) : 10;
  auto f32 = train::measure_peak_flops(DType::kF32);
  auto bf16 = train::measure_peak_flops(DType::kBF16);
  std::printf("matmul peak measured now: f32 %.1f GFLOP/s (n=%lld), bf16 %.1f GFLOP/s (n=%lld)\n",
              f32.flops_per_second / 1e9, static_cast<long long>(f32.n),
              bf16.flops_per_second / 1e9, static_cast<long long>(bf16.n));
  std::vector<Row> rows;
  if (which == "all" || which == "llama-small") {
    llama_train::DenseLlama model{nn::LlamaConfig::small()};
    rows.push_back(time_model("llama-small", model, model.config.vocab_size, 8, 256, timed));
  }
  if (which == "all" || which == "llama-small-bf16") {
    // Mixed precision: f32 params and optimizer, bf16 matmuls (f32 accumulation), f32 norms,
    // softmax and loss. MFU is still against the f32 peak, as in the f32 row.
    nn::LlamaConfig c = nn::LlamaConfig::small();
    c.compute_dtype = DType::kBF16;
    llama_train::DenseLlama model{c};
    rows.push_back(time_model("llama-small-bf16", model, c.vocab_size, 8, 256, timed));
  }
  if (which == "all" || which == "moe-small") {
    llama_train::MoELlama model{nn::MoELlamaConfig::small()};
    rows.push_back(time_model("moe-small", model, model.config.base.vocab_size, 8, 256, timed));
  }
  std::printf("\n%-17s %10s %12s %14s %10s\n", "config", "step s", "tokens/s", "GFLOP/token",
              "MFU(f32)");
  for (const Row& r : rows) {
    std::printf("%-17s %10.3f %12.1f %14.3f %9.1f%%\n", r.name.c_str(), r.step_seconds,
                r.tokens_per_second, r.flops_per_token / 1e9,
                train::mfu(r.flops_per_token, r.tokens_per_second, f32.flops_per_second));
  }
  return 0;
}
