#include "core/backend/cuda/device.h"

#ifdef GRAFT_CUDA
#include <cuda_runtime.h>
#endif

namespace graft::cuda {

int device_count() { return probe().count; }

std::string status() { return probe().str(); }

#ifdef GRAFT_CUDA
void launch_fill(float* device_ptr, int n, float value);  // fill_kernel.cu

static_assert(static_cast<int>(cudaErrorNoDevice) == kCudaErrorNoDevice,
              "probe.h's kCudaErrorNoDevice must be cuda_runtime_api.h's cudaErrorNoDevice");

const Probe& probe() {
  static const Probe p = [] {
    int n = 0;
    const cudaError_t err = cudaGetDeviceCount(&n);
    if (err != cudaSuccess) cudaGetLastError();  // clear the error for later calls
    Probe r = classify_probe(static_cast<int>(err), n, cudaGetErrorName(err),
                             cudaGetErrorString(err));
    cudaDeviceProp prop;
    if (r.state == ProbeState::kReady && cudaGetDeviceProperties(&prop, 0) == cudaSuccess) {
      r.device_name = prop.name;
    }
    return r;
  }();
  return p;
}

bool fill_on_device(float* host, int n, float value, std::string* error) {
  if (device_count() == 0) {
    *error = status();
    return false;
  }
  float* d = nullptr;
  cudaError_t err = cudaMalloc(&d, sizeof(float) * n);
  if (err == cudaSuccess) {
    launch_fill(d, n, value);
    err = cudaMemcpy(host, d, sizeof(float) * n, cudaMemcpyDeviceToHost);
    cudaFree(d);
  }
  if (err != cudaSuccess) {
    *error = std::string(cudaGetErrorName(err)) + ": " + cudaGetErrorString(err);
    return false;
  }
  return true;
}
#else
const Probe& probe() {
  static const Probe p;  // kNotBuilt
  return p;
}

bool fill_on_device(float*, int, float, std::string* error) {
  *error = status();
  return false;
}
#endif

}  // namespace graft::cuda
