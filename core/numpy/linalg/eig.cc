#include "core/numpy/linalg/eig.h"

#include <complex>

#include "core/error.h"
#include "core/lax/util.h"
#include "core/primitives/eig.h"
#include "core/numpy/numpy.h"

namespace graft {
namespace {

Array inexact(const Array& a) {
  return is_inexact(a.dtype()) && a.dtype() != DType::kF16 && a.dtype() != DType::kBF16
             ? a
             : astype(a, DType::kF32);
}

std::vector<Array> eig_of(const char* op, const Array& a, bool right) {
  detail::check_valid(op, a);
  return graft::bind(std::make_shared<const Eig>(right), {inexact(a)});
}

}  // namespace

linalg::EigResult linalg::eig(const Array& a) {
  std::vector<Array> o = eig_of("eig", a, true);
  return {o[0], o[1]};
}

Array linalg::eigvals(const Array& a) { return eig_of("eigvals", a, false)[0]; }

Array poly(const Array& seq_of_zeros) {
  detail::check_valid("poly", seq_of_zeros);
  Array z = seq_of_zeros.ndim() == 0 ? reshape(seq_of_zeros, {1}) : seq_of_zeros;
  const Shape& s = z.shape();
  if (s.size() == 2 && s[0] == s[1] && s[0] != 0) {
    z = linalg::eigvals(z);
  } else if (s.size() != 1) {
    fail("poly", "input must be 1d or non-empty square 2d array, got ", z.aval().str());
  }
  z = inexact(z);
  const int64_t n = z.shape()[0];
  if (n == 0) return ones({}, z.dtype());
  // Multiply in (x - r_k) one root at a time: a' = [a, 0] - r_k [0, a].
  Array a = ones({1}, z.dtype());
  for (int64_t k = 0; k < n; ++k) {
    Array zero = zeros({1}, z.dtype());
    a = concatenate({a, zero}, 0) - slice_axis(z, 0, k, k + 1) * concatenate({zero, a}, 0);
  }
  return a;
}

Array roots(const Array& p_in) {
  detail::check_valid("roots", p_in);
  Array p = inexact(p_in.ndim() == 0 ? reshape(p_in, {1}) : p_in);
  if (p.ndim() != 1) fail("roots", "input must be a rank-1 array, got ", p_in.aval().str());
  if (p.size() < 2) return zeros({0}, complex_dtype_for(p.dtype()));
  if (p.is_tracer()) {
    fail("roots",
         "strip_zeros=True needs concrete coefficients (the number of leading zeros "
         "decides the output's shape), got a traced ",
         p.aval().str());
  }
  std::vector<std::complex<double>> v = p.to_vector<std::complex<double>>();
  int64_t lead = 0;
  while (lead < p.size() && v[lead] == 0.0) ++lead;
  p = slice_axis(p, 0, lead, p.size());
  const int64_t m = p.size() - 1;  // the degree
  if (m < 1) return zeros({0}, complex_dtype_for(p.dtype()));
  // The companion matrix: -p[1:] / p[0] in the first row, ones below the diagonal.
  Array first = reshape(-slice_axis(p, 0, 1, m + 1) / slice_axis(p, 0, 0, 1), {1, m});
  Array a = m == 1 ? first : concatenate({first, eye(m - 1, m, 0, p.dtype())}, 0);
  return linalg::eigvals(a);
}

}  // namespace graft
