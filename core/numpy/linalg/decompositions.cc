// The jnp.linalg functions built on the factorizations (core/lax/linalg.h), composed as JAX
// composes them (jax/_src/numpy/linalg.py), so their values and derivatives follow from the
// factorizations' rules.
#include <algorithm>
#include <cmath>
#include <limits>

#include "core/error.h"
#include "core/numpy/numpy.h"

namespace graft::linalg {

namespace {

// Integers and bools become f32, as jnp's promote_dtypes_inexact.
// Integers and bool become f32; complex stays complex (the factorization primitives refuse it
// by name; a real dtype here would drop the imaginary part).
Array inexact(const Array& x) { return is_inexact(x.dtype()) ? x : astype(x, DType::kF32); }

double eps(DType d) {
  return d == DType::kF64 ? std::numeric_limits<double>::epsilon()
                          : static_cast<double>(std::numeric_limits<float>::epsilon());
}

void check_square(std::string_view op, const Array& a) {
  if (a.ndim() < 2) fail(op, "needs an array of rank >= 2, got ", a.aval().str());
  if (a.shape()[a.ndim() - 2] != a.shape().back()) {
    fail(op, "needs square matrices in the last two dims, got ", a.aval().str());
  }
}

Shape batch_of(const Array& x) { return Shape(x.shape().begin(), x.shape().end() - 2); }

Shape with(Shape s, int64_t r, int64_t c) {
  s.push_back(r);
  s.push_back(c);
  return s;
}

// The (sign, log |det|) of each matrix, as JAX's slogdet through lu.
SlogdetResult slogdet_lu(const Array& a) {
  LuResult f = ::graft::lu(a);
  const int64_t n = a.shape().back();
  Array diag = ::graft::diagonal(f.lu, 0, -2, -1);
  Array is_zero = any(diag == scalar(0, diag.dtype()), {-1});
  Array swaps = sum(astype(f.pivots != arange(n, DType::kI32), DType::kI32), {-1});
  Array negs = sum(astype(diag < scalar(0, diag.dtype()), DType::kI32), {-1});
  Array odd = ((swaps + negs) % 2) == 1;
  const DType d = a.dtype();
  Array sign = where(is_zero, scalar(0, d), where(odd, scalar(-1, d), scalar(1, d)));
  Array logdet = where(is_zero, scalar(-std::numeric_limits<double>::infinity(), d),
                       sum(log(abs(diag)), {-1}));
  return {sign, logdet};
}

}  // namespace

Array cholesky(const Array& a_in, bool upper) {
  Array l = ::graft::cholesky(inexact(a_in));
  return upper ? swapaxes(l, -1, -2) : l;
}

QrResult qr(const Array& a_in, const std::string& mode) {
  if (mode != "reduced" && mode != "complete" && mode != "r") {
    fail("qr", "mode must be \"reduced\", \"complete\" or \"r\", got \"", mode, "\"");
  }
  QrResult r = ::graft::qr(inexact(a_in), mode == "complete");
  if (mode == "r") r.q = Array();
  return r;
}

SvdResult svd(const Array& a, bool full_matrices, bool compute_uv) {
  return ::graft::svd(inexact(a), full_matrices, compute_uv);
}

Array svdvals(const Array& x) { return ::graft::svd(inexact(x), false, false).s; }

EighResult eigh(const Array& a, const std::string& uplo, bool symmetrize_input) {
  if (uplo != "L" && uplo != "U") fail("eigh", "UPLO must be \"L\" or \"U\", got \"", uplo, "\"");
  return ::graft::eigh(inexact(a), uplo == "L", symmetrize_input);
}

Array eigvalsh(const Array& a, const std::string& uplo) {
  if (uplo != "L" && uplo != "U") {
    fail("eigvalsh", "UPLO must be \"L\" or \"U\", got \"", uplo, "\"");
  }
  return ::graft::eigh(inexact(a), uplo == "L").eigenvalues;
}

Array solve(const Array& a_in, const Array& b_in) {
  Array a = inexact(a_in), b = inexact(b_in);
  if (a.dtype() != b.dtype()) {
    const DType d = promote_types({a.dtype()}, {b.dtype()}).dtype;
    a = astype(a, d);
    b = astype(b, d);
  }
  check_square("solve", a);
  const int64_t n = a.shape().back();
  if (b.ndim() == 0) fail("solve", "b must have rank >= 1, got ", b.aval().str());
  if (b.ndim() == 1) {
    if (b.shape()[0] != n) {
      fail("solve", "b has ", b.shape()[0], " rows but a is ", n, " x ", n, ": ",
           a.aval().str(), " and ", b.aval().str());
    }
    return squeeze(solve(a, expand_dims(b, {-1})), {-1});
  }
  if (b.shape()[b.ndim() - 2] != n) {
    fail("solve", "b's rows (dim -2) must match a's size ", n, ": ", a.aval().str(), " and ",
         b.aval().str());
  }
  const Shape batch = broadcast_shapes("solve", batch_of(a), batch_of(b));
  const int64_t k = b.shape().back();
  a = broadcast_to(a, with(batch, n, n));
  b = broadcast_to(b, with(batch, n, k));
  return lu_solve(a, b);
}

Array inv(const Array& a_in) {
  Array a = inexact(a_in);
  check_square("inv", a);
  return solve(a, broadcast_to(eye(a.shape().back(), std::nullopt, 0, a.dtype()), a.shape()));
}

Array det(const Array& a_in) {
  Array a = inexact(a_in);
  check_square("det", a);
  SlogdetResult r = slogdet_lu(a);
  return r.sign * exp(r.logabsdet);
}

SlogdetResult slogdet(const Array& a_in) {
  Array a = inexact(a_in);
  check_square("slogdet", a);
  return slogdet_lu(a);
}

LstsqResult lstsq(const Array& a_in, const Array& b_in, std::optional<double> rcond) {
  Array a = inexact(a_in), b = inexact(b_in);
  if (a.dtype() != b.dtype()) {
    const DType d = promote_types({a.dtype()}, {b.dtype()}).dtype;
    a = astype(a, d);
    b = astype(b, d);
  }
  if (a.ndim() != 2) fail("lstsq", "a must be a matrix, got ", a.aval().str());
  if (b.ndim() != 1 && b.ndim() != 2) fail("lstsq", "b must be 1-D or 2-D, got ", b.aval().str());
  if (a.shape()[0] != b.shape()[0]) {
    fail("lstsq", "a and b need as many rows, got ", a.aval().str(), " and ", b.aval().str());
  }
  const bool vec = b.ndim() == 1;
  if (vec) b = expand_dims(b, {1});
  const int64_t m = a.shape()[0], n = a.shape()[1];
  const DType d = a.dtype();
  if (m == 0 || n == 0) fail("lstsq", "a must not be empty, got ", a.aval().str());
  const double rc =
      !rcond ? eps(d) * static_cast<double>(std::max(m, n)) : (*rcond < 0 ? eps(d) : *rcond);
  SvdResult f = ::graft::svd(a, false, true);
  Array mask = (f.s > scalar(0, d)) & (f.s >= scalar(rc, d) * slice_axis(f.s, 0, 0, 1));
  Array rank = sum(astype(mask, DType::kI32));
  Array safe_s = where(mask, f.s, scalar(1, d));
  Array s_inv = expand_dims(where(mask, reciprocal(safe_s), scalar(0, d)), {1});
  Array utb = matmul(swapaxes(f.u, 0, 1), b);
  Array x = matmul(swapaxes(f.vh, 0, 1), s_inv * utb);
  Array resid = sum(square(b - matmul(a, x)), {0});
  if (vec) x = reshape(x, {n});  // resid keeps its shape [1], as in JAX
  return {x, resid, rank, f.s};
}

Array pinv(const Array& a_in, std::optional<double> rtol) {
  Array a = inexact(a_in);
  if (a.ndim() < 2) fail("pinv", "needs an array of rank >= 2, got ", a.aval().str());
  const int64_t m = a.shape()[a.ndim() - 2], n = a.shape().back();
  const DType d = a.dtype();
  if (m == 0 || n == 0) return zeros(with(batch_of(a), n, m), d);
  const double rt = rtol ? *rtol : 10.0 * static_cast<double>(std::max(m, n)) * eps(d);
  SvdResult f = ::graft::svd(a, false, true);
  Array cutoff = scalar(rt, d) * slice_axis(f.s, -1, 0, 1);
  Array s = where(f.s > cutoff, f.s, scalar(std::numeric_limits<double>::infinity(), d));
  return matmul(swapaxes(f.vh, -1, -2), swapaxes(f.u, -1, -2) / expand_dims(s, {-1}));
}

Array cond(const Array& x_in, const std::optional<std::string>& p) {
  Array x = inexact(x_in);
  if (x.ndim() < 2) fail("cond", "needs an array of rank >= 2, got ", x.aval().str());
  Array r;
  if (!p || *p == "2" || *p == "-2") {
    Array s = svdvals(x);
    const int64_t k = s.shape().back();
    Array first = squeeze(slice_axis(s, -1, 0, 1), {-1});
    Array last = squeeze(slice_axis(s, -1, k - 1, k), {-1});
    r = (p && *p == "-2") ? last / first : first / last;
  } else {
    check_square("cond", x);
    r = matrix_norm(x, *p) * matrix_norm(inv(x), *p);
  }
  // NaNs from a singular matrix become inf, unless x itself holds NaNs.
  return where(isnan(r) & !any(isnan(x), {-2, -1}),
               scalar(std::numeric_limits<double>::infinity(), r.dtype()), r);
}

Array matrix_rank(const Array& m_in, std::optional<double> rtol) {
  Array x = inexact(m_in);
  if (x.ndim() < 2) return astype(any(x != scalar(0, x.dtype())), DType::kI32);
  Array s = svdvals(x);
  const DType d = s.dtype();
  const int64_t mn = std::max(x.shape()[x.ndim() - 2], x.shape().back());
  Array tol = rtol ? scalar(*rtol, d)
                   : max(s, {-1}) * scalar(static_cast<double>(mn) * eps(d), d);
  if (!rtol) tol = expand_dims(tol, {-1});
  return sum(astype(s > tol, DType::kI32), {-1});
}

Array tensorinv(const Array& a_in, int64_t ind) {
  Array a = inexact(a_in);
  if (ind <= 0 || ind > a.ndim()) fail("tensorinv", "ind must be in [1, ndim], got ", ind);
  Shape lead(a.shape().begin(), a.shape().begin() + ind), rest(a.shape().begin() + ind,
                                                                 a.shape().end());
  const int64_t p = numel(lead), q = numel(rest);
  if (p != q) {
    fail("tensorinv", "needs prod(a.shape[:ind]) == prod(a.shape[ind:]), got ", p, " and ", q,
         " for ", a.aval().str());
  }
  Shape out = rest;
  out.insert(out.end(), lead.begin(), lead.end());
  return reshape(inv(reshape(a, {p, q})), out);
}

Array tensorsolve(const Array& a_in, const Array& b_in, const std::vector<int64_t>& axes) {
  Array a = inexact(a_in), b = inexact(b_in);
  if (!axes.empty()) {
    // numpy's order: the listed axes moved to the end, in the order given.
    std::vector<int> perm;
    std::vector<int> moved;
    for (int64_t ax : axes) moved.push_back(static_cast<int>(ax < 0 ? ax + a.ndim() : ax));
    for (int i = 0; i < a.ndim(); ++i) {
      if (std::find(moved.begin(), moved.end(), i) == moved.end()) perm.push_back(i);
    }
    perm.insert(perm.end(), moved.begin(), moved.end());
    a = transpose(a, perm);
  }
  if (b.ndim() > a.ndim() ||
      !std::equal(b.shape().begin(), b.shape().end(), a.shape().begin())) {
    fail("tensorsolve", "b.shape must match the leading dims of a, got ", a.aval().str(),
         " and ", b.aval().str());
  }
  Shape out(a.shape().begin() + b.ndim(), a.shape().end());
  const int64_t rows = numel(b.shape()), cols = numel(out);
  if (rows != cols) {
    fail("tensorsolve", "needs prod(b.shape) == prod(a.shape[b.ndim:]), got ", rows, " and ",
         cols);
  }
  return reshape(solve(reshape(a, {rows, cols}), reshape(b, {rows})), out);
}

}  // namespace graft::linalg
