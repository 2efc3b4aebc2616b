// launch_convert and launch_select (elementwise.h). A conversion is one small map kernel per
// (from, to) pair (72 real ones, each a few instructions, the 40 with an fp8 side, and those to,
// from and between c64 / c128); a select moves raw elements, so it has one kernel per element
// width (1 to 16 bytes).
#include <cuda/std/limits>

#include "core/backend/cuda/kernels/device_complex.h"
#include "core/backend/cuda/kernels/elementwise.h"
#include "core/backend/cuda/kernels/elementwise_device.h"
#include "core/error.h"

namespace graft::cuda {
namespace {

template <typename T>
inline constexpr bool kIsFloat8 = std::is_same_v<T, f8_e4m3fn> || std::is_same_v<T, f8_e5m2>;

// core/dtype/convert.h's convert_value on the device; fp8 through core/dtype/float8.h's bit
// conversions, shared with the CPU (from f32 / f64 in one rounding, to anything through f32).
template <typename S, typename D>
__device__ __forceinline__ D convert_one(S v) {
  if constexpr (kIsFloat8<S>) {
    return convert_one<float, D>(static_cast<float>(v));
  } else if constexpr (kIsFloat8<D>) {
    if constexpr (ew::kIsHalf<S>) {
      return D(ew::widen(v));
    } else {
      return D(static_cast<double>(v));
    }
  } else if constexpr (ew::kIsHalf<S>) {
    return convert_one<float, D>(ew::widen(v));
  } else if constexpr (ew::kIsHalf<D>) {
    return ew::narrow<D>(static_cast<float>(v));  // f64 rounds through f32, as the CPU
  } else if constexpr (std::is_same_v<D, bool>) {
    return v != S(0);
  } else if constexpr (std::is_floating_point_v<S> && std::is_integral_v<D>) {
    constexpr D kLo = ::cuda::std::numeric_limits<D>::min();
    constexpr D kHi = ::cuda::std::numeric_limits<D>::max();
    if (v != v) return D(0);
    if (v <= static_cast<S>(kLo)) return kLo;
    if (v >= static_cast<S>(kHi)) return kHi;
    return static_cast<D>(v);
  } else {
    return static_cast<D>(v);
  }
}

template <typename S, typename D>
struct ConvertFn {
  __device__ D operator()(S v) const { return convert_one<S, D>(v); }
};

// Conversions to or from c64 / c128, as XLA's (and the CPU's): a real value becomes (x, 0);
// a complex value converted to a real dtype keeps its real part, to bool is true where either
// part is nonzero.
template <typename S, typename C>
struct ToComplexFn {
  __device__ C operator()(S v) const {
    using R = decltype(C::re);
    return C{convert_one<S, R>(v), R(0)};
  }
};
template <typename C, typename D>
struct FromComplexFn {
  __device__ D operator()(C v) const {
    if constexpr (std::is_same_v<D, bool>) {
      return v.re != 0 || v.im != 0;  // either part nonzero, as the CPU's
    } else {
      return convert_one<decltype(C::re), D>(v.re);
    }
  }
};
template <typename C, typename D>
struct ComplexToComplexFn {
  __device__ D operator()(C v) const {
    using R = decltype(D::re);
    return D{static_cast<R>(v.re), static_cast<R>(v.im)};
  }
};

void convert_complex(DType from, DType to, const void* x, void* y, int64_t n,
                     cudaStream_t stream) {
  if (!is_complex(from)) {
    return dispatch_dtype(from, [&]<typename S>() {
      dispatch_device_complex(to, [&]<typename C>() {
        ew::launch_map(n, stream, ToComplexFn<S, C>{}, static_cast<C*>(y),
                       static_cast<const S*>(x));
      });
    });
  }
  dispatch_device_complex(from, [&]<typename C>() {
    if (is_complex(to)) {
      dispatch_device_complex(to, [&]<typename D>() {
        ew::launch_map(n, stream, ComplexToComplexFn<C, D>{}, static_cast<D*>(y),
                       static_cast<const C*>(x));
      });
    } else {
      dispatch_dtype(to, [&]<typename D>() {
        ew::launch_map(n, stream, FromComplexFn<C, D>{}, static_cast<D*>(y),
                       static_cast<const C*>(x));
      });
    }
  });
}

// Select moves elements of 16 bytes (c128) as one aligned word.
struct alignas(16) Word16 {
  uint64_t lo, hi;
};

template <typename U>
struct SelectFn {
  __device__ U operator()(bool p, U on_false, U on_true) const { return p ? on_true : on_false; }
};

}  // namespace

void launch_convert(DType from, DType to, const void* x, void* y, int64_t n, cudaStream_t stream) {
  if (n <= 0) return;
  if (from == to) {
    if (x != y) {
      check(cudaMemcpyAsync(y, x, static_cast<size_t>(n) * dtype_size(from),
                            cudaMemcpyDeviceToDevice, stream),
            "cudaMemcpyAsync (convert_element_type to the same dtype)");
    }
    return;
  }
  if (is_float8(from) || is_float8(to)) {  // only the pairs with an fp8 side instantiate here
    return dispatch_real_or_float8(from, [&]<typename S>() {
      dispatch_real_or_float8(to, [&]<typename D>() {
        if constexpr (!std::is_same_v<S, D> && (kIsFloat8<S> || kIsFloat8<D>)) {
          ew::launch_map(n, stream, ConvertFn<S, D>{}, static_cast<D*>(y),
                         static_cast<const S*>(x));
        }
      });
    });
  }
  if (is_complex(from) || is_complex(to)) return convert_complex(from, to, x, y, n, stream);
  dispatch_dtype(from, [&]<typename S>() {
    dispatch_dtype(to, [&]<typename D>() {
      if constexpr (!std::is_same_v<S, D>) {
        ew::launch_map(n, stream, ConvertFn<S, D>{}, static_cast<D*>(y), static_cast<const S*>(x));
      }
    });
  });
}

void launch_select(DType dtype, const bool* pred, const void* on_false, const void* on_true,
                   void* y, int64_t n, cudaStream_t stream) {
  if (n <= 0) return;
  auto run = [&]<typename U>() {
    ew::launch_map(n, stream, SelectFn<U>{}, static_cast<U*>(y), pred,
                   static_cast<const U*>(on_false), static_cast<const U*>(on_true));
  };
  switch (dtype_size(dtype)) {
    case 1:
      return run.template operator()<uint8_t>();
    case 2:
      return run.template operator()<uint16_t>();
    case 4:
      return run.template operator()<uint32_t>();
    case 8:
      return run.template operator()<uint64_t>();
    case 16:
      return run.template operator()<Word16>();
    default:
      graft::fail("select_n", "has no CUDA kernel for ", dtype_name(dtype));
  }
}

}  // namespace graft::cuda
