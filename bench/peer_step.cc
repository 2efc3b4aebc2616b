// graft's Llama train step on the weights and tokens that tools/peers/common.py exports, so
// that its losses and tokens/s line up with the PyTorch / JAX / MLX peers in tools/peers/
// (tools/peers/compare.py runs them all alternately and prints the table).
//
// The file holds the parameters in graft's layout (embed [vocab, dim], output [dim, vocab],
// layers.* stacked [n_layers, ...]; MoE configs layers.moe.*), "tokens" [steps, batch, seq + 1]
// (i32) and the config in its metadata. The step is bench/train_bench.cc's: make_train_step
// with clip_by_global_norm(1.0) then adamw(3e-4, 0.9, 0.95, eps 1e-8, wd 0.1), params and
// state donated; step i trains on tokens[i] (inputs [:, :-1], targets [:, 1:]).
//
//   python3 tools/peers/common.py --export /tmp/w.safetensors --config llama-tiny --steps 13
//   bazel run -c opt //bench:peer_step -- /tmp/w.safetensors [--steps 10] [--warmup 3] [--bf16]
//
// Prints one line per step and
//   RESULT framework=graft config=NAME tokens_per_s=... step_s=... gflop_per_s=... loss0=...
//   loss2=...
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "bench/timed_train_step.h"
#include "checkpoint/safetensors.h"
#include "core/backend/cpu/openmp_policy.h"
#include "core/ops.h"
#include "examples/llama/model.h"
#include "examples/llama/train_step.h"
#include "optim/optim.h"

namespace {

using namespace graft;

[[noreturn]] void die(const std::string& msg) {
  std::fprintf(stderr, "peer_step: %s\n", msg.c_str());
  std::exit(1);
}

class File {
 public:
  explicit File(const std::string& path) {
    auto r = checkpoint::SafetensorsReader::open(path);
    if (!r.ok()) die(std::string(r.status().message()));
    reader_.emplace(std::move(*r));
  }
  const std::map<std::string, std::string>& meta() const { return reader_->header().metadata; }
  std::string str(const std::string& key) const {
    auto it = meta().find(key);
    if (it == meta().end()) die("metadata has no '" + key + "' (export with tools/peers/common.py)");
    return it->second;
  }
  int64_t i64(const std::string& key) const { return std::stoll(str(key)); }
  double f64(const std::string& key) const { return std::stod(str(key)); }
  bool has(const std::string& key) const { return meta().count(key) > 0; }

  template <typename T>
  Array load(const std::string& name, DType dtype) const {
    const checkpoint::TensorInfo* t = reader_->header().find(name);
    if (t == nullptr) die("no tensor '" + name + "'");
    if (t->dtype != dtype) die("tensor '" + name + "' has the wrong dtype");
    std::vector<T> data(static_cast<size_t>(numel(t->shape)));
    if (absl::Status s = reader_->read(*t, data.data()); !s.ok()) die(std::string(s.message()));
    return array(data, t->shape);
  }
  Array f32(const std::string& name) const { return load<float>(name, DType::kF32); }

 private:
  std::optional<checkpoint::SafetensorsReader> reader_;
};

nn::LlamaConfig base_config(const File& f) {
  nn::LlamaConfig c;
  c.vocab_size = f.i64("vocab");
  c.dim = f.i64("dim");
  c.n_layers = f.i64("layers");
  c.n_heads = f.i64("heads");
  c.n_kv_heads = f.i64("kv_heads");
  c.ffn_dim = f.i64("ffn");
  c.rope_theta = f.f64("theta");
  c.norm_eps = f.f64("eps");
  c.init_std = f.f64("init_std");
  if (f.str("tied") != "False") die("tied output is not supported here");
  c.validate();
  return c;
}

struct Args {
  std::string path;
  int steps = 10, warmup = 3;
  bool bf16 = false;  // compute_dtype bf16: bf16 matmuls, f32 params, norms, softmax and loss
};

template <class Model>
void run(const std::string& name, const Model& model, typename Model::Params params,
         const Array& all_tokens, double flops_per_token, const Args& a) {
  auto opt = optim::chain(
      optim::clip_by_global_norm(1.0),
      optim::adamw(
          {.learning_rate = 3e-4, .b1 = 0.9, .b2 = 0.95, .eps = 1e-8, .weight_decay = 0.1}));
  optim::State state = opt.init(params);
  auto step = llama_train::make_train_step(model, opt);
  const int64_t n = all_tokens.shape()[0], B = all_tokens.shape()[1];
  const int64_t T = all_tokens.shape()[2] - 1;
  if (n < a.warmup + a.steps) {
    die("the file holds tokens of " + std::to_string(n) + " steps, need " +
        std::to_string(a.warmup + a.steps) + " (export with --steps)");
  }
  std::vector<double> times;
  std::vector<float> losses;
  for (int i = 0; i < a.warmup + a.steps; ++i) {
    Array tokens = slice_axis(all_tokens, 0, i, i + 1);  // [1, B, T + 1]
    Array x = slice_axis(tokens, 2, 0, T), y = slice_axis(tokens, 2, 1, T + 1);
    eval({x, y});
    auto [loss, dt] = bench::timed_train_step(step, params, state, x, y);
    losses.push_back(loss);
    if (i >= a.warmup) times.push_back(dt);
    std::printf("  graft %s step %2d: %.4f s, loss %.6f%s\n", name.c_str(), i, dt, loss,
                i < a.warmup ? " (warm-up)" : "");
    std::fflush(stdout);
  }
  // The median of an even count is the upper middle one, as in train_bench (and common.py).
  std::sort(times.begin(), times.end());
  const double med = times.empty() ? 0.0 : times[times.size() / 2];
  const double tps = static_cast<double>(B * T) / med;
  std::printf(
      "RESULT framework=%s config=%s tokens_per_s=%.1f step_s=%.5f gflop_per_s=%.1f "
      "loss0=%.7g loss2=%.7g\n",
      a.bf16 ? "graft-bf16" : "graft", name.c_str(), tps, med, flops_per_token * tps / 1e9,
      losses.size() > 0 ? losses[0] : 0.0, losses.size() > 2 ? losses[2] : 0.0);
}

// What a dense and an MoE model share: embedding, output, final norm, and the stacked norm
// and attention weights of their layers.
template <class Params, class Layer>
void load_shared(const File& f, Params& p, Layer& l) {
  p.embed = f.f32("embed");
  p.output = f.f32("output");
  p.final_norm = f.f32("final_norm");
  l.attn_norm = f.f32("layers.attn_norm");
  l.wq = f.f32("layers.wq");
  l.wk = f.f32("layers.wk");
  l.wv = f.f32("layers.wv");
  l.wo = f.f32("layers.wo");
  l.ffn_norm = f.f32("layers.ffn_norm");
}

}  // namespace

