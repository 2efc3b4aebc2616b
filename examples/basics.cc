// graft basics: arrays, lazy ops, random numbers and a least-squares fit, end to end.
//
//   bazel run //examples:basics
//
// 1. Estimates pi by Monte Carlo with counter-based random numbers (examples/monte_carlo_pi.h:
//    the same value as JAX's for the same key, 3.14166).
// 2. Generates a noisy linear-regression problem and fits it by gradient descent written
//    with plain ops (the gradient written by hand, to show the ops; examples/mlp uses value_and_grad),
//    then checks the fit against the true weights.
// 3. Shows weak typing: bf16 arrays stay bf16 when multiplied by C++ scalars.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>

#include "core/ops.h"
#include "core/random/random.h"
#include "examples/monte_carlo_pi.h"

namespace g = graft;

int main() {
  auto start = std::chrono::steady_clock::now();
  g::Array key = g::random::key(0);
  g::Array keys = g::random::split(key, 4);
  auto subkey = [&](int i) { return g::reshape(g::slice(keys, {i, 0}, {i + 1, 2}), {2}); };

  // 1. Monte Carlo pi: the fraction of uniform points in the unit square inside the circle
  //    (drawn with subkey(0); tests/examples/basics checks the value against JAX's).
  const int64_t n = 1 << 22;
  g::Array pi = g::examples::monte_carlo_pi(key, n);
  std::printf("pi ~= %.5f from %lld random points (error %.2e)\n", pi.item<double>(),
              static_cast<long long>(n), std::abs(pi.item<double>() - 3.14159265358979));

  // 2. Least squares by gradient descent: y = X w_true + 0.01 noise.
  const int64_t rows = 4096, features = 16;
  g::Array w_true = g::random::normal(subkey(1), {features, 1});
  g::Array X = g::random::normal(subkey(2), {rows, features});
  g::Array y = g::matmul(X, w_true) + 0.01 * g::random::normal(subkey(3), {rows, 1});
  g::eval(X, y, w_true);
  g::Array w = g::zeros({features, 1});
  const double lr = 0.5;
  for (int step = 0; step <= 100; ++step) {
    g::Array residual = g::matmul(X, w) - y;
    if (step % 25 == 0) {
      std::printf("step %3d  mse %.6f\n", step, g::mean(g::square(residual)).item<double>());
    }
    g::Array gradient = g::matmul(g::transpose(X), residual) * (2.0 / rows);
    w = w - lr * gradient;
    g::eval(w);  // keep the graph small: one step at a time
  }
  double err = g::max(g::abs(w - w_true)).item<double>();
  std::printf("max |w - w_true| = %.4f (noise level 0.01)\n", err);

  // 3. Softmax of bf16 logits stays bf16; C++ scalars do not widen arrays.
  g::Array logits = g::astype(g::array<float>({1.0f, 2.0f, 3.0f}), g::DType::kBF16);
  g::Array probs = g::softmax(logits * 2.0);
  std::cout << "softmax(2 * logits) = " << probs << "\n";

  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("done in %.2f s\n", secs);
  return err < 0.01 ? 0 : 1;
}
