// jax.numpy statistics (core/numpy/reductions.h), written after JAX 0.10.2's reductions.py.
#include "core/numpy/reductions.h"

#include <limits>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/numpy/numpy.h"
#include "core/lax/util.h"

namespace graft {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// promote_dtypes_inexact for one operand.
// Complex values are refused unless the statistic has a complex case (the quantiles order
// real values).
Array inexact(const char* op, const Array& x, bool complex_ok = false) {
  detail::check_valid(op, x);
  if (!complex_ok) detail::refuse_complex(op, x);
  return detail::convert(x, detail::float_dtype_for(x), x.weak_type());
}

// The value `v` in x's dtype, broadcast to x's shape.
Array fill_like(const Array& x, double v) { return full_like(x, v); }

// JAX's _nan_reduction: NaN replaced by the reduction's identity; with nan_if_all_nan an
// all-NaN slice gives NaN. Non-float inputs reduce as they are.
template <typename Reduce>
Array nan_reduction(const char* op, const Array& x, double init, bool nan_if_all_nan,
                    const Axes& axes, bool keepdims, Reduce reduce) {
  detail::check_valid(op, x);
  if (!is_inexact(x.dtype())) return reduce(x, axes, keepdims);
  Array nan = isnan(x);
  Array out = reduce(where(nan, fill_like(x, init), x), axes, keepdims);
  if (!nan_if_all_nan) return out;
  return where(all(nan, axes, keepdims), fill_like(out, kNaN), out);
}

Array nan_arg(const char* op, const Array& x, std::optional<int64_t> axis, bool keepdims,
              bool is_max) {
  detail::check_valid(op, x);
  auto arg = [&](const Array& y) {
    return is_max ? argmax(y, axis, keepdims) : argmin(y, axis, keepdims);
  };
  if (!is_floating(x.dtype())) return arg(x);
  Array nan = isnan(x);
  Array res = arg(where(nan, fill_like(x, is_max ? -kInf : kInf), x));
  Axes ax;
  if (axis) ax.push_back(*axis);
  return where(all(nan, ax, keepdims), full_like(res, -1), res);
}

// JAX's _quantile for one axis (or none: flattened). squash_nans: the nan* form.
Array quantile_impl(const char* op, const Array& a_in, const Array& q_in,
                    std::optional<int64_t> axis, const std::string& method, bool keepdims,
                    bool squash_nans) {
  if (method != "linear" && method != "lower" && method != "higher" && method != "midpoint" &&
      method != "nearest") {
    fail(op, "method must be 'linear', 'lower', 'higher', 'midpoint' or 'nearest', got '",
         method, "'");
  }
  Array a = inexact(op, a_in);
  detail::check_valid(op, q_in);
  if (q_in.ndim() > 1) fail(op, "q must have rank <= 1, got shape ", shape_str(q_in.shape()));
  Shape kept_shape;  // the result's shape after the q dims, with keepdims
  int64_t ax;
  if (!axis) {
    kept_shape.assign(a.ndim(), 1);
    a = ravel(a);
    ax = 0;
  } else {
    ax = normalize_axis(op, *axis, a.ndim());
    kept_shape = a.shape();
    kept_shape[ax] = 1;
  }
  if (a.shape()[ax] == 0) fail(op, "cannot take a quantile over an empty axis");
  a = moveaxis(a, ax, -1);  // rest R, then n
  Shape rest(a.shape().begin(), a.shape().end() - 1);
  const int64_t n = a.shape().back();
  Array isn = isnan(a);
  Array counts;  // per slice of R, as a float
  if (squash_nans) {
    counts = sum(astype(logical_not(isn), a.dtype()), {-1});
  } else {
    a = where(any(isn, {-1}, /*keepdims=*/true), fill_like(a, kNaN), a);
    counts = full(rest, static_cast<double>(n), a.dtype());
  }
  Array sorted = sort(a, -1);
  Array q = detail::convert(q_in, a.dtype());
  // Positions with R leading and q's dim (or a 1) last, to gather along the last axis.
  Array qv = reshape(q, {q.size()});
  Shape qshape(rest.size() + 1, 1);
  qshape.back() = q.size();
  Array c = expand_dims(counts, {-1});
  Array pos = reshape(qv, qshape) * (c - 1.0);
  Array low = floor(pos), high = ceil(pos);
  Array hw = pos - low;
  Array lw = 1.0 - hw;
  Array zero = zeros_like(c);
  low = maximum(zero, minimum(low, c - 1.0));
  high = maximum(zero, minimum(high, c - 1.0));
  Array lv = take_along_axis(sorted, astype(low, DType::kI32), -1);
  Array hv = take_along_axis(sorted, astype(high, DType::kI32), -1);
  Array r;
  if (method == "linear") {
    r = lv * lw + hv * hw;
  } else if (method == "lower") {
    r = lv;
  } else if (method == "higher") {
    r = hv;
  } else if (method == "nearest") {
    r = where(less_equal(hw, 0.5), lv, hv);
  } else {
    r = (lv + hv) * 0.5;
  }
  // R + [nq] -> q's shape + kept_shape.
  r = moveaxis(r, -1, 0);
  Shape out = q.shape();
  if (keepdims) {
    out.insert(out.end(), kept_shape.begin(), kept_shape.end());
  } else {
    out.insert(out.end(), rest.begin(), rest.end());
  }
  return reshape(r, out);
}

Array percent(const Array& q) {
  return divide(detail::convert(q, detail::float_dtype_for(q), q.weak_type()), 100.0);
}

}  // namespace

