// Data-parallel training of llama-tiny on 8 virtual devices (GRAFT_CPU_DEVICES=8) follows the
// single-device run: the same init, batch and AdamW; the loss is computed per device on its
// rows under shard_map and averaged with pmean, and the parameters, replicated (P()), get the
// global gradient from the transpose of their implicit broadcast (a psum over 'data'). The
// mesh is data=4 x model=2 with everything replicated over 'model', so an axis the program
// does not use is covered too. 20 steps; the per-step losses must agree to 1e-5 relative
// (f32, summed in a different order; measured: equal to the 6 digits printed).
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <tuple>
#include <vector>

#include "core/ops.h"
#include "core/random/random.h"
#include "core/sharding/device_put.h"
#include "gtest/gtest.h"
#include "nn/llama.h"
#include "optim/optim.h"
#include "transforms/autodiff.h"
#include "transforms/jit.h"
#include "transforms/shard_map.h"

namespace graft::nn {
namespace {

TEST(DataParallelTrainTest, ShardMapFollowsTheSingleDeviceLossCurve) {
  LlamaConfig c = LlamaConfig::tiny();
  c.loss_chunk_tokens = 32;
  const LlamaParams init = llama_init(c, random::key(0));
  Array seq = random::randint(random::key(1), {8, 33}, 0, c.vocab_size);
  Array pattern = take_along_axis(seq, remainder(iota(DType::kI32, {8, 33}, 1), Array(6)), 1);
  Array x = slice(pattern, {0, 0}, {8, 32}), y = slice(pattern, {0, 1}, {8, 33});
  optim::GradientTransformation opt = optim::adamw({.learning_rate = 3e-3});

  Mesh mesh({4, 2}, {"data", "model"});
  auto dp_loss =
      shard_map([&](const LlamaParams& p, const Array& xs,
                    const Array& ys) { return pmean(llama_loss(p, xs, ys, c), {"data"}); },
                mesh, {P(), P("data", none), P("data", none)}, {P()});
  auto make_step = [&](auto loss_fn) {
    return jit([&opt, loss_fn](const LlamaParams& p, const optim::State& s, const Array& xs,
                               const Array& ys) {
      auto [loss, g] = value_and_grad([&](const LlamaParams& q) { return loss_fn(q, xs, ys); })(p);
      auto [updates, s2] = opt.update(g, s, p);
      return std::tuple{optim::apply_updates(p, updates), s2, loss};
    });
  };
  auto single = make_step([&](const LlamaParams& p, const Array& xs, const Array& ys) {
    return llama_loss(p, xs, ys, c);
  });
  auto parallel = make_step(dp_loss);

  // The gradients at the start agree leaf by leaf (up to f32 summation order).
  auto g1 = grad([&](const LlamaParams& p) { return llama_loss(p, x, y, c); })(init);
  auto g2 = grad([&](const LlamaParams& p) { return dp_loss(p, x, y); })(init);
  std::vector<Array> l1 = tree_leaves(g1), l2 = tree_leaves(g2);
  ASSERT_EQ(l1.size(), l2.size());
  for (size_t k = 0; k < l1.size(); ++k) {
    std::vector<float> a = l1[k].to_vector<float>(), b = l2[k].to_vector<float>();
    float scale = 0;
    for (float v : a) scale = std::max(scale, std::fabs(v));
    if (std::getenv("GRAFT_TRAIN_VERBOSE")) {
      double sa = 0, sb = 0;
      for (size_t e = 0; e < a.size(); ++e) sa += std::fabs(a[e]), sb += std::fabs(b[e]);
      std::printf("leaf %zu %s ratio %.6f\n", k, shape_str(l1[k].shape()).c_str(), sb / sa);
    }
    for (size_t e = 0; e < a.size(); ++e) EXPECT_NEAR(b[e], a[e], 1e-5f * scale) << "leaf " << k;
  }

  LlamaParams p1 = init, p2 = init;
  optim::State s1 = opt.init(init), s2 = opt.init(init);
  double worst = 0;
  for (int i = 0; i < 20; ++i) {
    auto [n1, t1, l1] = single(p1, s1, x, y);
    auto [n2, t2, l2] = parallel(p2, s2, x, y);
    p1 = n1, s1 = t1, p2 = n2, s2 = t2;
    const double a = l1.item<double>(), b = l2.item<double>();
    worst = std::max(worst, std::fabs(a - b) / std::fabs(a));
    if (std::getenv("GRAFT_TRAIN_VERBOSE")) std::printf("step %d %.6f %.6f\n", i, a, b);
    ASSERT_NEAR(b, a, 1e-5 * std::fabs(a)) << "step " << i;
  }
  RecordProperty("worst_relative_difference", std::to_string(worst));
  // It trained: the loss fell well below ln(256).
  EXPECT_LT(std::get<2>(single(p1, s1, x, y)).item<double>(), 0.5 * std::log(256.0));
}

// The same training by annotations alone (jit partitions it, core/interpreters/spmd.h): the batch split
// over 'data', and FSDP: every parameter and optimizer-state leaf of rank 2 or more split over
// 'data' on its last dimension (stacked layer weights keep their scanned leading dimension
// whole). The step is the single-device step; the shardings come from device_put.
TEST(DataParallelTrainTest, ShardingAnnotationsFollowTheSingleDeviceLossCurve) {
  LlamaConfig c = LlamaConfig::tiny();
  c.loss_chunk_tokens = 32;
  const LlamaParams init = llama_init(c, random::key(0));
  Array seq = random::randint(random::key(1), {8, 33}, 0, c.vocab_size);
  Array pattern = take_along_axis(seq, remainder(iota(DType::kI32, {8, 33}, 1), Array(6)), 1);
  Array x = slice(pattern, {0, 0}, {8, 32}), y = slice(pattern, {0, 1}, {8, 33});
  optim::GradientTransformation opt = optim::adamw({.learning_rate = 3e-3});
  auto step = jit([&opt, &c](const LlamaParams& p, const optim::State& s, const Array& xs,
                             const Array& ys) {
    auto [loss, g] = value_and_grad([&](const LlamaParams& q) { return llama_loss(q, xs, ys, c); })(p);
    auto [updates, s2] = opt.update(g, s, p);
    return std::tuple{optim::apply_updates(p, updates), s2, loss};
  });
  Mesh mesh({4}, {"data"});
  auto fsdp = [&](const Array& a) {
    if (a.ndim() < 2 || a.shape().back() % 4 != 0) return device_put(a, NamedSharding(mesh, P()));
    std::vector<DimSplit> dims(a.ndim(), none);
    dims.back() = "data";
    return device_put(a, NamedSharding(mesh, PartitionSpec(dims)));
  };
  LlamaParams p1 = init, p2 = tree_map(fsdp, init);
  optim::State s1 = opt.init(init), s2 = tree_map(fsdp, opt.init(init));
  NamedSharding rows(mesh, P("data"));
  Array x2 = device_put(x, rows), y2 = device_put(y, rows);
  const std::string text = step.as_text(p2, s2, x2, y2);
  EXPECT_NE(text.find("shard_map"), std::string::npos);
  EXPECT_NE(text.find("all_gather"), std::string::npos);  // FSDP weights gathered for use
  EXPECT_NE(text.find("psum"), std::string::npos);        // gradients summed over the batch
  for (int i = 0; i < 20; ++i) {
    auto [n1, t1, l1] = step(p1, s1, x, y);
    auto [n2, t2, l2] = step(p2, s2, x2, y2);
    p1 = n1, s1 = t1, p2 = n2, s2 = t2;
    const double a = l1.item<double>(), b = l2.item<double>();
    if (std::getenv("GRAFT_TRAIN_VERBOSE")) std::printf("step %d %.6f %.6f\n", i, a, b);
    ASSERT_NEAR(b, a, 1e-5 * std::fabs(a)) << "step " << i;
  }
  // The parameters stay split as placed.
  std::vector<Array> placed = tree_leaves(tree_map(fsdp, init)), now = tree_leaves(p2);
  for (size_t k = 0; k < now.size(); ++k) {
    EXPECT_EQ(now[k].sharding(), placed[k].sharding()) << "leaf " << k;
  }
}

}  // namespace
}  // namespace graft::nn
