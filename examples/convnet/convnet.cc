#include "examples/convnet/convnet.h"

#include <cstdio>
#include <random>
#include <vector>

#include "core/ops.h"
#include "core/random/random.h"
#include "nn/activations.h"
#include "nn/cross_entropy.h"
#include "nn/pooling.h"
#include "optim/optimizers.h"
#include "transforms/autodiff.h"
#include "transforms/jit.h"

namespace convnet {

namespace g = graft;

namespace {

constexpr int64_t kSide = 8, kClasses = 3;

const g::nn::ConvSpec kConv1{.features = 8, .kernel_size = {3, 3}};
const g::nn::ConvSpec kConv2{.features = 16, .kernel_size = {3, 3}};

g::Array loss_fn(const Model& m, const g::Array& x, const g::Array& labels) {
  return g::mean(g::nn::softmax_cross_entropy(logits(m, x), labels));
}

}  // namespace

Images make_images(int64_t n, uint32_t seed) {
  std::mt19937 gen(seed);
  std::normal_distribution<float> noise(0.0f, 0.5f);
  std::uniform_int_distribution<int> where(0, kSide - 1);
  std::vector<float> px(n * kSide * kSide);
  std::vector<int32_t> labels(n);
  for (int64_t i = 0; i < n; ++i) {
    const int label = static_cast<int>(i % kClasses);
    labels[i] = label;
    float* im = px.data() + i * kSide * kSide;
    for (int64_t p = 0; p < kSide * kSide; ++p) im[p] = noise(gen);
    const int at = where(gen);
    for (int64_t k = 0; k < kSide; ++k) {
      if (label == 0) im[at * kSide + k] += 1.5f;  // a row
      if (label == 1) im[k * kSide + at] += 1.5f;  // a column
    }
  }
  return {g::array(px, g::Shape{n, kSide, kSide, 1}), g::array(labels, g::Shape{n})};
}

Model init_model(uint32_t seed) {
  g::Array keys = g::random::split(g::random::key(seed), 3);
  auto key = [&](int i) { return g::reshape(g::slice(keys, {i, 0}, {i + 1, 2}), {2}); };
  return {g::nn::conv_init(key(0), 1, kConv1), g::nn::conv_init(key(1), 8, kConv2),
          g::nn::linear_init(key(2), 2 * 2 * 16, kClasses, true, 0.1)};
}

g::Array logits(const Model& m, const g::Array& x) {
  g::Array h = g::nn::max_pool(g::nn::relu(m.conv1(x, kConv1)), {2, 2}, {2, 2});  // [n,4,4,8]
  h = g::nn::max_pool(g::nn::relu(m.conv2(h, kConv2)), {2, 2}, {2, 2});          // [n,2,2,16]
  return m.head(g::reshape(h, {x.shape()[0], 2 * 2 * 16}));
}

double accuracy(const Model& m, const Images& data) {
  g::Array hit = g::equal(g::argmax(logits(m, data.x), 1), data.labels);
  return g::mean(g::astype(hit, g::DType::kF32)).item<double>();
}

TrainResult train(int steps, int64_t batch, bool log) {
  Model model = init_model(0);
  const g::optim::GradientTransformation opt = g::optim::adam({.learning_rate = 1e-2});
  g::optim::State state = opt.init(model);
  auto step = g::jit([&](const Model& m, const g::optim::State& s, const g::Array& x,
                         const g::Array& y) {
    auto [l, grads] = g::value_and_grad(loss_fn)(m, x, y);
    auto [updates, s2] = opt.update(grads, s, m);
    return std::tuple{g::optim::apply_updates(m, updates), s2, l};
  });
  TrainResult r{};
  for (int i = 0; i < steps; ++i) {
    Images b = make_images(batch, 1000 + i);
    auto [m2, s2, l] = step(model, state, b.x, b.labels);
    model = m2;
    state = s2;
    const double lv = l.item<double>();
    if (i == 0) r.first_loss = lv;
    r.last_loss = lv;
    if (log && (i % 50 == 0 || i == steps - 1)) std::printf("step %4d  loss %.4f\n", i, lv);
  }
  r.test_accuracy = accuracy(model, make_images(300, 7));
  return r;
}

}  // namespace convnet
