// The conv family's rearranging kernel (see conv_device.h): one thread per destination
// element, a grid-stride loop. Plain on purpose: it moves each operand once around a cuDNN
// convolution that dominates the time.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <type_traits>

#include "core/backend/cuda/conv/conv_device.h"
#include "core/backend/cuda/device_convert.cuh"

namespace graft::cuda::conv {
namespace {


template <typename S, typename D>
__global__ void arrange_kernel(const S* src, D* dst, int64_t n, Arrange a) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x) {
    int64_t rem = i, off = 0;
    bool inside = true;
    for (int d = a.rank - 1; d >= 0; --d) {
      const int64_t pos = rem % a.shape[d] - a.lo[d];
      rem /= a.shape[d];
      if (pos < 0 || pos % a.dil[d] != 0 || pos / a.dil[d] >= a.extent[d]) {
        inside = false;
      } else {
        off += pos / a.dil[d] * a.stride[d];
      }
    }
    dst[i] = inside ? convert<D>(src[off]) : convert<D>(0.0f);
  }
}


}  // namespace

bool arrange(const void* src, int src_type, void* dst, int dst_type, const Arrange& a,
             cudaStream_t stream) {
  int64_t n = 1;
  for (int d = 0; d < a.rank; ++d) n *= a.shape[d];
  const int threads = 256;
  const int64_t blocks = (n + threads - 1) / threads;
  bool both = false;
  dispatch_device_type(src_type, [&](auto s) {
    both = dispatch_device_type(dst_type, [&](auto d) {
      using S = decltype(s);
      using D = decltype(d);
      if (n == 0) return;
      arrange_kernel<S, D><<<static_cast<unsigned>(blocks < 65536 ? blocks : 65536), threads, 0,
                             stream>>>(static_cast<const S*>(src), static_cast<D*>(dst), n, a);
    });
  });
  return both;
}

}  // namespace graft::cuda::conv