int main(int argc, char** argv) {
  cpu::reexec_with_passive_openmp(argv);
  Args a;
  for (int i = 1; i < argc; ++i) {
    std::string s = argv[i];
    if ((s == "--steps" || s == "--warmup") && i + 1 < argc) {
      (s == "--steps" ? a.steps : a.warmup) = std::atoi(argv[++i]);
    } else if (s == "--bf16") {
      a.bf16 = true;
    } else if (!s.empty() && s[0] != '-' && a.path.empty()) {
      a.path = s;
    } else {
      die("usage: peer_step FILE.safetensors [--steps N] [--warmup N] [--bf16]");
    }
  }
  if (a.path.empty()) die("usage: peer_step FILE.safetensors [--steps N] [--warmup N] [--bf16]");
  File f(a.path);
  const std::string name = f.str("name");
  nn::LlamaConfig base = base_config(f);
  if (a.bf16) base.compute_dtype = DType::kBF16;
  Array tokens = f.load<int32_t>("tokens", DType::kI32);
  if (tokens.ndim() != 3 || tokens.shape()[1] != f.i64("batch") ||
      tokens.shape()[2] != f.i64("seq") + 1) {
    die("tokens must be [steps, batch, seq + 1]");
  }
  const std::string L = "layers.";
  if (f.has("experts")) {
    nn::MoELlamaConfig c;
    c.base = base;
    c.moe.dim = base.dim;
    c.moe.n_experts = f.i64("experts");
    c.moe.top_k = f.i64("top_k");
    c.moe.expert_ffn_dim = f.i64("expert_ffn");
    c.moe.n_shared_experts = f.i64("shared");
    c.moe.shared_ffn_dim = f.i64("shared_ffn");
    c.moe.router = nn::RouterScore::kSoftmax;
    c.moe.normalize_topk = true;
    c.moe.aux_loss_weight = f.f64("aux_w");
    c.moe.z_loss_weight = f.f64("z_w");
    c.validate();
    llama_train::MoELlama model{c};
    nn::MoELlamaParams p;
    nn::MoELlamaLayer& m = p.moe_layers;
    load_shared(f, p, m);
    m.moe.router = f.f32(L + "moe.router");
    m.moe.w1 = f.f32(L + "moe.w1");
    m.moe.w3 = f.f32(L + "moe.w3");
    m.moe.w2 = f.f32(L + "moe.w2");
    m.moe.shared_w1 = f.f32(L + "moe.shared_w1");
    m.moe.shared_w3 = f.f32(L + "moe.shared_w3");
    m.moe.shared_w2 = f.f32(L + "moe.shared_w2");
    run(name, model, p, tokens, model.flops_per_token(f.i64("seq")), a);
  } else {
    llama_train::DenseLlama model{base};
    nn::LlamaParams p;
    nn::LlamaLayer& l = p.layers;
    load_shared(f, p, l);
    l.ffn.w1 = f.f32(L + "ffn.w1");
    l.ffn.w2 = f.f32(L + "ffn.w2");
    l.ffn.w3 = f.f32(L + "ffn.w3");
    run(name, model, p, tokens, model.flops_per_token(f.i64("seq")), a);
  }
  return 0;
}
