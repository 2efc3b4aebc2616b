// A Llama of about 1B parameters in bf16 mixed precision on one GPU:
// tokens/s of the jitted train step and MFU against the GPU's bf16 dense peak (H200 / H100
// SXM: 989.4 TFLOP/s; `--peak-tflops` for another GPU). Params are initialized on the host
// and device_put on cuda:0, so the step (the same make_train_step as the CPU's) runs there.
//
//   bazel build --config=cuda -c opt //bench:cuda_llama_bench
//   bazel-bin/bench/cuda_llama_bench [timed_steps] [batch] [seq] [--peak-tflops=989.4]
//
// dim 2048, 16 layers, 16 heads (8 kv heads), SwiGLU 5632, vocab 32000: 1.07B parameters.
// AdamW as train_bench; 3 warm-up steps, then the median of the timed steps. Prints
// "no GPU: ..." and exits 0 without one.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "bench/timed_train_step.h"
#include "core/backend/cuda/device.h"
#include "core/device/device.h"
#include "core/ops.h"
#include "core/random/random.h"
#include "core/sharding/device_put.h"
#include "core/tree/tree.h"
#include "examples/llama/model.h"
#include "examples/llama/train_step.h"
#include "examples/train/progress.h"
#include "optim/optim.h"

int main(int argc, char** argv) {
  using namespace graft;
  double peak_tflops = 989.4;
  std::vector<const char*> pos;
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--peak-tflops=", 14) == 0) {
      peak_tflops = std::atof(argv[i] + 14);
    } else {
      pos.push_back(argv[i]);
    }
  }
  const int timed = pos.size() > 0 ? std::atoi(pos[0]) : 10;
  const int64_t batch = pos.size() > 1 ? std::atoll(pos[1]) : 8;
  const int64_t seq = pos.size() > 2 ? std::atoll(pos[2]) : 2048;
  if (cuda::device_count() == 0) {  // a failure only where a GPU is expected (probe.h)
    std::printf("no GPU: %s\n", cuda::status().c_str());
    return cuda::gpu_expected() ? 1 : 0;
  }
  const Device gpu = devices("cuda")[0];
  std::printf("device: %s (%s)\n", gpu.str().c_str(), cuda::status().c_str());

  nn::LlamaConfig c;
  c.vocab_size = 32000;
  c.dim = 2048;
  c.n_layers = 16;
  c.n_heads = 16;
  c.n_kv_heads = 8;
  c.ffn_dim = 5632;
  c.compute_dtype = DType::kBF16;
  llama_train::DenseLlama model{c};
  auto opt = optim::chain(
      optim::clip_by_global_norm(1.0),
      optim::adamw(
          {.learning_rate = 3e-4, .b1 = 0.9, .b2 = 0.95, .eps = 1e-8, .weight_decay = 0.1}));
  auto put = [&](const Array& a) { return device_put(a, gpu); };
  auto params = tree_map(put, model.init(random::key(0)));
  optim::State state = tree_map(put, opt.init(params));
  int64_t n_params = 0;
  for (const Array& leaf : tree_leaves(params)) n_params += leaf.size();
  std::printf("parameters: %.3fB, batch %lld x %lld tokens\n", n_params / 1e9,
              static_cast<long long>(batch), static_cast<long long>(seq));
  auto step = llama_train::make_train_step(model, opt);
  Array key = random::key(1234);
  std::vector<double> times;
  for (int i = 0; i < 3 + timed; ++i) {
    Array tokens = put(random::randint(random::fold_in(key, i), {1, batch, seq + 1}, 0,
                                       c.vocab_size));
    Array x = slice_axis(tokens, 2, 0, seq), y = slice_axis(tokens, 2, 1, seq + 1);
    auto [loss, dt] = bench::timed_train_step(step, params, state, x, y);
    std::printf("  step %2d: %.3f s, loss %.4f%s\n", i, dt, loss, i < 3 ? " (warm-up)" : "");
    std::fflush(stdout);
    if (i >= 3) times.push_back(dt);
  }
  std::sort(times.begin(), times.end());
  const double median = times[times.size() / 2];
  const double tps = batch * seq / median;
  std::printf("\nstep %.3f s, %.0f tokens/s, MFU %.1f%% of %.1f TFLOP/s (bf16 dense)\n", median,
              tps, train::mfu(model.flops_per_token(seq), tps, peak_tflops * 1e12), peak_tflops);
  return 0;
}
