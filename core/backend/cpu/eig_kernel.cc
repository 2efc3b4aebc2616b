// CPU kernel of eig (core/primitives/eig.h) through LAPACK's geev (s / d for real inputs,
// c / z for complex ones), one matrix of the leading batch at a time. The real geev gives real
// parts, imaginary parts and real eigenvector columns where a complex-conjugate pair
// (w_j, w_j+1) shares two columns: v_j = a + i b, v_j+1 = a - i b; this unpacks them to
// complex values. LAPACKE's complex types are std::complex in this translation unit.
#include <complex>

#define lapack_complex_float std::complex<float>
#define lapack_complex_double std::complex<double>
#include <lapacke.h>

#include <cstring>
#include <limits>
#include <vector>

#include "core/backend/cpu/kernel.h"
#include "core/primitives/eig.h"

namespace graft::cpu {
namespace {

lapack_int geev(char jobvr, lapack_int n, float* a, float* wr, float* wi, float* vr) {
  return LAPACKE_sgeev(LAPACK_ROW_MAJOR, 'N', jobvr, n, a, n, wr, wi, nullptr, 1, vr, n);
}
lapack_int geev(char jobvr, lapack_int n, double* a, double* wr, double* wi, double* vr) {
  return LAPACKE_dgeev(LAPACK_ROW_MAJOR, 'N', jobvr, n, a, n, wr, wi, nullptr, 1, vr, n);
}

lapack_int geev(char jobvr, lapack_int n, std::complex<float>* a, std::complex<float>* w,
                std::complex<float>* vr) {
  return LAPACKE_cgeev(LAPACK_ROW_MAJOR, 'N', jobvr, n, a, n, w, nullptr, 1, vr, n);
}
lapack_int geev(char jobvr, lapack_int n, std::complex<double>* a, std::complex<double>* w,
                std::complex<double>* vr) {
  return LAPACKE_zgeev(LAPACK_ROW_MAJOR, 'N', jobvr, n, a, n, w, nullptr, 1, vr, n);
}

// A complex input: geev gives complex values and vectors directly.
template <typename C>
void eig_complex_batch(Call& c, bool right) {
  using R = typename C::value_type;
  const Shape& s = c.in_aval(0).shape;
  const int64_t n = s.back(), nn = n * n, batch = n == 0 ? 0 : numel(s) / nn;
  const C* x = c.in<C>(0);
  C* w = c.out<C>(0);
  C* v = right ? c.out<C>(1) : nullptr;
  std::vector<C> a(nn), vr(right ? nn : 1);
  const R nan = std::numeric_limits<R>::quiet_NaN();
  for (int64_t b = 0; b < batch; ++b) {
    std::memcpy(a.data(), x + b * nn, sizeof(C) * nn);
    C* wb = w + b * n;
    const lapack_int info =
        geev(right ? 'V' : 'N', static_cast<lapack_int>(n), a.data(), wb, vr.data());
    if (info != 0) {
      for (int64_t i = 0; i < n; ++i) wb[i] = C(nan, nan);
      for (int64_t i = 0; right && i < nn; ++i) v[b * nn + i] = C(nan, nan);
    } else if (right) {
      std::memcpy(v + b * nn, vr.data(), sizeof(C) * nn);
    }
  }
}

template <typename R>
void eig_batch(Call& c, bool right) {
  using C = std::complex<R>;
  const Shape& s = c.in_aval(0).shape;
  const int64_t n = s.back(), nn = n * n, batch = n == 0 ? 0 : numel(s) / nn;
  const R* x = c.in<R>(0);
  C* w = c.out<C>(0);
  C* v = right ? c.out<C>(1) : nullptr;
  std::vector<R> a(nn), wr(n), wi(n), vr(right ? nn : 1);
  const R nan = std::numeric_limits<R>::quiet_NaN();
  for (int64_t b = 0; b < batch; ++b) {
    std::memcpy(a.data(), x + b * nn, sizeof(R) * nn);
    const lapack_int info = geev(right ? 'V' : 'N', static_cast<lapack_int>(n), a.data(), wr.data(),
                                 wi.data(), vr.data());
    C* wb = w + b * n;
    C* vb = right ? v + b * nn : nullptr;
    if (info != 0) {
      for (int64_t i = 0; i < n; ++i) wb[i] = C(nan, nan);
      for (int64_t i = 0; right && i < nn; ++i) vb[i] = C(nan, nan);
      continue;
    }
    for (int64_t j = 0; j < n; ++j) wb[j] = C(wr[j], wi[j]);
    if (!right) continue;
    for (int64_t j = 0; j < n; ++j) {
      if (wi[j] != 0 && j + 1 < n) {  // a conjugate pair in columns j, j + 1
        for (int64_t i = 0; i < n; ++i) {
          const R re = vr[i * n + j], im = vr[i * n + j + 1];
          vb[i * n + j] = C(re, im);
          vb[i * n + j + 1] = C(re, -im);
        }
        ++j;
      } else {
        for (int64_t i = 0; i < n; ++i) vb[i * n + j] = C(vr[i * n + j], 0);
      }
    }
  }
}

void eig_kernel(Call& c) {
  const bool right = c.params<Eig>().compute_right();
  switch (c.in_aval(0).dtype) {
    case DType::kF32:
      return eig_batch<float>(c, right);
    case DType::kC64:
      return eig_complex_batch<std::complex<float>>(c, right);
    case DType::kC128:
      return eig_complex_batch<std::complex<double>>(c, right);
    default:
      return eig_batch<double>(c, right);
  }
}

}  // namespace

void register_eig_kernels(KernelTable& table) { table[int(PrimitiveId::kEig)] = &eig_kernel; }

}  // namespace graft::cpu
