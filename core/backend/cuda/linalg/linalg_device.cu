// Device kernels of the linalg family (see linalg_device.h). Kept deliberately plain: they
// only run for layouts and dtypes cuBLASLt cannot take, so simplicity beats speed here.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <type_traits>

#include "core/backend/cuda/device_convert.cuh"
#include "core/backend/cuda/linalg/linalg_device.h"

namespace graft::cuda::linalg {
namespace {


struct GatherDims {
  int64_t shape[kMaxGatherRank];
  int64_t strides[kMaxGatherRank];
  int rank;
};

template <typename S, typename D>
__global__ void gather_kernel(const S* src, D* dst, int64_t n, GatherDims dims) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x) {
    int64_t rem = i, off = 0;
    for (int d = dims.rank - 1; d >= 0; --d) {
      off += (rem % dims.shape[d]) * dims.strides[d];
      rem /= dims.shape[d];
    }
    dst[i] = convert<D>(src[off]);
  }
}


// Same-type copies only move bytes: one instantiation per element size; false for c128 (no
// 16-byte word here).
template <typename Fn>
bool dispatch_bits(int type, Fn&& fn) {
  switch (type) {
    case kBool:
    case kU8:
    case kI8:
    case kF8E4M3FN:
    case kF8E5M2:
      return fn(uint8_t{}), true;
    case kF16:
    case kBF16:
    case kI16:
    case kU16:
      return fn(uint16_t{}), true;
    case kU32:
    case kI32:
    case kF32:
      return fn(uint32_t{}), true;
    case kI64:
    case kU64:
    case kF64:
    case kC64:
      return fn(uint64_t{}), true;
    default:
      return false;
  }
}

template <typename S, typename D>
void launch_gather(const void* src, void* dst, int64_t n, const GatherDims& dims,
                   cudaStream_t stream) {
  const int threads = 256;
  const int64_t blocks = (n + threads - 1) / threads;
  gather_kernel<S, D><<<static_cast<unsigned>(blocks < 65536 ? blocks : 65536), threads, 0,
                        stream>>>(static_cast<const S*>(src), static_cast<D*>(dst), n, dims);
}

// One thread per output element, k-loop in unsigned arithmetic (wraps, no UB).
template <typename U, typename T>
__global__ void integer_gemm_kernel(const T* a, const T* b, T* c, int64_t batch, int64_t m,
                                    int64_t k, int64_t n) {
  const int64_t total = batch * m * n;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < total;
       i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t j = i % n, row = i / n, bi = row / m;
    const T* ar = a + row * k;
    const T* bc = b + bi * k * n + j;
    U acc = 0;
    for (int64_t p = 0; p < k; ++p) acc = U(acc + U(ar[p]) * U(bc[p * n]));
    c[i] = T(acc);
  }
}

template <typename U, typename T>
void launch_integer_gemm(int64_t batch, int64_t m, int64_t k, int64_t n, const void* a,
                         const void* b, void* c, cudaStream_t stream) {
  const int threads = 256;
  const int64_t blocks = (batch * m * n + threads - 1) / threads;
  integer_gemm_kernel<U, T><<<static_cast<unsigned>(blocks < 65536 ? blocks : 65536), threads, 0,
                              stream>>>(static_cast<const T*>(a), static_cast<const T*>(b),
                                        static_cast<T*>(c), batch, m, k, n);
}

}  // namespace

bool gather_convert(const void* src, int src_type, void* dst, int dst_type, int rank,
                    const int64_t* shape, const int64_t* src_strides, cudaStream_t stream) {
  GatherDims dims{};
  dims.rank = rank;
  int64_t n = 1;
  for (int d = 0; d < rank; ++d) {
    dims.shape[d] = shape[d];
    dims.strides[d] = src_strides[d];
    n *= shape[d];
  }
  if (src_type == dst_type) {
    return dispatch_bits(src_type, [&](auto t) {
      using T = decltype(t);
      if (n > 0) launch_gather<T, T>(src, dst, n, dims, stream);
    });
  }
  bool both = false;
  dispatch_device_type(src_type, [&](auto s) {
    both = dispatch_device_type(dst_type, [&](auto d) {
      if (n > 0) launch_gather<decltype(s), decltype(d)>(src, dst, n, dims, stream);
    });
  });
  return both;
}

bool integer_gemm(int type, int64_t batch, int64_t m, int64_t k, int64_t n, const void* a,
                  const void* b, void* c, cudaStream_t stream) {
  auto run = [&]<typename U, typename T>() {
    if (batch * m * n > 0) launch_integer_gemm<U, T>(batch, m, k, n, a, b, c, stream);
    return true;
  };
  switch (type) {
    case kU8:
      return run.template operator()<uint32_t, uint8_t>();
    case kU32:
      return run.template operator()<uint32_t, uint32_t>();
    case kI32:
      return run.template operator()<uint32_t, int32_t>();
    case kI64:
      return run.template operator()<uint64_t, int64_t>();
    default:
      return false;
  }
}

}  // namespace graft::cuda::linalg
