// nn::Conv and flax-style pooling (nn/conv.h, nn/pooling.h) against the lax ops they are
// made of (themselves checked against JAX in tests/core/lax:convolution_test) and against plain loops.
#include <vector>

#include "core/ops.h"
#include "core/random/random.h"
#include "gtest/gtest.h"
#include "nn/conv.h"
#include "nn/pooling.h"

namespace graft {
namespace {

TEST(ConvLayerTest, ChannelsLastMatchesConvGeneralDilated) {
  const Array x = random::normal(random::key(1), {2, 5, 6, 3});
  const nn::ConvSpec spec{.features = 4, .kernel_size = {3, 2}, .strides = {2, 1}};
  const nn::Conv c = nn::conv_init(random::key(2), 3, spec);
  ASSERT_EQ(c.kernel.shape(), (Shape{3, 2, 3, 4}));
  const Array bias = arange(4.0f) * 0.5f;
  const nn::Conv cb{c.kernel, bias};
  const Array want = conv_general_dilated(x, c.kernel, {2, 1}, "SAME", {}, {},
                                          {"NHWC", "HWIO", "NHWC"}) + bias;
  const Array got = cb(x, spec);
  EXPECT_EQ(got.shape(), (Shape{2, 3, 6, 4}));
  EXPECT_EQ(got.to_vector<float>(), want.to_vector<float>());
  // Unbatched input: the same as batch member 0.
  const Array one = cb(take(x, scalar(0, DType::kI32), 0), spec);
  EXPECT_EQ(one.to_vector<float>(), take(got, scalar(0, DType::kI32), 0).to_vector<float>());
  EXPECT_THROW(cb(ones({5, 6}), spec), Error);
}

TEST(PoolingTest, MatchesLoops) {
  // x[b, i, j, c] = b * 100 + i * 10 + j + c * 0.5 on [2, 4, 4, 2].
  std::vector<float> v;
  for (int b = 0; b < 2; ++b)
    for (int i = 0; i < 4; ++i)
      for (int j = 0; j < 4; ++j)
        for (int c = 0; c < 2; ++c) v.push_back(b * 100 + i * 10 + j + c * 0.5f);
  const Array x = array(v, Shape{2, 4, 4, 2});
  const Array mx = nn::max_pool(x, {2, 2}, {2, 2});
  const Array mn = nn::min_pool(x, {2, 2}, {2, 2});
  const Array av = nn::avg_pool(x, {2, 2}, {2, 2});
  ASSERT_EQ(mx.shape(), (Shape{2, 2, 2, 2}));
  std::vector<float> wmax, wmin, wavg;
  for (int b = 0; b < 2; ++b)
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 2; ++j)
        for (int c = 0; c < 2; ++c) {
          const float base = b * 100 + 2 * i * 10 + 2 * j + c * 0.5f;
          wmin.push_back(base);
          wmax.push_back(base + 11);
          wavg.push_back(base + 5.5f);
        }
  EXPECT_EQ(mx.to_vector<float>(), wmax);
  EXPECT_EQ(mn.to_vector<float>(), wmin);
  EXPECT_EQ(av.to_vector<float>(), wavg);
  // SAME padding on a 3x3 window: corners average 4 real values (count_include_pad=false)
  // or those over 9 (true).
  const Array o = ones({1, 3, 3, 1});
  EXPECT_FLOAT_EQ(nn::avg_pool(o, {3, 3}, {}, "SAME", false).to_vector<float>()[0], 1.0f);
  EXPECT_FLOAT_EQ(nn::avg_pool(o, {3, 3}, {}, "SAME", true).to_vector<float>()[0], 4.0f / 9.0f);
  EXPECT_THROW(nn::max_pool(x, {2}), Error);
}

}  // namespace
}  // namespace graft
