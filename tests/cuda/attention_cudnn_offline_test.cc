// cuDNN's fused attention graphs (core/backend/cuda/attention/cudnn_sdpa_graph.h) checked
// without a GPU: cuDNN plans for a device described by its device-property JSON (an H200).
// Without a driver, cuDNN's runtime-compiled engines stop where they load their kernels;
// loading the toolkit's libcuda stub lets them get that far, i.e. through cuDNN's support
// checks, kernel generation and compilation. With a GPU the plans must finalize outright.
// A separate binary: the stub, once loaded, is the process's libcuda.
#include "gtest/gtest.h"

#ifndef GRAFT_CUDA
TEST(CudnnSdpaOffline, BuiltWithoutCuda) { GTEST_SKIP() << "built without CUDA (--config=cuda)"; }
#else

#include <dlfcn.h>

#include <string>

#include "core/backend/cuda/attention/cudnn_sdpa.h"
#include "core/backend/cuda/device.h"

namespace graft::cuda::attention {
namespace {

// An H200 as cuDNN's device-property JSON (the fields cudnn-frontend's DeviceProperties
// serializes).
const char* kH200 =
    R"({"maxGridSize":[2147483647,65535,65535],"maxBlockSize":[1024,1024,64],)"
    R"("regsPerBlock":65536,"multiProcessorCount":132,"warpSize":32,)"
    R"("maxSharedMemoryPerBlock":49152,"maxSharedMemoryPerBlockOptin":232448,)"
    R"("reservedSharedMemoryPerBlock":1024,"maxRegistersPerSM":65536,"maxCtasPerSM":32,)"
    R"("maxThreadsPerBlock":1024,"maxThreadsPerSM":2048,"pciDeviceId":0,"isTccDriver":0,)"
    R"("supportCoopLaunch":1,"totalGlobalMem":150754820096,"smClockRateKHz":1980000,)"
    R"("memClockRateKHz":3201000,"l2CacheSize":62914560,"cudaDeviceId":0,"deviceVer":900,)"
    R"("driverVer":13000,"deviceName":"NVIDIA H200"})";

// Without a GPU, loads the toolkit's libcuda stub (soname libcuda.so.1, which cuDNN opens).
bool driver_or_stub() {
  if (device_count() > 0) return true;
  return dlopen("/usr/local/cuda/lib64/stubs/libcuda.so", RTLD_NOW | RTLD_GLOBAL) != nullptr;
}

std::string label(const SdpaShape& s, bool backward) {
  return std::string(backward ? "backward" : "forward") +
         (s.type == SdpaType::kF16 ? " f16" : " bf16") + " B" + std::to_string(s.B) + " T" +
         std::to_string(s.T) + " H" + std::to_string(s.H) + " S" + std::to_string(s.S) + " KV" +
         std::to_string(s.KV) + " D" + std::to_string(s.D);
}

TEST(CudnnSdpaOffline, H200AcceptsTheGraphs) {
  if (!driver_or_stub()) GTEST_SKIP() << "neither a GPU nor /usr/local/cuda/lib64/stubs/libcuda.so";
  const bool gpu = device_count() > 0;
  const SdpaShape shapes[] = {
      {2, 128, 8, 128, 8, 64, SdpaType::kF16},    // MHA, T == S
      {2, 100, 8, 160, 2, 128, SdpaType::kBF16},  // GQA, T < S, D = 128
      {1, 1, 4, 77, 1, 64, SdpaType::kF16},       // MQA, one query
  };
  for (const SdpaShape& s : shapes) {
    for (bool backward : {false, true}) {
      const SdpaOfflineCheck r = sdpa_check_offline(s, backward, kH200, 90);
      EXPECT_GT(r.engine_configs, 0) << label(s, backward) << ": " << r.why;
      if (gpu) {
        EXPECT_TRUE(r.planned) << label(s, backward) << ": " << r.why;
      } else {
        EXPECT_TRUE(r.compiled) << label(s, backward) << ": " << r.why;
      }
    }
  }
}

TEST(CudnnSdpaOffline, PreCheck) {
  EXPECT_EQ(sdpa_unsupported_reason({1, 4, 2, 8, 1, 64, SdpaType::kF16}, true, 90), "");
  EXPECT_NE(sdpa_unsupported_reason({1, 4, 2, 8, 1, 13, SdpaType::kF16}, false, 90), "");
  EXPECT_NE(sdpa_unsupported_reason({1, 4, 2, 8, 1, 256, SdpaType::kF16}, true, 80), "");
  EXPECT_NE(sdpa_unsupported_reason({1, 1, 2, 1, 1, 64, SdpaType::kF16}, true, 90), "");
  EXPECT_NE(sdpa_unsupported_reason({1, 4, 2, 8, 1, 64, SdpaType::kF16}, false, 75), "");
  // What cuDNN itself refuses is found at plan time: a head_dim past the pre-check's limit
  // never reaches it.
  EXPECT_NE(sdpa_check_offline({1, 4, 2, 8, 1, 264, SdpaType::kF16}, false, kH200, 90).why, "");
}

}  // namespace
}  // namespace graft::cuda::attention

#endif  // GRAFT_CUDA
