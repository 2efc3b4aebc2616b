// launch_complex_part and launch_make_complex (complex.h): one small map kernel per part and
// precision.
#include "core/backend/cuda/kernels/complex.h"
#include "core/backend/cuda/kernels/device_complex.h"
#include "core/backend/cuda/kernels/elementwise_device.h"

namespace graft::cuda {
namespace {

template <typename C>
struct RealFn {
  __device__ auto operator()(C v) const { return v.re; }
};
template <typename C>
struct ImagFn {
  __device__ auto operator()(C v) const { return v.im; }
};
template <typename C>
struct ConjFn {
  __device__ C operator()(C v) const { return C{v.re, -v.im}; }
};
template <typename C, typename R>
struct MakeFn {
  __device__ C operator()(R re, R im) const { return C{re, im}; }
};

}  // namespace

void launch_complex_part(ComplexPart part, DType dtype, const void* x, void* y, int64_t n,
                         cudaStream_t stream) {
  if (n <= 0) return;
  dispatch_device_complex(dtype, [&]<typename C>() {
    using R = decltype(C::re);
    const C* in = static_cast<const C*>(x);
    switch (part) {
      case ComplexPart::kReal:
        return ew::launch_map(n, stream, RealFn<C>{}, static_cast<R*>(y), in);
      case ComplexPart::kImag:
        return ew::launch_map(n, stream, ImagFn<C>{}, static_cast<R*>(y), in);
      case ComplexPart::kConj:
        return ew::launch_map(n, stream, ConjFn<C>{}, static_cast<C*>(y), in);
    }
  });
}

void launch_make_complex(DType dtype, const void* re, const void* im, void* y, int64_t n,
                         cudaStream_t stream) {
  if (n <= 0) return;
  dispatch_device_complex(dtype, [&]<typename C>() {
    using R = decltype(C::re);
    ew::launch_map(n, stream, MakeFn<C, R>{}, static_cast<C*>(y), static_cast<const R*>(re),
                   static_cast<const R*>(im));
  });
}

}  // namespace graft::cuda
