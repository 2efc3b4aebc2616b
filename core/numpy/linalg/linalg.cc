#include "core/numpy/linalg/linalg.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>

#include "core/error.h"
#include "core/numpy/numpy.h"

namespace graft {
namespace {

// Promotes integer and bool inputs to f32, as jnp's promote_args_inexact.
// Integers and bool become f32; complex stays complex (the factorization primitives refuse it
// by name; a real dtype here would drop the imaginary part).
Array inexact(const Array& x) { return is_inexact(x.dtype()) ? x : astype(x, DType::kF32); }

constexpr double kInf = std::numeric_limits<double>::infinity();

void require_matrix(const char* op, const Array& x) {
  if (x.ndim() < 2) fail(op, "needs at least 2 dims, got shape ", shape_str(x.shape()));
}

// linalg.norm's ord for a vector norm, from its spelling: a number, "inf" or "-inf".
double vector_ord(const std::string& o) {
  if (o == "inf") return kInf;
  if (o == "-inf") return -kInf;
  char* end = nullptr;
  const double p = std::strtod(o.c_str(), &end);
  if (o.empty() || *end != '\0') {
    fail("linalg.norm", "ord \"", o, "\" of a vector norm is not a number, inf or -inf");
  }
  return p;
}

}  // namespace

Array matrix_transpose(const Array& x) {
  require_matrix("matrix_transpose", x);
  return swapaxes(x, -2, -1);
}

// x1 conjugated, as jnp.vecdot (conj of a real array is itself).
Array vecdot(const Array& x1, const Array& x2, int64_t axis) {
  return sum(conj(x1) * x2, {axis});
}

Array matvec(const Array& x1, const Array& x2) {
  require_matrix("matvec", x1);
  if (x2.ndim() < 1) fail("matvec", "needs a vector, got a scalar");
  return squeeze(matmul(x1, expand_dims(x2, {-1})), {-1});
}

Array vecmat(const Array& x1, const Array& x2) {
  require_matrix("vecmat", x2);
  if (x1.ndim() < 1) fail("vecmat", "needs a vector, got a scalar");
  return squeeze(matmul(expand_dims(x1, {-2}), x2), {-2});
}

namespace linalg {

Array vector_norm(const Array& x_in, double ord, const Axes& axes, bool keepdims) {
  // Every vector norm depends on |x| alone: a complex x is measured by its magnitudes.
  const Array x = is_complex(x_in.dtype()) ? abs(x_in) : inexact(x_in);
  const Array a = abs(x);
  if (ord == 2.0) return sqrt(sum(x * x, axes, keepdims));
  if (ord == kInf) return max(a, axes, keepdims);
  if (ord == -kInf) return min(a, axes, keepdims);
  if (ord == 0.0)
    return astype(sum(astype(not_equal(x, zeros_like(x)), x.dtype()), axes, keepdims), x.dtype());
  if (ord == 1.0) return sum(a, axes, keepdims);
  return power(sum(power(a, ord), axes, keepdims), 1.0 / ord);
}

Array matrix_norm(const Array& x_in, const std::string& ord_in, bool keepdims) {
  require_matrix("linalg.matrix_norm", x_in);
  const std::string ord = ord_in == "f" ? "fro" : ord_in;
  const int64_t r = x_in.ndim();
  if (ord == "2" || ord == "-2" || ord == "nuc") {
    // The largest, the smallest or the sum of the singular values, as JAX (their derivative
    // is the svd's).
    if (is_complex(x_in.dtype())) {
      fail("linalg.matrix_norm", "ord ", ord, " of a complex matrix needs a complex svd, which ",
           "graft does not have (got ", x_in.aval().str(), ")");
    }
    Array s = svdvals(x_in);
    Array y = ord == "2" ? max(s, {-1}) : ord == "-2" ? min(s, {-1}) : sum(s, {-1});
    return keepdims ? expand_dims(y, {r - 2, r - 1}) : y;
  }
  // fro, 1 and inf depend on |x| alone.
  const Array x = is_complex(x_in.dtype()) ? abs(x_in) : inexact(x_in);
  if (ord == "fro") return sqrt(sum(x * x, {r - 2, r - 1}, keepdims));
  const Array a = abs(x);
  // Column sums (over the rows, axis -2) for ord 1 / -1, row sums for inf / -inf.
  if (ord == "1" || ord == "-1") {
    Array sums = sum(a, {r - 2}, keepdims);
    const int64_t col = keepdims ? r - 1 : r - 2;
    return ord == "1" ? max(sums, {col}, keepdims) : min(sums, {col}, keepdims);
  }
  if (ord == "inf" || ord == "-inf") {
    Array sums = sum(a, {r - 1}, keepdims);
    return ord == "inf" ? max(sums, {r - 2}, keepdims) : min(sums, {r - 2}, keepdims);
  }
  fail("linalg.matrix_norm", "ord \"", ord_in,
       "\" is not fro, nuc, 1, -1, 2, -2, inf or -inf");
}

Array norm(const Array& x, const std::optional<std::string>& ord,
           const std::optional<Axes>& axis, bool keepdims) {
  const int64_t r = x.ndim();
  if (!axis && !ord) {
    // Any rank: the 2-norm of all elements.
    Array y = vector_norm(ravel(x));
    return keepdims ? reshape(y, Shape(static_cast<size_t>(r), 1)) : y;
  }
  Axes ax;
  if (axis) {
    for (int64_t a : *axis) {
      if (a < -r || a >= r) fail("linalg.norm", "axis ", a, " is out of range for ", x.aval().str());
      ax.push_back(a < 0 ? a + r : a);
    }
  } else {
    for (int64_t a = 0; a < r; ++a) ax.push_back(a);
  }
  if (ax.size() == 1) {
    return vector_norm(x, ord ? vector_ord(*ord) : 2.0, ax, keepdims);
  }
  if (ax.size() != 2 || ax[0] == ax[1]) {
    fail("linalg.norm", "needs one axis (a vector norm) or two distinct axes (a matrix norm), "
         "got ", ax.size(), " axes of ", x.aval().str());
  }
  // The two axes moved last (rows, then columns), as JAX's moveaxis for the svd orders.
  std::vector<int> perm;
  for (int64_t a = 0; a < r; ++a) {
    if (a != ax[0] && a != ax[1]) perm.push_back(static_cast<int>(a));
  }
  perm.push_back(static_cast<int>(ax[0]));
  perm.push_back(static_cast<int>(ax[1]));
  Array y = matrix_norm(transpose(x, perm), ord ? *ord : "fro");
  return keepdims ? expand_dims(y, {std::min(ax[0], ax[1]), std::max(ax[0], ax[1])}) : y;
}

Array matrix_power(const Array& a, int64_t n) {
  require_matrix("linalg.matrix_power", a);
  const Shape& s = a.shape();
  if (s[s.size() - 1] != s[s.size() - 2]) {
    fail("linalg.matrix_power", "needs square matrices, got shape ", shape_str(s));
  }
  if (n == 0) return broadcast_to(eye(s.back(), std::nullopt, 0, a.dtype()), s);
  // A negative power is the inverse's positive power, as JAX.
  const Array base = n < 0 ? inv(a) : a;
  uint64_t k = n < 0 ? 0 - static_cast<uint64_t>(n) : static_cast<uint64_t>(n);
  // JAX's products: 1, 2 and 3 directly, then repeated squaring over the binary digits of n
  // from the lowest.
  if (k == 1) return base;
  if (k == 2) return matmul(base, base);
  if (k == 3) return matmul(matmul(base, base), base);
  Array result, z = base;
  bool have = false;
  for (;;) {
    if (k & 1) {
      result = have ? matmul(result, z) : z;
      have = true;
    }
    k >>= 1;
    if (k == 0) break;
    z = matmul(z, z);
  }
  return result;
}

Array multi_dot(const std::vector<Array>& arrays) {
  if (arrays.size() < 2) fail("multi_dot", "needs at least 2 arrays, got ", arrays.size());
  std::vector<Array> m = arrays;
  const bool first_vec = m.front().ndim() == 1, last_vec = m.back().ndim() == 1;
  if (first_vec) m.front() = expand_dims(m.front(), {0});
  if (last_vec) m.back() = expand_dims(m.back(), {1});
  for (size_t i = 0; i < m.size(); ++i) {
    if (m[i].ndim() != 2) {
      fail("multi_dot", "array ", i, " has shape ", shape_str(arrays[i].shape()),
           ": only the first and last may be 1-D, the others must be 2-D");
    }
  }
  Array out = m[0];
  for (size_t i = 1; i < m.size(); ++i) out = matmul(out, m[i]);
  if (last_vec) out = squeeze(out, {1});
  if (first_vec) out = squeeze(out, {0});
  return out;
}

Array vecdot(const Array& x1, const Array& x2, int64_t axis) { return graft::vecdot(x1, x2, axis); }

Array diagonal(const Array& x, int64_t offset) {
  require_matrix("linalg.diagonal", x);
  return graft::diagonal(x, offset, -2, -1);
}

Array trace(const Array& x, int64_t offset) {
  require_matrix("linalg.trace", x);
  return sum(graft::diagonal(x, offset, -2, -1), {-1});
}

Array tensordot(const Array& x1, const Array& x2, int64_t axes) {
  return graft::tensordot(x1, x2, axes);
}

Array cross(const Array& x1, const Array& x2) {
  if (x1.ndim() < 1 || x2.ndim() < 1 || x1.shape().back() != 3 || x2.shape().back() != 3) {
    fail("linalg.cross", "needs 3-vectors along the last axis, got shapes ", shape_str(x1.shape()),
         " and ", shape_str(x2.shape()));
  }
  return graft::cross(x1, x2);
}

}  // namespace linalg
}  // namespace graft
