// A training program in its own Bazel workspace, using graft as a library: an MLP fitted to a
// generated regression task with a jitted value_and_grad + AdamW step, then a checkpoint of
// the params and optimizer state written, restored and compared with what was saved.
//
//   cd examples/external_workspace && bazel run //:train_mlp -- /tmp/train_mlp_ckpt
//
// Exits 0 only if the loss fell below a tenth of its start and the restored state equals the
// saved one bit for bit.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <tuple>
#include <vector>

#include "checkpoint/manager.h"
#include "core/ops.h"
#include "core/random/random.h"
#include "optim/optim.h"
#include "transforms/autodiff.h"
#include "transforms/jit.h"

namespace g = graft;

struct Mlp {
  g::Array w1, b1, w2, b2;
};
GRAFT_TREE(Mlp, w1, b1, w2, b2);

namespace {

Mlp init(const g::Array& key, int64_t in, int64_t hidden) {
  g::Array k = g::random::split(key, 2);
  auto sub = [&](int i) { return g::reshape(g::slice(k, {i, 0}, {i + 1, 2}), {2}); };
  return {g::random::normal(sub(0), {in, hidden}) * (1.0 / std::sqrt(double(in))),
          g::zeros({hidden}),
          g::random::normal(sub(1), {hidden, 1}) * (1.0 / std::sqrt(double(hidden))),
          g::zeros({1})};
}

g::Array loss(const Mlp& p, const g::Array& x, const g::Array& y) {
  g::Array h = g::tanh(g::matmul(x, p.w1) + p.b1);
  return g::mean(g::square(g::matmul(h, p.w2) + p.b2 - y));
}

bool same_bits(const std::vector<g::Array>& a, const std::vector<g::Array>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].shape() != b[i].shape() || a[i].dtype() != b[i].dtype()) return false;
    if (std::memcmp(a[i].raw_data(), b[i].raw_data(), a[i].nbytes()) != 0) return false;
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string ckpt_dir = argc > 1 ? argv[1] : "/tmp/graft_train_mlp_ckpt";

  // Data: y = sin(2 x0) + x1 * x2 on [-1, 1]^3.
  g::Array keys = g::random::split(g::random::key(0), 2);
  auto key = [&](int i) { return g::reshape(g::slice(keys, {i, 0}, {i + 1, 2}), {2}); };
  const int64_t n = 512;
  g::Array x = g::random::uniform(key(0), {n, 3}, g::DType::kF32, -1.0, 1.0);
  auto col = [&](int j) { return g::slice(x, {0, j}, {n, j + 1}); };
  g::Array y = g::sin(2.0 * col(0)) + col(1) * col(2);

  Mlp params = init(key(1), 3, 32);
  g::optim::GradientTransformation opt = g::optim::adamw({.learning_rate = 1e-2});
  g::optim::State state = opt.init(params);

  // One compiled step: loss and gradient, the AdamW update, the new params.
  auto step = g::jit([&opt](const Mlp& p, const g::optim::State& s, const g::Array& xs,
                            const g::Array& ys) {
    auto [l, grads] = g::value_and_grad(loss)(p, xs, ys);
    auto [updates, s2] = opt.update(grads, s, p);
    return std::tuple{g::optim::apply_updates(p, updates), s2, l};
  });

  double first = 0, last = 0;
  for (int i = 0; i < 200; ++i) {
    g::Array l;
    std::tie(params, state, l) = step(params, state, x, y);
    last = l.item<double>();
    if (i == 0) first = last;
    if (i % 50 == 0 || i == 199) std::printf("step %3d  loss %.5f\n", i, last);
  }

  // Checkpoint: Orbax-style, one folder per step; then read it back into the same structure.
  namespace ckpt = g::checkpoint;
  auto manager = ckpt::CheckpointManager::open(ckpt_dir, {.enable_async = false});
  if (!manager.ok()) {
    std::fprintf(stderr, "checkpoint: %s\n", manager.status().ToString().c_str());
    return 1;
  }
  const int64_t step_no = (*manager)->latest_step().value_or(0) + 200;
  ckpt::Composite items{{"params", ckpt::Item::tree(params)}, {"opt", ckpt::Item::tree(state)}};
  if (absl::Status s = (*manager)->save(step_no, items, {.force = true}); !s.ok()) {
    std::fprintf(stderr, "checkpoint save: %s\n", s.ToString().c_str());
    return 1;
  }
  auto restored = (*manager)->restore(step_no, items);
  if (!restored.ok()) {
    std::fprintf(stderr, "checkpoint restore: %s\n", restored.status().ToString().c_str());
    return 1;
  }
  const bool same = same_bits(g::tree_leaves(restored->at("params").as<Mlp>()),
                              g::tree_leaves(params)) &&
                    same_bits(restored->at("opt").leaves(), g::tree_leaves(state));
  std::printf("checkpoint %s/%lld: restored params and optimizer state %s\n", ckpt_dir.c_str(),
              static_cast<long long>(step_no), same ? "equal the saved ones" : "DIFFER");
  std::printf("loss %.5f -> %.5f\n", first, last);
  return same && last < 0.1 * first ? 0 : 1;
}
