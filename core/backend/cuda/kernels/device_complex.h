// graft's c64 / c128 elements as the CUDA kernels see them: two reals, real part first, the
// memory layout of std::complex<float> / <double> (and of cuComplex / cuDoubleComplex), with
// the alignment of one whole element so a kernel loads it in one access. Plain C++ (host and
// device); no arithmetic: graft's complex arithmetic runs through the parts (core/ops).
#pragma once

#include <complex>
#include <type_traits>

#include "core/dtype/dtype.h"

namespace graft::cuda {

template <typename R>
struct alignas(2 * sizeof(R)) DeviceComplex {
  R re, im;
};
static_assert(sizeof(DeviceComplex<float>) == sizeof(std::complex<float>));
static_assert(sizeof(DeviceComplex<double>) == sizeof(std::complex<double>));

// Calls fn.template operator()<DeviceComplex<R>>() for c64 (R float) or c128 (R double); any
// other dtype is graft::Error (core/dtype/dtype.h's dispatch_complex).
template <typename Fn>
decltype(auto) dispatch_device_complex(DType d, Fn&& fn) {
  return dispatch_complex(d, [&]<typename C>() {
    return fn.template operator()<DeviceComplex<typename C::value_type>>();
  });
}

}  // namespace graft::cuda
