// examples/convnet trained for a short run: the loss falls and the held-out accuracy rises
// far above chance (1/3). The full run (bazel run //examples/convnet, 300 steps) is what the
// README's figure comes from.
#include "examples/convnet/convnet.h"
#include "gtest/gtest.h"

namespace {

TEST(ConvnetTest, LearnsBarsWellAboveChance) {
  const convnet::TrainResult r = convnet::train(80, 32, false);
  EXPECT_LT(r.last_loss, 0.5 * r.first_loss);
  EXPECT_GT(r.test_accuracy, 0.75) << "chance is 1/3";
}

TEST(ConvnetTest, ImagesAreBalancedAndDeterministic) {
  const convnet::Images a = convnet::make_images(6, 3), b = convnet::make_images(6, 3);
  EXPECT_EQ(a.labels.to_vector<int32_t>(), (std::vector<int32_t>{0, 1, 2, 0, 1, 2}));
  EXPECT_EQ(a.x.to_vector<float>(), b.x.to_vector<float>());
  EXPECT_EQ(a.x.shape(), (graft::Shape{6, 8, 8, 1}));
}

}  // namespace
