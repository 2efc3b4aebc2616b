// A small MLP trained by plain gradient descent with value_and_grad over a GRAFT_TREE struct,
// on a generated regression task: y = sin(3 x0) * cos(2 x1) + 0.5 x2^2 plus a little noise.
//
//   bazel run //examples:mlp
#include <cmath>
#include <cstdio>

#include "core/ops.h"
#include "core/random/random.h"
#include "transforms/autodiff.h"

namespace g = graft;

struct Mlp {
  g::Array w1, b1, w2, b2, w3, b3;
};
GRAFT_TREE(Mlp, w1, b1, w2, b2, w3, b3);

namespace {

Mlp init(const g::Array& key, int64_t in, int64_t hidden) {
  g::Array k = g::random::split(key, 3);
  auto sub = [&](int i) { return g::reshape(g::slice(k, {i, 0}, {i + 1, 2}), {2}); };
  auto dense = [&](int i, int64_t fan_in, int64_t fan_out) {
    return g::random::normal(sub(i), {fan_in, fan_out}) * (1.0 / std::sqrt(double(fan_in)));
  };
  return {dense(0, in, hidden), g::zeros({hidden}),  dense(1, hidden, hidden),
          g::zeros({hidden}),   dense(2, hidden, 1), g::zeros({1})};
}

g::Array predict(const Mlp& p, const g::Array& x) {
  g::Array h = g::tanh(g::matmul(x, p.w1) + p.b1);
  h = g::tanh(g::matmul(h, p.w2) + p.b2);
  return g::matmul(h, p.w3) + p.b3;
}

g::Array loss(const Mlp& p, const g::Array& x, const g::Array& y) {
  return g::mean(g::square(predict(p, x) - y));
}

}  // namespace

int main() {
  g::Array keys = g::random::split(g::random::key(42), 3);
  auto key = [&](int i) { return g::reshape(g::slice(keys, {i, 0}, {i + 1, 2}), {2}); };
  const int64_t n = 2048;
  g::Array x = g::random::uniform(key(0), {n, 3}, g::DType::kF32, -1.0, 1.0);
  auto col = [&](int j) { return g::slice(x, {0, j}, {n, j + 1}); };
  g::Array y = g::sin(3.0 * col(0)) * g::cos(2.0 * col(1)) + 0.5 * g::square(col(2)) +
               0.01 * g::random::normal(key(1), {n, 1});
  g::eval(x, y);
  double baseline = g::mean(g::square(y - g::mean(y))).item<double>();  // predict the mean

  Mlp params = init(key(2), 3, 64);
  const double lr = 0.1;
  double first = 0, last = 0;
  for (int step = 0; step <= 1500; ++step) {
    auto [l, grads] = g::value_and_grad(loss)(params, x, y);
    params = g::tree_map([&](const g::Array& p, const g::Array& d) { return p - lr * d; }, params,
                         grads);
    g::eval(g::tree_leaves(params));
    last = l.item<double>();
    if (step == 0) first = last;
    if (step % 250 == 0) std::printf("step %4d  loss %.5f\n", step, last);
  }
  std::printf("variance of y (loss of predicting the mean): %.5f\n", baseline);
  std::printf("final loss %.5f = %.1f%% of the baseline\n", last, 100 * last / baseline);
  return last < 0.1 * baseline && last < first ? 0 : 1;
}
