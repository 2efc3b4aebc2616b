// The Optax and jax.nn entries of the coverage test: each is the call
// tools/make_api_coverage_vectors.py makes with Optax / jax.nn under the same key, on the inputs
// of api_entry.h (Optax given the C++ options' defaults where it has none).
#include "core/ops.h"
#include "core/random/random.h"
#include "nn/activations.h"
#include "nn/dot_product_attention.h"
#include "nn/init.h"
#include "optim/optim.h"
#include "tests/api/api_entry.h"

namespace graft::api {
namespace {

// One update of an optimizer on a one-leaf tree: params v, gradients 0.1 v.
Array step_of(const optim::GradientTransformation& opt) {
  std::vector<Array> p{v()};
  optim::State s = opt.init(p);
  auto [u, s2] = opt.update(std::vector<Array>{v() * 0.1}, s, p);
  return u[0];
}

Array step(int n) { return scalar(n, DType::kI32); }

}  // namespace

std::vector<Entry> optax_nn_entries() {
  return {
      // Optax.
      API("optax", "rmsprop", step_of(optim::rmsprop({}))),
      API("optax", "adagrad", step_of(optim::adagrad({}))),
      API("optax", "lamb", step_of(optim::lamb({}))),
      API("optax", "lars", step_of(optim::lars({}))),
      API("optax", "adamax", step_of(optim::adamax({}))),
      API("optax", "nadam", step_of(optim::nadam({}))),
      API("optax", "radam", step_of(optim::radam({}))),
      API("optax", "exponential_decay", optim::exponential_decay(1.0, 10, 0.5)(step(3))),
      API("optax", "piecewise_constant_schedule",
          optim::piecewise_constant_schedule(1.0, {{5, 0.5}})(step(7))),
      API("optax", "polynomial_schedule",
          optim::polynomial_schedule(1.0, 0.1, 2.0, 10)(step(3))),
      API("optax", "cosine_onecycle_schedule",
          optim::cosine_onecycle_schedule(100, 1.0)(step(30))),
      API("optax", "softmax_cross_entropy",
          optim::softmax_cross_entropy(m(), softmax(m() * 0.5, -1))),
      API("optax", "softmax_cross_entropy_with_integer_labels",
          optim::softmax_cross_entropy_with_integer_labels(m(), i32s({0, 2}))),
      API("optax", "l2_loss", optim::l2_loss(v(), v() * 0.5)),
      API("optax", "huber_loss", optim::huber_loss(v(), v() * -1.0)),
      API("optax", "sigmoid_binary_cross_entropy",
          optim::sigmoid_binary_cross_entropy(v(), v() * 0.1)),
      API("optax", "kl_divergence",
          optim::kl_divergence(log_softmax(m(), -1), softmax(m() * 0.5, -1))),
      API("optax", "muon", step_of(optim::muon({}))),
      API("optax", "clip", step_of(optim::clip(0.1))),
      API("optax", "ema", step_of(optim::ema(0.9))),
      API("optax", "multi_transform",
          step_of(optim::multi_transform({{"a", optim::sgd({})}},
                                         std::vector<std::string>{"a"}))),
      API("optax", "inject_hyperparams",
          step_of(optim::inject_hyperparams(
              [](const optim::Hyperparams& h) {
                return optim::sgd({.learning_rate = optim::injected(h.at("lr"))});
              },
              {{"lr", 0.1}}))),
      API("optax", "apply_if_finite", step_of(optim::apply_if_finite(optim::sgd({}), 1))),
      API("optax", "zero_nans", step_of(optim::zero_nans())),
      API("optax", "apply_every", step_of(optim::apply_every(2))),
      // jax.nn (nn/activations.h, nn/dot_product_attention.h, nn/init.h).
      API("jax.nn", "relu", nn::relu(v() - 1.0)),
      API("jax.nn", "relu6", nn::relu6(v() * 5.0)),
      API("jax.nn", "softplus", nn::softplus(v())),
      API("jax.nn", "log_sigmoid", nn::log_sigmoid(v())),
      API("jax.nn", "leaky_relu", nn::leaky_relu(v() - 1.0)),
      API("jax.nn", "elu", nn::elu(v() - 1.0)),
      API("jax.nn", "celu", nn::celu(v() - 1.0)),
      API("jax.nn", "selu", nn::selu(v() - 1.0)),
      API("jax.nn", "glu", nn::glu(v())),
      API("jax.nn", "mish", nn::mish(v())),
      API("jax.nn", "hard_sigmoid", nn::hard_sigmoid(v() * 4.0 - 3.0)),
      API("jax.nn", "hard_silu", nn::hard_silu(v() * 4.0 - 3.0)),
      API("jax.nn", "hard_tanh", nn::hard_tanh(v() * 2.0 - 2.0)),
      API("jax.nn", "squareplus", nn::squareplus(v())),
      API("jax.nn", "standardize", nn::standardize(m() * m())),
      API("jax.nn", "dot_product_attention",
          nn::dot_product_attention(reshape(arange(1.0, 17.0, 1.0), {1, 2, 2, 4}) * 0.1,
                                    reshape(arange(1.0, 9.0, 1.0), {1, 2, 1, 4}) * 0.1,
                                    reshape(arange(1.0, 9.0, 1.0), {1, 2, 1, 4}), std::nullopt,
                                    std::nullopt, {.is_causal = true})),
      API("jax.nn", "initializers.lecun_uniform", nn::lecun_uniform(random::key(0), {4, 3})),
      API("jax.nn", "initializers.lecun_normal", nn::lecun_normal(random::key(0), {4, 3})),
      API("jax.nn", "initializers.orthogonal", nn::orthogonal(random::key(0), {4, 3})),
      API("jax.nn", "initializers.uniform", nn::uniform_init(random::key(0), {4, 3})),
  };
}

}  // namespace graft::api
