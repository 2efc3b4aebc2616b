// lax.real / imag / conj / complex (core/lax/complex.h).
#include "core/lax/complex.h"

#include "core/lax/lax.h"
#include "core/lax/util.h"
#include "core/primitives/complex.h"

namespace graft {

Array real(const Array& x) {
  detail::check_valid("real", x);
  return is_complex(x.dtype()) ? apply<Real>({x}) : x;
}

Array imag(const Array& x) {
  detail::check_valid("imag", x);
  return is_complex(x.dtype()) ? apply<Imag>({x}) : zeros_like(x);
}

Array conjugate(const Array& x) {
  detail::check_valid("conjugate", x);
  return is_complex(x.dtype()) ? apply<Conj>({x}) : x;
}

Array complex(const Array& x, const Array& y) {
  detail::check_valid("complex", x);
  detail::check_valid("complex", y);
  if (is_complex(x.dtype()) || is_complex(y.dtype())) {
    fail("complex", "needs real operands, got ", x.aval().str(), " and ", y.aval().str());
  }
  std::vector<Array> xs = detail::promote_and_broadcast("complex", {x, y});
  DType d = xs[0].dtype() == DType::kF64 ? DType::kF64 : DType::kF32;
  for (Array& a : xs) {
    if (a.dtype() != d) a = detail::convert(a, d, a.weak_type());
  }
  return apply<Complex>({xs[0], xs[1]});
}

}  // namespace graft
