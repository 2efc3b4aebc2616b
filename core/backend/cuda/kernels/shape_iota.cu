// iota on the GPU (launch_iota in shape_launch.h): out[i] = (i / inner) % len converted to the
// dtype as the CPU's static_cast (integers wrap; f16/bf16 go through f32, rounding to nearest
// even, as graft's f16/bf16 constructors do).
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>

#include "core/backend/cuda/kernels/shape_launch.h"
#include "core/backend/cuda/runtime/check.h"
#include "core/error.h"

namespace graft::cuda {
namespace {

constexpr int kThreads = 256;

// Storage type S holds the dtype's bits; convert() gives them for a value.
template <typename T>
struct Conv {
  using S = T;
  __device__ static S convert(int64_t v) { return static_cast<T>(v); }
};
template <>
struct Conv<__half> {
  using S = uint16_t;
  __device__ static S convert(int64_t v) {
    return __half_as_ushort(__float2half_rn(static_cast<float>(v)));
  }
};
template <>
struct Conv<__nv_bfloat16> {
  using S = uint16_t;
  __device__ static S convert(int64_t v) {
    return __bfloat16_as_ushort(__float2bfloat16_rn(static_cast<float>(v)));
  }
};

template <typename T, typename I>
__global__ void __launch_bounds__(kThreads)
    iota_kernel(typename Conv<T>::S* out, I total, I inner, I len) {
  const I step = static_cast<I>(gridDim.x) * blockDim.x;
  for (I i = static_cast<I>(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += step) {
    out[i] = Conv<T>::convert(static_cast<int64_t>((i / inner) % len));
  }
}

template <typename T>
void launch(void* out, int64_t total, int64_t inner, int64_t len, cudaStream_t stream) {
  using S = typename Conv<T>::S;
  const int blocks =
      static_cast<int>(std::clamp<int64_t>((total + kThreads - 1) / kThreads, 1, 8192));
  if (total < (int64_t{1} << 31)) {
    iota_kernel<T, uint32_t><<<blocks, kThreads, 0, stream>>>(
        static_cast<S*>(out), static_cast<uint32_t>(total), static_cast<uint32_t>(inner),
        static_cast<uint32_t>(len));
  } else {
    iota_kernel<T, int64_t><<<blocks, kThreads, 0, stream>>>(static_cast<S*>(out), total, inner,
                                                            len);
  }
  check(cudaGetLastError(), "iota kernel");
}

}  // namespace

void launch_iota(DType dtype, const Shape& shape, int dimension, void* out, cudaStream_t stream) {
  const int64_t total = numel(shape);
  if (total == 0) return;
  const int64_t inner = row_major_strides(shape)[dimension];
  const int64_t len = shape[dimension];
  switch (dtype) {
    case DType::kU8:
      return launch<uint8_t>(out, total, inner, len, stream);
    case DType::kI8:
      return launch<int8_t>(out, total, inner, len, stream);
    case DType::kI16:
      return launch<int16_t>(out, total, inner, len, stream);
    case DType::kU16:
      return launch<uint16_t>(out, total, inner, len, stream);
    case DType::kU64:
      return launch<uint64_t>(out, total, inner, len, stream);
    case DType::kC64:
    case DType::kC128:
      break;
    case DType::kU32:
      return launch<uint32_t>(out, total, inner, len, stream);
    case DType::kI32:
      return launch<int32_t>(out, total, inner, len, stream);
    case DType::kI64:
      return launch<int64_t>(out, total, inner, len, stream);
    case DType::kF16:
      return launch<__half>(out, total, inner, len, stream);
    case DType::kBF16:
      return launch<__nv_bfloat16>(out, total, inner, len, stream);
    case DType::kF32:
      return launch<float>(out, total, inner, len, stream);
    case DType::kF64:
      return launch<double>(out, total, inner, len, stream);
    case DType::kBool:
      break;
  }
  graft::fail("iota", "needs a numeric dtype, got ", dtype_name(dtype));
}

}  // namespace graft::cuda