Array std(const Array& x, const Axes& axes, bool keepdims, int64_t ddof) {
  detail::check_valid("std", x);
  return sqrt(var(x, axes, keepdims, ddof));
}

Array nansum(const Array& x, const Axes& axes, bool keepdims) {
  return nan_reduction("nansum", x, 0.0, false, axes, keepdims,
                       [](const Array& y, const Axes& a, bool k) { return sum(y, a, k); });
}
Array nanprod(const Array& x, const Axes& axes, bool keepdims) {
  return nan_reduction("nanprod", x, 1.0, false, axes, keepdims,
                       [](const Array& y, const Axes& a, bool k) { return prod(y, a, k); });
}
Array nanmax(const Array& x, const Axes& axes, bool keepdims) {
  return nan_reduction("nanmax", x, -kInf, true, axes, keepdims,
                       [](const Array& y, const Axes& a, bool k) { return max(y, a, k); });
}
Array nanmin(const Array& x, const Axes& axes, bool keepdims) {
  return nan_reduction("nanmin", x, kInf, true, axes, keepdims,
                       [](const Array& y, const Axes& a, bool k) { return min(y, a, k); });
}

Array nanmean(const Array& x, const Axes& axes, bool keepdims) {
  detail::check_valid("nanmean", x);
  if (!is_inexact(x.dtype())) return mean(x, axes, keepdims);
  Array count = sum(astype(logical_not(isnan(x)), x.dtype()), axes, keepdims);
  return divide(nansum(x, axes, keepdims), count);
}

Array nanvar(const Array& x_in, const Axes& axes, bool keepdims, int64_t ddof) {
  Array x = inexact("nanvar", x_in, /*complex_ok=*/true);
  Array nan = isnan(x);
  Array centered = where(nan, zeros_like(x), x - nanmean(x, axes, /*keepdims=*/true));
  Array normalizer = sum(astype(logical_not(nan), DType::kI32), axes, keepdims) -
                     scalar(static_cast<double>(ddof), DType::kI32);
  Array bad = less_equal(normalizer, 0);
  // |centered|^2: real for complex x, as jnp.nanvar.
  Array result = is_complex(x.dtype())
                     ? sum(square(real(centered)) + square(imag(centered)), axes, keepdims)
                     : sum(square(centered), axes, keepdims);
  result = where(bad, fill_like(result, kNaN), result);
  Array divisor = where(bad, ones_like(normalizer), normalizer);
  return divide(result, astype(divisor, result.dtype()));
}

Array nanstd(const Array& x, const Axes& axes, bool keepdims, int64_t ddof) {
  return sqrt(nanvar(x, axes, keepdims, ddof));
}

