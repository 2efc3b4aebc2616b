#include "core/ops_numpy_complex.h"

#include "core/ops.h"
#include "core/ops_util.h"

namespace graft {

Array real(const Array& x) {
  detail::check_valid("real", x);
  return x;
}

Array imag(const Array& x) {
  detail::check_valid("imag", x);
  return zeros_like(x);
}

Array conjugate(const Array& x) {
  detail::check_valid("conjugate", x);
  return x;
}

Array angle(const Array& z, bool deg) {
  detail::check_valid("angle", z);
  Array re = real(z), im = imag(z);
  if (!is_floating(z.dtype()) || z.ndim() == 0) {
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
  return false;
}

bool isrealobj(const Array& x) { return !iscomplexobj(x); }

}  // namespace graft
