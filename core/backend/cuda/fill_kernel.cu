// A minimal kernel that proves the nvcc -> Bazel path under --config=cuda.
namespace graft::cuda {

__global__ void fill_kernel(float* out, int n, float value) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = value;
}

void launch_fill(float* device_ptr, int n, float value) {
  fill_kernel<<<(n + 255) / 256, 256>>>(device_ptr, n, value);
}

}  // namespace graft::cuda