Array nanargmax(const Array& x, std::optional<int64_t> axis, bool keepdims) {
  return nan_arg("nanargmax", x, axis, keepdims, true);
}
Array nanargmin(const Array& x, std::optional<int64_t> axis, bool keepdims) {
  return nan_arg("nanargmin", x, axis, keepdims, false);
}

Array count_nonzero(const Array& x, const Axes& axes, bool keepdims) {
  detail::check_valid("count_nonzero", x);
  return sum(astype(not_equal(x, zeros_like(x)), DType::kI32), axes, keepdims);
}

Array quantile(const Array& a, const Array& q, std::optional<int64_t> axis,
               const std::string& method, bool keepdims) {
  return quantile_impl("quantile", a, q, axis, method, keepdims, false);
}
Array nanquantile(const Array& a, const Array& q, std::optional<int64_t> axis,
                  const std::string& method, bool keepdims) {
  return quantile_impl("nanquantile", a, q, axis, method, keepdims, true);
}
Array percentile(const Array& a, const Array& q, std::optional<int64_t> axis,
                 const std::string& method, bool keepdims) {
  detail::check_valid("percentile", q);
  return quantile_impl("percentile", a, percent(q), axis, method, keepdims, false);
}
Array nanpercentile(const Array& a, const Array& q, std::optional<int64_t> axis,
                    const std::string& method, bool keepdims) {
  detail::check_valid("nanpercentile", q);
  return quantile_impl("nanpercentile", a, percent(q), axis, method, keepdims, true);
}
Array median(const Array& a, std::optional<int64_t> axis, bool keepdims) {
  return quantile_impl("median", a, Array(0.5), axis, "midpoint", keepdims, false);
}
Array nanmedian(const Array& a, std::optional<int64_t> axis, bool keepdims) {
  return quantile_impl("nanmedian", a, Array(0.5), axis, "midpoint", keepdims, true);
}

Array cov(const Array& m, const std::optional<Array>& y, bool rowvar, bool bias,
          std::optional<int64_t> ddof) {
  Array x = inexact("cov", m, /*complex_ok=*/true);
  if (x.ndim() > 2) fail("cov", "m has more than 2 dimensions: ", shape_str(x.shape()));
  x = atleast_2d(x);
  if (!rowvar && x.shape()[0] != 1) x = transpose(x);
  if (y) {
    Array yy = inexact("cov", *y, /*complex_ok=*/true);
    if (yy.ndim() > 2) fail("cov", "y has more than 2 dimensions: ", shape_str(yy.shape()));
    yy = atleast_2d(yy);
    if (!rowvar && yy.shape()[0] != 1) yy = transpose(yy);
    TypeInfo t = detail::result_type({x, yy});
    x = detail::convert(x, t.dtype), yy = detail::convert(yy, t.dtype);
    if (yy.shape()[1] != x.shape()[1]) {
      fail("cov", "m and y have different numbers of observations: ", x.shape()[1], " and ",
           yy.shape()[1]);
    }
    x = concatenate({x, yy}, 0);
  }
  const int64_t d = ddof.value_or(bias ? 0 : 1);
  const double f = static_cast<double>(x.shape()[1] - d);
  Array xc = x - mean(x, {1}, /*keepdims=*/true);
  return squeeze(divide(matmul(xc, conj(transpose(xc))), f));  // conj: as jnp, for complex x
}

Array corrcoef(const Array& x, const std::optional<Array>& y, bool rowvar) {
  Array c = cov(x, y, rowvar);
  if (c.ndim() == 0) return divide(c, c);
  Array s = sqrt(diagonal(c));
  c = divide(divide(c, expand_dims(s, {1})), expand_dims(s, {0}));
  auto unit = [](const Array& v) { return clip(v, full_like(v, -1.0), full_like(v, 1.0)); };
  // Complex coefficients are clipped part by part, as jnp.corrcoef.
  return is_complex(c.dtype()) ? complex(unit(real(c)), unit(imag(c))) : unit(c);
}

}  // namespace graft
