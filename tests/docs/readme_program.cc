// Fits y = x w + b with one jitted step: value_and_grad for the update, and vmap(grad) for
// the gradient of every example on its own.
#include <cstdio>
#include <iostream>
#include <tuple>

#include "core/ops.h"
#include "core/random/random.h"
#include "transforms/autodiff.h"
#include "transforms/jit.h"
#include "transforms/vmap.h"

namespace g = graft;

struct Linear {
  g::Array w, b;
};
GRAFT_TREE(Linear, w, b);  // a pytree: transforms take and return it

g::Array loss(const Linear& p, const g::Array& x, const g::Array& y) {
  return g::mean(g::square(g::matmul(x, p.w) + p.b - y));
}

int main() {
  g::Array x = g::random::normal(g::random::key(0), {256, 8});  // lazy: nothing computed yet
  g::Array y = g::matmul(x, g::linspace(-1.0, 1.0, 8)) + 0.5;   // C++ scalars are weakly typed
  Linear p{g::zeros({8}), g::zeros({})};

  auto step = g::jit([](const Linear& p, const g::Array& x, const g::Array& y) {
    auto [l, grads] = g::value_and_grad(loss)(p, x, y);              // grads is a Linear
    Linear each = g::vmap(g::grad(loss), {g::none, 0, 0})(p, x, y);  // each.w: [256, 8]
    g::Array largest = g::max(g::sqrt(g::sum(g::square(each.w), {1})));
    auto sgd = [](const g::Array& v, const g::Array& d) { return v - 0.1 * d; };
    return std::tuple{g::tree_map(sgd, p, grads), l, largest};
  });
  for (int i = 0; i <= 100; ++i) {
    auto [next, l, largest] = step(p, x, y);  // traced and compiled on the first call only
    p = next;
    if (i % 20 == 0)
      std::printf("step %3d  loss %.6f  largest per-example |dw| %.4f\n", i, l.item<float>(),
                  largest.item<float>());
  }
  std::cout << "w = " << p.w << "\nb = " << p.b << "\n";  // reading evaluates
  return loss(p, x, y).item<float>() < 1e-4 ? 0 : 1;
}
