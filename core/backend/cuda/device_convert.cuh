// Element conversion in device code, shared by the kernels that convert while they copy
// (linalg's gathers, conv's rearranging): halves go through float, rounding to nearest even.
// Only included by .cu files.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
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

// graft::DType's numbering (checked with static_asserts by the host files that pass it).
enum DeviceType {
  kBool,
  kU8,
  kU32,
  kI32,
  kI64,
  kF16,
  kBF16,
  kF32,
  kF64,
  kC64,
  kC128,
  kI8,
  kI16,
  kU16,
  kU64,
  kF8E4M3FN,
  kF8E5M2,
};

// Calls fn(T{}) with the device type of `type` and returns true; false, calling nothing, for a
// type these kernels do not convert (bool, i8, i16, u16, u64, complex, fp8): the caller reports
// it, so no output is left unwritten without an error.
template <typename Fn>
bool dispatch_device_type(int type, Fn&& fn) {
  switch (type) {
    case kU8:
      return fn(uint8_t{}), true;
    case kU32:
      return fn(uint32_t{}), true;
    case kI32:
      return fn(int32_t{}), true;
    case kI64:
      return fn(int64_t{}), true;
    case kF16:
      return fn(__half{}), true;
    case kBF16:
      return fn(__nv_bfloat16{}), true;
    case kF32:
      return fn(float{}), true;
    case kF64:
      return fn(double{}), true;
    default:
      return false;
  }
}

}  // namespace graft::cuda
