// probe.h's classification of cudaGetDeviceCount's answer and the GPU gate built on it, over
// the error codes a machine can give, without a GPU (every build). With --config=cuda the codes
// used here are checked against cuda_runtime_api.h.
#include "core/backend/cuda/probe.h"

#include <string>

#include "gtest/gtest.h"
#ifdef GRAFT_CUDA
#include <cuda_runtime_api.h>
#endif

namespace graft::cuda {
namespace {

constexpr int kSuccess = 0;
constexpr int kInitializationError = 3;
constexpr int kStubLibrary = 34;
constexpr int kInsufficientDriver = 35;
constexpr int kDevicesUnavailable = 46;
constexpr int kNoDevice = 100;
constexpr int kSystemDriverMismatch = 803;

#ifdef GRAFT_CUDA
static_assert(cudaSuccess == kSuccess && cudaErrorInitializationError == kInitializationError &&
              cudaErrorStubLibrary == kStubLibrary &&
              cudaErrorInsufficientDriver == kInsufficientDriver &&
              cudaErrorDevicesUnavailable == kDevicesUnavailable &&
              cudaErrorNoDevice == kNoDevice &&
              cudaErrorSystemDriverMismatch == kSystemDriverMismatch);
#endif

const char kDriverText[] = "CUDA driver version is insufficient for CUDA runtime version";

Probe driver_error() {
  return classify_probe(kInsufficientDriver, 0, "cudaErrorInsufficientDriver", kDriverText);
}

Probe ready(int n) {
  Probe p = classify_probe(kSuccess, n, "cudaSuccess", "no error");
  p.device_name = "NVIDIA H200";
  return p;
}

TEST(CudaProbe, DevicesAreReady) {
  const Probe p = ready(2);
  EXPECT_EQ(p.state, ProbeState::kReady);
  EXPECT_EQ(p.count, 2);
  EXPECT_EQ(p.str(), "NVIDIA H200");
}

TEST(CudaProbe, NoDeviceIsNotADriverError) {
  const Probe none = classify_probe(kNoDevice, 0, "cudaErrorNoDevice",
                                    "no CUDA-capable device is detected");
  EXPECT_EQ(none.state, ProbeState::kNoDevice);
  EXPECT_EQ(none.count, 0);
  EXPECT_EQ(none.str(), "no CUDA device: cudaErrorNoDevice (no CUDA-capable device is detected)");
  const Probe zero = classify_probe(kSuccess, 0, "cudaSuccess", "no error");
  EXPECT_EQ(zero.state, ProbeState::kNoDevice);
  EXPECT_EQ(zero.str(), "no CUDA device");
}

TEST(CudaProbe, EveryOtherErrorIsADriverErrorNamingIt) {
  const Probe p = driver_error();
  EXPECT_EQ(p.state, ProbeState::kDriverError);
  EXPECT_EQ(p.count, 0);
  EXPECT_EQ(p.error, kInsufficientDriver);
  EXPECT_EQ(p.str(), std::string("CUDA driver error, no GPU usable: cudaErrorInsufficientDriver (") +
                         kDriverText + ")");
  for (int error : {kInitializationError, kStubLibrary, kDevicesUnavailable,
                    kSystemDriverMismatch, 999}) {
    const Probe q = classify_probe(error, 4, "cudaErrorX", "text");  // the count is not trusted
    EXPECT_EQ(q.state, ProbeState::kDriverError) << error;
    EXPECT_EQ(q.count, 0) << error;
  }
}

TEST(CudaProbe, NotBuiltByDefault) {
  const Probe p;
  EXPECT_EQ(p.state, ProbeState::kNotBuilt);
  EXPECT_EQ(p.str(), "graft was built without CUDA (use --config=cuda)");
}

TEST(CudaProbe, AGpuIsExpectedByTheVariableOrTheDeviceNode) {
  EXPECT_TRUE(gpu_expected("1", false));
  EXPECT_TRUE(gpu_expected(nullptr, true));
  EXPECT_TRUE(gpu_expected("", true));  // empty is unset
  EXPECT_FALSE(gpu_expected("0", true));
  EXPECT_FALSE(gpu_expected(nullptr, false));
  EXPECT_FALSE(gpu_expected("", false));
}

TEST(CudaProbe, RequireGpusRunsWithEnoughDevices) {
  EXPECT_EQ(require_gpus(ready(1), 1, true).verdict, GpuVerdict::kRun);
  EXPECT_EQ(require_gpus(ready(2), 2, false).verdict, GpuVerdict::kRun);
  const GpuRequirement few = require_gpus(ready(1), 2, true);
  EXPECT_EQ(few.verdict, GpuVerdict::kSkip);
  EXPECT_EQ(few.reason, "needs 2 GPU(s), there are 1 (NVIDIA H200)");
}

TEST(CudaProbe, ADriverErrorSkipsWhereNoGpuIsExpected) {
  const GpuRequirement r = require_gpus(driver_error(), 1, false);
  EXPECT_EQ(r.verdict, GpuVerdict::kSkip);
  EXPECT_NE(r.reason.find("cudaErrorInsufficientDriver"), std::string::npos) << r.reason;
  EXPECT_NE(r.reason.find(kDriverText), std::string::npos) << r.reason;
}

TEST(CudaProbe, ADriverErrorFailsWhereAGpuIsExpected) {
  const GpuRequirement r = require_gpus(driver_error(), 1, true);
  EXPECT_EQ(r.verdict, GpuVerdict::kFail);
  EXPECT_NE(r.reason.find("a GPU is expected"), std::string::npos) << r.reason;
  EXPECT_NE(r.reason.find("cudaErrorInsufficientDriver"), std::string::npos) << r.reason;
}

TEST(CudaProbe, NoDeviceAndNoCudaSkip) {
  const Probe none = classify_probe(kNoDevice, 0, "cudaErrorNoDevice", "no device");
  for (bool expected : {false, true}) {
    const GpuRequirement r = require_gpus(none, 1, expected);
    EXPECT_EQ(r.verdict, GpuVerdict::kSkip);
    EXPECT_EQ(r.reason, "needs 1 GPU(s), there are 0 (no CUDA device: cudaErrorNoDevice (no device))");
    const GpuRequirement b = require_gpus(Probe{}, 1, expected);
    EXPECT_EQ(b.verdict, GpuVerdict::kSkip);
    EXPECT_EQ(b.reason, "built without CUDA (--config=cuda)");
  }
}

}  // namespace
}  // namespace graft::cuda
