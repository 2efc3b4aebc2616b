// Element conversion in device code, shared by the kernels that convert while they copy
// (linalg's gathers, conv's rearranging): halves go through float, rounding to nearest even.
// Only included by .cu files.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <type_traits>

namespace graft::cuda {

template <typename T>
__device__ constexpr bool is_half() {
  return std::is_same_v<T, __half> || std::is_same_v<T, __nv_bfloat16>;
}

template <typename D, typename S>
__device__ D convert(S v) {
  if constexpr (std::is_same_v<D, S>) {
    return v;
  } else if constexpr (is_half<S>()) {
    return convert<D>(static_cast<float>(v));
  } else if constexpr (std::is_same_v<D, __half>) {
    return __float2half_rn(static_cast<float>(v));
  } else if constexpr (std::is_same_v<D, __nv_bfloat16>) {
    return __float2bfloat16_rn(static_cast<float>(v));
  } else {
    return static_cast<D>(v);
  }
}

}  // namespace graft::cuda
