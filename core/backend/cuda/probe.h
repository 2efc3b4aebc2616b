// What CUDA device discovery found, and what code that needs GPUs should make of it. Plain C++
// (no CUDA headers, built in every configuration), so the classification of
// cudaGetDeviceCount's answer is tested on machines without a GPU; device.h's probe() asks
// CUDA and classifies with classify_probe.
#pragma once

#include <string>

namespace graft::cuda {

enum class ProbeState {
  kReady,        // one or more devices
  kNoDevice,     // the driver answers and sees no device (cudaErrorNoDevice, or a count of 0)
  kDriverError,  // any other error: a driver too old for the runtime, failing to initialize,
                 // devices busy or unavailable, the stub library loaded instead of the driver
  kNotBuilt,     // graft was built without CUDA (--config=cuda)
};

struct Probe {
  ProbeState state = ProbeState::kNotBuilt;
  int count = 0;             // usable devices: 0 unless kReady
  int error = 0;             // the cudaError_t value (0: cudaSuccess)
  std::string error_name;    // "cudaErrorInsufficientDriver"
  std::string error_string;  // "CUDA driver version is insufficient for CUDA runtime version"
  std::string device_name;   // device 0's name when kReady

  // One line: device 0's name when ready, otherwise why there is no device, with the CUDA
  // error's name and string.
  std::string str() const;
};

// cudaErrorNoDevice's value (device.cc checks it against cuda_runtime_api.h).
inline constexpr int kCudaErrorNoDevice = 100;

// The state of cudaGetDeviceCount's answer: `error` its status, `count` the count it wrote
// (ignored on an error), `error_name` / `error_string` cudaGetErrorName / cudaGetErrorString
// of the status.
Probe classify_probe(int error, int count, std::string error_name, std::string error_string);

// Whether this environment says a GPU should be usable: GRAFT_EXPECT_GPU=1 (tools/gpu_check.sh
// sets it), or, with GRAFT_EXPECT_GPU unset or empty, an NVIDIA device node (/dev/nvidia0).
// GRAFT_EXPECT_GPU=0 says no GPU is expected.
bool gpu_expected();
// The same from its inputs: the variable's value (nullptr: unset) and whether the node exists.
bool gpu_expected(const char* expect_gpu_env, bool nvidia_device_node);

// What a test that needs `n` GPUs does.
enum class GpuVerdict { kRun, kSkip, kFail };
struct GpuRequirement {
  GpuVerdict verdict;
  std::string reason;  // why it skips or fails ("" when it runs)
};

// Run with n or more devices. Skip without CUDA, without a device or with fewer than n, and on
// a driver error where no GPU is expected (a machine without one). Fail on a driver error where
// a GPU is expected: there the GPU cases would otherwise all skip and the run look green.
// tools/gtest_summary.py reads the skip reasons ("needs N GPU(s), there are M (...)", "needs N
// GPU(s), none usable (...)"): keep their form.
GpuRequirement require_gpus(const Probe& probe, int n, bool expected);

}  // namespace graft::cuda
