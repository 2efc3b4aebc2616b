// A short training run: llama-tiny learns a fixed repeating token sequence with a
// hand-written Adam step under graft::jit (no dependence on optim/). The loss must fall from
// ~ln(256) = 5.5 to a small fraction of it.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <tuple>
#include <utility>

#include "core/ops.h"
#include "core/random/random.h"
#include "gtest/gtest.h"
#include "nn/llama.h"
#include "transforms/autodiff.h"
#include "transforms/jit.h"

namespace graft::nn {
namespace {

using Moments = std::pair<LlamaParams, LlamaParams>;  // Adam's mu and nu

TEST(LlamaTrainTest, AdamUnderJitLearnsARepeatingSequence) {
  LlamaConfig c = LlamaConfig::tiny();
  c.loss_chunk_tokens = 32;
  LlamaParams params = llama_init(c, random::key(0));
  // Period-8 pattern of random ids, 2 rows at different phases, 33 tokens each.
  Array pattern = random::randint(random::key(1), {8}, 0, c.vocab_size);
  Array idx =
      remainder(iota(DType::kI32, {2, 33}, 1) + 3 * iota(DType::kI32, {2, 33}, 0), Array(8));
  Array seq = take(pattern, idx);
  Array x = slice(seq, {0, 0}, {2, 32}), y = slice(seq, {0, 1}, {2, 33});

  const double lr = 1e-2, b1 = 0.9, b2 = 0.99, eps = 1e-8;
  auto zeros_like_params = [](const LlamaParams& p) {
    return tree_map([](const Array& a) { return zeros_like(a); }, p);
  };
  auto step = jit([&](const LlamaParams& p, const Moments& m, const Array& t, const Array& xs,
                      const Array& ys) {
    auto [loss, g] =
        value_and_grad([&](const LlamaParams& q) { return llama_loss(q, xs, ys, c); })(p);
    LlamaParams mu =
        tree_map([&](const Array& a, const Array& d) { return b1 * a + (1 - b1) * d; }, m.first, g);
    LlamaParams nu = tree_map(
        [&](const Array& a, const Array& d) { return b2 * a + (1 - b2) * d * d; }, m.second, g);
    Array c1 = 1.0 - power(Array(float(b1)), t), c2 = 1.0 - power(Array(float(b2)), t);
    LlamaParams next =
        tree_map([&](const Array& w, const Array& a,
                     const Array& v) { return w - lr * (a / c1) / (sqrt(v / c2) + eps); },
                 p, mu, nu);
    return std::tuple{next, Moments{mu, nu}, loss};
  });

  Moments m{zeros_like_params(params), zeros_like_params(params)};
  double first = 0, last = 0;
  for (int i = 1; i <= 40; ++i) {
    auto [p2, m2, loss] = step(params, m, scalar(i, DType::kF32), x, y);
    params = p2;
    m = m2;
    last = loss.item<double>();
    if (std::getenv("GRAFT_TRAIN_VERBOSE")) std::printf("step %d loss %.4f\n", i, last);
    if (i == 1) first = last;
  }
  EXPECT_NEAR(first, std::log(256.0), 0.1);
  EXPECT_LT(last, 0.1 * first) << "first " << first << " last " << last;
  EXPECT_EQ(step.stats().misses, 1);  // one compile, then cached
  if (std::getenv("GRAFT_TRAIN_VERBOSE"))
    std::printf("compile %.2f s\n", step.stats().compile_seconds);
}

}  // namespace
}  // namespace graft::nn
