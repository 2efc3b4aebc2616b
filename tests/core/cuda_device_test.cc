// The CUDA backend's device discovery. Without a GPU (this machine, CI) the GPU test skips
// with the reason; with --config=cuda on a GPU machine it runs a real kernel.
#include <vector>

#include "core/backend/cuda/device.h"
#include "gtest/gtest.h"

namespace graft::cuda {
namespace {

TEST(CudaDeviceTest, NoDeviceMeansZeroAndAReason) {
  if (device_count() > 0) GTEST_SKIP() << "a GPU is present: " << status();
  EXPECT_FALSE(status().empty());
  std::vector<float> v(4, 0.0f);
  std::string error;
  EXPECT_FALSE(fill_on_device(v.data(), 4, 1.0f, &error));
  EXPECT_FALSE(error.empty());
}

TEST(CudaDeviceTest, FillKernelRunsOnAGpu) {
  if (device_count() == 0) GTEST_SKIP() << "no GPU: " << status();
  std::vector<float> v(1000, 0.0f);
  std::string error;
  ASSERT_TRUE(fill_on_device(v.data(), 1000, 3.5f, &error)) << error;
  for (float x : v) EXPECT_EQ(x, 3.5f);
}

}  // namespace
}  // namespace graft::cuda
