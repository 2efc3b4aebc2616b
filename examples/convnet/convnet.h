// A small convnet on a generated image set (examples/convnet): 8x8 single-channel images of
// three classes: a horizontal bar, a vertical bar, or noise only, each on Gaussian noise,
// the bar at a random row or column. The model is conv 3x3 (8) -> relu -> max pool 2x2 ->
// conv 3x3 (16) -> relu -> max pool 2x2 -> dense (3), trained with Adam on softmax
// cross-entropy. The library part lets tests/examples/convnet run it briefly.
#pragma once

#include <cstdint>

#include "core/array.h"
#include "core/tree/tree.h"
#include "nn/conv.h"
#include "nn/linear.h"

namespace convnet {

struct Images {
  graft::Array x;       // [n, 8, 8, 1] f32
  graft::Array labels;  // [n] i32 in {0, 1, 2}
};

// n images, classes in turn (0, 1, 2, 0, ...), pixels from a fixed-seed generator.
Images make_images(int64_t n, uint32_t seed);

struct Model {
  graft::nn::Conv conv1, conv2;
  graft::nn::Linear head;
};

Model init_model(uint32_t seed);
graft::Array logits(const Model& m, const graft::Array& x);  // [n, 3]
double accuracy(const Model& m, const Images& data);

struct TrainResult {
  double first_loss, last_loss, test_accuracy;
};

// `steps` Adam steps (learning rate 1e-2) on batches of `batch` fresh training images;
// accuracy on 300 held-out images. `log` prints the loss every 50 steps.
TrainResult train(int steps, int64_t batch, bool log);

}  // namespace convnet

GRAFT_TREE(convnet::Model, conv1, conv2, head);
