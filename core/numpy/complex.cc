#include "core/numpy/complex.h"

#include "core/numpy/numpy.h"
#include "core/lax/util.h"
#include "core/primitives/complex.h"

namespace graft {

Array angle(const Array& z, bool deg) {
  detail::check_valid("angle", z);
  Array re = real(z), im = imag(z);
  if (!is_inexact(z.dtype()) || (z.ndim() == 0 && !is_complex(z.dtype()))) {
    re = astype(re, DType::kF32);
    im = astype(im, DType::kF32);
  }
  Array result = arctan2(im, re);
  return deg ? degrees(result) : result;
}

Array iscomplex(const Array& x) { return imag(x) != 0; }

Array isreal(const Array& x) { return imag(x) == 0; }

bool iscomplexobj(const Array& x) {
  detail::check_valid("iscomplexobj", x);
  return is_complex(x.dtype());
}

bool isrealobj(const Array& x) { return !iscomplexobj(x); }

Array sort_complex(const Array& a) {
  detail::check_valid("sort_complex", a);
  if (a.ndim() == 0) fail("sort_complex", "needs an array of rank >= 1, got ", a.aval().str());
  Array z = is_complex(a.dtype()) ? a : astype(a, complex_dtype_for(a.dtype()));
  // Lexicographic (real, imag) order: a stable sort by imag, then a stable one by real (sort
  // and argsort are stable), moving the parts separately (gather takes real values only).
  Array re = real(z), im = imag(z);
  Array i1 = argsort(im, -1);
  re = take_along_axis(re, i1, -1);
  im = take_along_axis(im, i1, -1);
  Array i2 = argsort(re, -1);
  return complex(take_along_axis(re, i2, -1), take_along_axis(im, i2, -1));
}

}  // namespace graft
