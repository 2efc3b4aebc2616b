// CPU kernels of real, imag, complex and conj (core/primitives/complex.h): plain loops over
// std::complex, split across the thread pool.
#include <complex>

#include "core/backend/cpu/kernel.h"
#include "core/backend/cpu/parallel.h"
#include "core/primitives/complex.h"

namespace graft::cpu {
namespace {

constexpr int64_t kGrain = 1 << 14;

template <typename F>
void over_elements(Call& c, F f) {
  parallel_for(numel(c.out_aval().shape), kGrain, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) f(i);
  });
}

// Real / imag / conj: one complex operand.
template <int kPart>  // 0 real, 1 imag, 2 conj
void part_kernel(Call& c) {
  dispatch_complex(c.in_aval(0).dtype, [&]<typename C>() {
    using R = typename C::value_type;
    const C* x = c.in<C>(0);
    if constexpr (kPart == 2) {
      C* y = c.out<C>();
      over_elements(c, [&](int64_t i) { y[i] = std::conj(x[i]); });
    } else {
      R* y = c.out<R>();
      over_elements(c, [&](int64_t i) { y[i] = kPart == 0 ? x[i].real() : x[i].imag(); });
    }
  });
}

void complex_kernel(Call& c) {
  dispatch_complex(c.out_aval().dtype, [&]<typename C>() {
    using R = typename C::value_type;
    const R* re = c.in<R>(0);
    const R* im = c.in<R>(1);
    C* y = c.out<C>();
    over_elements(c, [&](int64_t i) { y[i] = C(re[i], im[i]); });
  });
}

}  // namespace

void register_complex_kernels(KernelTable& table) {
  table[int(PrimitiveId::kReal)] = &part_kernel<0>;
  table[int(PrimitiveId::kImag)] = &part_kernel<1>;
  table[int(PrimitiveId::kConj)] = &part_kernel<2>;
  table[int(PrimitiveId::kComplex)] = &complex_kernel;
}

}  // namespace graft::cpu
