#include "core/backend/cuda/device.h"

#ifdef GRAFT_CUDA
#include <cuda_runtime.h>
#endif

namespace graft::cuda {

#ifdef GRAFT_CUDA
void launch_fill(float* device_ptr, int n, float value);  // fill_kernel.cu

int device_count() {
  int n = 0;
  // "CUDA driver version is insufficient" and "no device" both mean: no GPU, use the CPU.
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError();  // clear the sticky error
    return 0;
  }
  return n;
}

std::string status() {
  int n = 0;
  cudaError_t err = cudaGetDeviceCount(&n);
  if (err != cudaSuccess) {
    cudaGetLastError();
    return std::string("no CUDA device: ") + cudaGetErrorString(err);
  }
  if (n == 0) return "no CUDA device";
  cudaDeviceProp prop;
  cudaGetDeviceProperties(&prop, 0);
  return std::string(prop.name);
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
    *error = cudaGetErrorString(err);
    return false;
  }
  return true;
}
#else
int device_count() { return 0; }
std::string status() { return "graft was built without CUDA (use --config=cuda)"; }
bool fill_on_device(float*, int, float, std::string* error) {
  *error = status();
  return false;
}
#endif

}  // namespace graft::cuda
