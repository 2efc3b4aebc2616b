// A small MLP trained by gradient descent with value_and_grad over a GRAFT_TREE struct reaches
// a low loss on a generated regression task (the test-sized twin of examples/mlp.cc).
#include <cmath>

#include "core/ops.h"
#include "core/random/random.h"
#include "gtest/gtest.h"
#include "transforms/autodiff.h"

struct TinyMlp {
  graft::Array w1, b1, w2, b2;
};
GRAFT_TREE(TinyMlp, w1, b1, w2, b2);

namespace graft {
namespace {

Array loss(const TinyMlp& p, const Array& x, const Array& y) {
  Array h = tanh(matmul(x, p.w1) + p.b1);
  return mean(square(matmul(h, p.w2) + p.b2 - y));
}

TEST(MlpTrainingTest, GradientDescentReachesALowLoss) {
  Array keys = random::split(random::key(7), 4);
  auto key = [&](int i) { return reshape(slice(keys, {i, 0}, {i + 1, 2}), {2}); };
  Array x = random::uniform(key(0), {256, 2}, DType::kF32, -1.0, 1.0);
  Array y = sin(2.0 * slice(x, {0, 0}, {256, 1})) * slice(x, {0, 1}, {256, 2});
  double baseline = mean(square(y - mean(y))).item<double>();
  TinyMlp p{random::normal(key(1), {2, 32}) * 0.7, zeros({32}),
            random::normal(key(2), {32, 1}) * 0.2, zeros({1})};
  double first = 0, last = 0;
  for (int step = 0; step < 400; ++step) {
    auto [l, g] = value_and_grad(loss)(p, x, y);
    p = tree_map([](const Array& w, const Array& d) { return w - 0.2 * d; }, p, g);
    eval(tree_leaves(p));
    last = l.item<double>();
    if (step == 0) first = last;
  }
  EXPECT_LT(last, first);
  EXPECT_LT(last, 0.1 * baseline) << "first " << first << " baseline " << baseline;
}

}  // namespace
}  // namespace graft
