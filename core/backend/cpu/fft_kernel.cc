// CPU kernel of lax.fft (core/primitives/fft.h) through PocketFFT, the library JAX's CPU
// backend uses; the one translation unit that includes it. The transformed dims are the
// trailing ones, row-major and contiguous; PocketFFT loops over the leading (batch) dims.
#include <complex>
#include <cstring>
#include <vector>

#include "core/backend/cpu/kernel.h"
#include "core/primitives/fft.h"
#include "pocketfft_hdronly.h"

namespace graft::cpu {
namespace {

pocketfft::shape_t to_shape(const Shape& s) { return pocketfft::shape_t(s.begin(), s.end()); }

// Row-major strides in bytes of `s` for elements of `bytes` each.
pocketfft::stride_t byte_strides(const Shape& s, size_t bytes) {
  pocketfft::stride_t st(s.size());
  ptrdiff_t acc = static_cast<ptrdiff_t>(bytes);
  for (size_t d = s.size(); d-- > 0;) {
    st[d] = acc;
    acc *= static_cast<ptrdiff_t>(s[d]);
  }
  return st;
}

void fft_kernel(Call& c) {
  const auto& p = c.params<Fft>();
  const Shape &in = c.in_aval(0).shape, &out = c.out_aval().shape;
  const size_t rank = in.size(), k = p.lengths().size();
  pocketfft::shape_t axes;
  for (size_t d = rank - k; d < rank; ++d) axes.push_back(d);
  double count = 1;
  for (int64_t l : p.lengths()) count *= static_cast<double>(l);
  const bool inverse = p.type() == FftType::kIfft || p.type() == FftType::kIrfft;
  const DType cd = p.type() == FftType::kRfft ? c.out_aval().dtype : c.in_aval(0).dtype;
  if (numel(in) == 0) {  // rfft of length 0: one bin per signal, an empty sum (PocketFFT skips it)
    std::memset(c.out<char>(), 0, numel(out) * dtype_size(c.out_aval().dtype));
    return;
  }
  dispatch_complex(cd, [&]<typename C>() {
    using R = typename C::value_type;
    const R scale = inverse && count > 0 ? R(1.0 / count) : R(1);
    const auto si = byte_strides(in, p.type() == FftType::kRfft ? sizeof(R) : sizeof(C));
    const auto so = byte_strides(out, p.type() == FftType::kIrfft ? sizeof(R) : sizeof(C));
    switch (p.type()) {
      case FftType::kFft:
      case FftType::kIfft:
        pocketfft::c2c(to_shape(in), si, so, axes, !inverse, c.in<C>(0), c.out<C>(), scale);
        break;
      case FftType::kRfft:
        pocketfft::r2c(to_shape(in), si, so, axes, true, c.in<R>(0), c.out<C>(), scale);
        break;
      case FftType::kIrfft:
        pocketfft::c2r(to_shape(out), si, so, axes, false, c.in<C>(0), c.out<R>(), scale);
        break;
    }
  });
}

}  // namespace

void register_fft_kernels(KernelTable& table) { table[int(PrimitiveId::kFft)] = &fft_kernel; }

}  // namespace graft::cpu
