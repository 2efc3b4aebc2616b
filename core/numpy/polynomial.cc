// jax.numpy polynomials and integration (core/numpy/polynomial.h), after JAX 0.10.2.
#include "core/numpy/polynomial.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "core/error.h"
#include "core/lax/util.h"
#include "core/numpy/numpy.h"
#include "core/numpy/searching.h"

namespace graft {
namespace {

void check_coeffs(const char* op, const Array& p) {
  detail::check_valid(op, p);
  if (p.ndim() != 1) fail(op, "coefficients must be 1-D, got shape ", shape_str(p.shape()));
}

// promote_dtypes, then (make_inexact) integers and bool to the default float.
std::vector<Array> promoted(const std::vector<Array>& xs, bool make_inexact) {
  std::vector<Array> out = detail::promote_dtypes(xs);
  if (!make_inexact || is_floating(out[0].dtype())) return out;
  for (Array& x : out) x = detail::convert(x, DType::kF32, x.weak_type());
  return out;
}

Array host_coeffs(const std::vector<double>& c, DType dtype) {
  return astype(array(c), dtype);
}

}  // namespace

Array polyval(const Array& p_in, const Array& x_in) {
  detail::check_valid("polyval", p_in);
  detail::check_valid("polyval", x_in);
  if (p_in.ndim() < 1) fail("polyval", "p must have rank >= 1");
  std::vector<Array> px = promoted({p_in, x_in}, false);
  const Array& p = px[0];
  const Array& x = px[1];
  Shape pt(p.shape().begin() + 1, p.shape().end());
  Array y = zeros(broadcast_shapes("polyval", pt, x.shape()), x.dtype());
  for (int64_t i = 0; i < p.shape()[0]; ++i) y = y * x + squeeze(slice_axis(p, 0, i, i + 1), {0});
  return y;
}

Array polyadd(const Array& a1, const Array& a2) {
  check_coeffs("polyadd", a1);
  check_coeffs("polyadd", a2);
  std::vector<Array> xs = promoted({a1, a2}, false);
  Array lo = xs[0], hi = xs[1];
  if (lo.shape()[0] < hi.shape()[0]) std::swap(lo, hi);
  return lo + pad(hi, {{lo.shape()[0] - hi.shape()[0], 0}});
}

Array polysub(const Array& a1, const Array& a2) {
  check_coeffs("polysub", a1);
  check_coeffs("polysub", a2);
  std::vector<Array> xs = promoted({a1, a2}, false);
  return polyadd(xs[0], -xs[1]);
}

Array polymul(const Array& a1, const Array& a2) {
  check_coeffs("polymul", a1);
  check_coeffs("polymul", a2);
  std::vector<Array> xs = promoted({a1, a2}, true);
  Array a = xs[0], b = xs[1];
  if (a.shape()[0] == 0) a = zeros({1}, a.dtype());
  if (b.shape()[0] == 0) b = zeros({1}, b.dtype());
  const int64_t n = a.shape()[0], m = b.shape()[0], len = n + m - 1;
  // out[k] = sum_i a[i] b[k - i]: a Toeplitz matrix of b (zero-padded) times a.
  Array pb = pad(b, {{n - 1, n - 1}});
  std::vector<int32_t> idx;
  for (int64_t k = 0; k < len; ++k) {
    for (int64_t i = 0; i < n; ++i) idx.push_back(static_cast<int32_t>(k - i + n - 1));
  }
  Array t = take(pb, array(idx, Shape{len, n}));
  return matmul(t, a);
}

Array polyder(const Array& p_in, int64_t m) {
  check_coeffs("polyder", p_in);
  if (m < 0) fail("polyder", "order of derivative must be >= 0, got ", m);
  Array p = promoted({p_in}, true)[0];
  if (m == 0) return p;
  const int64_t n = p.shape()[0];
  if (m >= n) return zeros({0}, p.dtype());
  std::vector<double> c;  // (n-1-j) (n-2-j) ... for the kept coefficient j
  for (int64_t j = 0; j < n - m; ++j) {
    double v = 1;
    for (int64_t i = 0; i < m; ++i) v *= static_cast<double>(n - 1 - j - i);
    c.push_back(v);
  }
  return slice(p, {0}, {n - m}) * host_coeffs(c, p.dtype());
}

Array polyint(const Array& p_in, int64_t m, const std::vector<double>& k_in) {
  check_coeffs("polyint", p_in);
  if (m < 0) fail("polyint", "order of integral must be >= 0, got ", m);
  Array p = promoted({p_in}, true)[0];
  std::vector<double> k = k_in;
  if (k.size() == 1) k.assign(m, k_in[0]);
  if (static_cast<int64_t>(k.size()) != m) {
    fail("polyint", "k must have 1 or m = ", m, " values, got ", k_in.size());
  }
  if (m == 0) return p;
  const int64_t len = p.shape()[0] + m;
  std::vector<double> coeff(len);
  for (int64_t j = 0; j < len; ++j) {
    double v = 1;
    for (int64_t i = 0; i < m; ++i) v *= std::max<double>(1.0, static_cast<double>(j - i));
    coeff[len - 1 - j] = v;
  }
  Array all = concatenate({p, host_coeffs(k, p.dtype())}, 0);
  return all / host_coeffs(coeff, p.dtype());
}

Array trapezoid(const Array& y_in, const std::optional<Array>& x, double dx, int64_t axis) {
  detail::check_valid("trapezoid", y_in);
  if (y_in.ndim() == 0) fail("trapezoid", "y must have rank >= 1");
  Array y = promoted({y_in}, true)[0];
  Array d = scalar(dx, y.dtype());
  if (x) {
    detail::check_valid("trapezoid", *x);
    std::vector<Array> yx = promoted({y, *x}, true);
    y = yx[0];
    d = yx[1].ndim() == 1 ? diff(yx[1]) : moveaxis(diff(yx[1], 1, axis), axis, -1);
  }
  y = moveaxis(y, axis, -1);
  const int64_t n = y.shape().back();
  if (n == 0) return sum(y, {-1});
  Array pairs = slice_axis(y, -1, 1, n) + slice_axis(y, -1, 0, n - 1);
  return 0.5 * sum(d * pairs, {-1});
}

Array interp(const Array& x_in, const Array& xp_in, const Array& fp_in,
             std::optional<double> left, std::optional<double> right) {
  detail::check_valid("interp", x_in);
  check_coeffs("interp", xp_in);
  check_coeffs("interp", fp_in);
  if (xp_in.shape() != fp_in.shape() || xp_in.shape()[0] == 0) {
    fail("interp", "xp and fp must be 1-D of the same nonzero length, got ",
         shape_str(xp_in.shape()), " and ", shape_str(fp_in.shape()));
  }
  std::vector<Array> pf = promoted({xp_in, fp_in}, true);
  const Array& xp = pf[0];
  const Array& fp = pf[1];
  Array x = promoted({x_in}, true)[0];
  const int64_t n = xp.shape()[0];
  Array i = clip(searchsorted(xp, x, "right"), scalar(1, DType::kI32),
                 scalar(static_cast<double>(std::max<int64_t>(n - 1, 1)), DType::kI32));
  Array im1 = i - 1;
  Array f0 = take(fp, im1, 0, GatherMode::kClip), f1 = take(fp, i, 0, GatherMode::kClip);
  Array x0 = take(xp, im1, 0, GatherMode::kClip), x1 = take(xp, i, 0, GatherMode::kClip);
  Array df = f1 - f0, dxv = x1 - x0, delta = x - x0;
  // np.spacing(finfo(dtype).eps): dx at most this is treated as 0 (no NaN gradients).
  const double eps = xp.dtype() == DType::kF64 ? std::ldexp(1.0, -104) : std::ldexp(1.0, -46);
  Array dx0 = less_equal(abs(dxv), eps);
  Array f = where(dx0, f0, f0 + (delta / where(dx0, ones_like(dxv), dxv)) * df);
  Array first = squeeze(slice(fp, {0}, {1})), last = squeeze(slice(fp, {n - 1}, {n}));
  Array lo = left ? full_like(first, *left) : first;
  Array hi = right ? full_like(last, *right) : last;
  f = where(less(x, squeeze(slice(xp, {0}, {1}))), lo, f);
  f = where(greater(x, squeeze(slice(xp, {n - 1}, {n}))), hi, f);
  return f;
}

namespace {

// promote_dtypes_inexact: the common type, made floating (f32 for ints and bool). Complex
// operands are refused (these functions compare or fit real values).
DType inexact_of(const char* op, const std::vector<Array>& xs) {
  for (const Array& x : xs) detail::refuse_complex(op, x);
  const DType d = detail::result_type(xs).dtype;
  return is_floating(d) ? d : DType::kF32;
}

}  // namespace

std::pair<Array, Array> polydiv(const Array& u0, const Array& v0, bool trim_leading_zeros) {
  if (u0.ndim() != 1 || v0.ndim() != 1 || v0.size() == 0 || u0.size() == 0) {
    fail("polydiv", "u and v must be non-empty 1-D coefficient arrays");
  }
  const DType dt = inexact_of("polydiv", {u0, v0});
  Array u = astype(u0, dt), v = astype(v0, dt);
  const int64_t m = u.size() - 1, n = v.size() - 1;
  const Array scale = 1.0 / slice_axis(v, 0, 0, 1);
  std::vector<Array> q;
  for (int64_t k = 0; k <= m - n; ++k) {
    Array d = scale * slice_axis(u, 0, k, k + 1);
    q.push_back(d);
    u = u + pad(-d * v, {{k, m - n - k}});
  }
  Array quot = q.empty() ? zeros({1}, dt) : concatenate(q);
  if (trim_leading_zeros) {
    if (u.is_tracer()) fail("polydiv", "trim_leading_zeros needs concrete values (not under jit or vmap)");
    const double tol = std::sqrt(finfo(dt).eps);
    std::vector<double> r = astype(u, DType::kF64).to_vector<double>();
    int64_t start = 0;
    while (start < static_cast<int64_t>(r.size()) && std::fabs(r[start]) < tol) ++start;
    u = slice_axis(u, 0, start, u.size());
  }
  return {quot, u};
}

PolyfitFull polyfit_full(const Array& x0, const Array& y0, int64_t deg, std::optional<double> rcond,
                         const std::optional<Array>& w) {
  if (deg < 0) fail("polyfit", "expected deg >= 0, got ", deg);
  if (x0.ndim() != 1) fail("polyfit", "expected 1D vector for x");
  if (x0.size() == 0) fail("polyfit", "expected non-empty vector for x");
  if (y0.ndim() < 1 || y0.ndim() > 2) fail("polyfit", "expected 1D or 2D array for y");
  if (x0.shape()[0] != y0.shape()[0]) fail("polyfit", "expected x and y to have same length");
  std::vector<Array> ins = {x0, y0};
  if (w) ins.push_back(*w);
  const DType dt = inexact_of("polyfit", ins);
  const Array x = astype(x0, dt);
  const double rc = rcond.value_or(static_cast<double>(x.size()) * finfo(dt).eps);
  Array lhs = vander(x, deg + 1);
  Array rhs = astype(y0, dt);
  if (w) {
    if (w->ndim() != 1) fail("polyfit", "expected a 1-d array for weights");
    if (w->shape()[0] != y0.shape()[0]) fail("polyfit", "expected w and y to have the same length");
    const Array wc = reshape(astype(*w, dt), {w->shape()[0], 1});
    lhs = lhs * wc;
    rhs = rhs * (rhs.ndim() == 2 ? wc : reshape(wc, {w->shape()[0]}));
  }
  const Array scale = sqrt(sum(lhs * lhs, {0}));
  lhs = lhs / reshape(scale, {1, deg + 1});
  LstsqResult r = linalg::lstsq(lhs, rhs, rc);
  Array c = r.x.ndim() > 1 ? r.x / reshape(scale, {deg + 1, 1}) : r.x / scale;
  return {c, r.resid, r.rank, r.s, scalar(rc, dt)};
}

Array polyfit(const Array& x, const Array& y, int64_t deg, std::optional<double> rcond,
              const std::optional<Array>& w) {
  return polyfit_full(x, y, deg, rcond, w).coef;
}

}  // namespace graft
