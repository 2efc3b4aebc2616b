// Trains the small convnet of convnet.h for 300 steps and prints the held-out accuracy
// (chance is 1/3).
//
//   bazel run //examples/convnet
#include <cstdio>

#include "examples/convnet/convnet.h"

int main() {
  const convnet::TrainResult r = convnet::train(300, 32, true);
  std::printf("loss %.4f -> %.4f; accuracy on 300 held-out images: %.1f%% (chance 33.3%%)\n",
              r.first_loss, r.last_loss, 100 * r.test_accuracy);
  return r.test_accuracy > 0.9 ? 0 : 1;
}
