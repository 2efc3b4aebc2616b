#include "core/backend/cuda/probe.h"

#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <utility>

namespace graft::cuda {

std::string Probe::str() const {
  const std::string error_text = error_name + " (" + error_string + ")";
  switch (state) {
    case ProbeState::kReady:
      return device_name.empty() ? std::to_string(count) + " CUDA device(s)" : device_name;
    case ProbeState::kNoDevice:
      return error == 0 ? "no CUDA device" : "no CUDA device: " + error_text;
    case ProbeState::kDriverError:
      return "CUDA driver error, no GPU usable: " + error_text;
    case ProbeState::kNotBuilt:
      break;
  }
  return "graft was built without CUDA (use --config=cuda)";
}

Probe classify_probe(int error, int count, std::string error_name, std::string error_string) {
  Probe p;
  p.error = error;
  p.error_name = std::move(error_name);
  p.error_string = std::move(error_string);
  if (error == 0) {
    p.state = count > 0 ? ProbeState::kReady : ProbeState::kNoDevice;
    p.count = count > 0 ? count : 0;
  } else {
    p.state = error == kCudaErrorNoDevice ? ProbeState::kNoDevice : ProbeState::kDriverError;
  }
  return p;
}

bool gpu_expected(const char* expect_gpu_env, bool nvidia_device_node) {
  if (expect_gpu_env != nullptr && *expect_gpu_env != '\0') {
    return std::strcmp(expect_gpu_env, "0") != 0;
  }
  return nvidia_device_node;
}

bool gpu_expected() {
  return gpu_expected(std::getenv("GRAFT_EXPECT_GPU"), access("/dev/nvidia0", F_OK) == 0);
}

GpuRequirement require_gpus(const Probe& probe, int n, bool expected) {
  const std::string needs = "needs " + std::to_string(n) + " GPU(s)";
  switch (probe.state) {
    case ProbeState::kNotBuilt:
      return {GpuVerdict::kSkip, "built without CUDA (--config=cuda)"};
    case ProbeState::kDriverError:
      if (expected) {
        return {GpuVerdict::kFail,
                needs + " and a GPU is expected here (GRAFT_EXPECT_GPU=1 or /dev/nvidia0), but " +
                    probe.str()};
      }
      return {GpuVerdict::kSkip, needs + ", none usable (" + probe.str() + ")"};
    case ProbeState::kNoDevice:
    case ProbeState::kReady:
      break;
  }
  if (probe.count >= n) return {GpuVerdict::kRun, ""};
  return {GpuVerdict::kSkip,
          needs + ", there are " + std::to_string(probe.count) + " (" + probe.str() + ")"};
}

}  // namespace graft::cuda
