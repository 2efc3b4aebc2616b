// The CUDA backend's device discovery. Without a GPU (this machine, CI) the GPU test skips
// with the reason (a CUDA driver error fails it where a GPU is expected); with --config=cuda on
// a GPU machine it runs a real kernel.
#include <vector>

#include "core/backend/cuda/device.h"
#include "gtest/gtest.h"

namespace graft::cuda {
namespace {

TEST(CudaDeviceTest, TheProbeAgreesWithDeviceCountAndStatus) {
  const Probe& p = probe();
  EXPECT_EQ(&p, &probe()) << "asked once per process";
  EXPECT_EQ(device_count(), p.count);
  EXPECT_EQ(status(), p.str());
  EXPECT_FALSE(status().empty());
  EXPECT_EQ(p.state == ProbeState::kReady, p.count > 0);
  if (p.state == ProbeState::kDriverError || (p.state == ProbeState::kNoDevice && p.error != 0)) {
    // The reason names the CUDA error ("cudaErrorInsufficientDriver (CUDA driver version ...)").
    EXPECT_EQ(p.error_name.rfind("cudaError", 0), 0u) << p.error_name;
    EXPECT_FALSE(p.error_string.empty());
    EXPECT_NE(status().find(p.error_name), std::string::npos) << status();
  }
}

TEST(CudaDeviceTest, NoDeviceMeansZeroAndAReason) {
  if (device_count() > 0) GTEST_SKIP() << "a GPU is present: " << status();
  std::vector<float> v(4, 0.0f);
  std::string error;
  EXPECT_FALSE(fill_on_device(v.data(), 4, 1.0f, &error));
  EXPECT_EQ(error, status());
}

TEST(CudaDeviceTest, FillKernelRunsOnAGpu) {
  const GpuRequirement need = require_gpus(probe(), 1, gpu_expected());
  if (need.verdict == GpuVerdict::kFail) FAIL() << need.reason;
  if (need.verdict == GpuVerdict::kSkip) GTEST_SKIP() << need.reason;
  std::vector<float> v(1000, 0.0f);
  std::string error;
  ASSERT_TRUE(fill_on_device(v.data(), 1000, 3.5f, &error)) << error;
  for (float x : v) EXPECT_EQ(x, 3.5f);
}

}  // namespace
}  // namespace graft::cuda
