// Loop references for the reduce-family specs: host tensors (values as double plus a shape),
// host-side transposes / strided slices (to describe non-contiguous inputs), and reductions,
// arg-reductions and scans computed index by index in double.
#pragma once

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "tests/core/primitives/specs/spec.h"

namespace graft::spec {

struct Host {
  std::vector<double> v;
  Shape shape;
};

inline Host host_of(const Array& a) { return {values_of(a), a.shape()}; }

// out[j...] = in[j[perm^-1]...], i.e. jnp.transpose(x, perm).
inline Host host_transpose(const Host& h, const std::vector<int>& perm) {
  Shape s(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) s[i] = h.shape[perm[i]];
  Host out{{}, s};
  for (int64_t f = 0; f < numel(s); ++f) {
    auto idx = unravel(f, s);
    std::vector<int64_t> src(idx.size());
    for (size_t i = 0; i < perm.size(); ++i) src[perm[i]] = idx[i];
    out.v.push_back(h.v[ravel(src, h.shape)]);
  }
  return out;
}

// lax.slice(x, start, limit, strides).
inline Host host_slice(const Host& h, const Shape& start, const Shape& limit,
                       const Shape& strides) {
  Shape s(start.size());
  for (size_t i = 0; i < s.size(); ++i) {
    s[i] = std::max<int64_t>(0, (limit[i] - start[i] + strides[i] - 1) / strides[i]);
  }
  Host out{{}, s};
  for (int64_t f = 0; f < numel(s); ++f) {
    auto idx = unravel(f, s);
    for (size_t i = 0; i < idx.size(); ++i) idx[i] = start[i] + idx[i] * strides[i];
    out.v.push_back(h.v[ravel(idx, h.shape)]);
  }
  return out;
}

inline std::vector<int> norm_axes(const Axes& axes, int ndim) {
  std::vector<int> out;
  if (axes.empty()) {
    for (int i = 0; i < ndim; ++i) out.push_back(i);
  } else {
    for (int64_t a : axes) out.push_back(static_cast<int>(a < 0 ? a + ndim : a));
  }
  std::sort(out.begin(), out.end());
  return out;
}

inline bool has_axis(const std::vector<int>& axes, int i) {
  return std::find(axes.begin(), axes.end(), i) != axes.end();
}

inline Shape reduced_shape(const Shape& s, const std::vector<int>& axes, bool keepdims) {
  Shape out;
  for (int i = 0; i < static_cast<int>(s.size()); ++i) {
    if (!has_axis(axes, i)) {
      out.push_back(s[i]);
    } else if (keepdims) {
      out.push_back(1);
    }
  }
  return out;
}

// The flat output index of input element `f` when `axes` are reduced.
inline int64_t out_index(int64_t f, const Shape& s, const std::vector<int>& axes) {
  auto idx = unravel(f, s);
  std::vector<int64_t> o;
  Shape os;
  for (int i = 0; i < static_cast<int>(s.size()); ++i) {
    if (!has_axis(axes, i)) {
      o.push_back(idx[i]);
      os.push_back(s[i]);
    }
  }
  return ravel(o, os);
}

// Folds f over the reduced axes, starting at init; values rounded to `out`.
inline Expected ref_reduce(const Host& x, const Axes& axes_in, bool keepdims, DType out,
                           double init, const std::function<double(double, double)>& f) {
  std::vector<int> axes = norm_axes(axes_in, static_cast<int>(x.shape.size()));
  Shape rs = reduced_shape(x.shape, axes, false);
  std::vector<double> acc(numel(rs), init);
  for (int64_t i = 0; i < numel(x.shape); ++i) {
    double& a = acc[out_index(i, x.shape, axes)];
    a = f(a, x.v[i]);
  }
  Expected e{reduced_shape(x.shape, axes, keepdims), out, {}};
  for (double a : acc) e.values.push_back(round_to(a, out));
  return e;
}

// Like ref_reduce with f(a, |v|) = a + |v|: the scale of a sum's rounding error.
inline double abs_sum_max(const Host& x, const Axes& axes) {
  Expected e = ref_reduce(x, axes, false, DType::kF64, 0,
                          [](double a, double v) { return a + std::fabs(v); });
  double m = 0;
  for (double v : e.values) m = std::max(m, v);
  return m;
}

inline double plus(double a, double b) { return a + b; }
inline double times(double a, double b) { return a * b; }
// NaN-propagating max / min, as XLA's reductions.
inline double max_nan(double a, double b) {
  return std::isnan(a) || std::isnan(b) ? NAN : std::max(a, b);
}
inline double min_nan(double a, double b) {
  return std::isnan(a) || std::isnan(b) ? NAN : std::min(a, b);
}

// Relative accuracy of the type a reduction of `d` accumulates in.
inline double acc_eps(DType d) { return d == DType::kF64 ? 1e-15 : 1e-6; }

// Index of the first max (kMax) / min along `axis`; the first NaN wins.
inline Expected ref_arg(const Host& x, int axis, bool kmax, bool keepdims) {
  Shape rs = reduced_shape(x.shape, {axis}, false);
  std::vector<double> best(numel(rs)), idx(numel(rs), -1);
  for (int64_t i = 0; i < numel(x.shape); ++i) {
    int64_t o = out_index(i, x.shape, {axis});
    int64_t r = unravel(i, x.shape)[axis];
    double v = x.v[i];
    bool take = idx[o] < 0 ||
                (!std::isnan(best[o]) && (std::isnan(v) || (kmax ? v > best[o] : v < best[o])));
    if (take) {
      best[o] = v;
      idx[o] = static_cast<double>(r);
    }
  }
  return Expected{reduced_shape(x.shape, {axis}, keepdims), DType::kI32, idx};
}

// Inclusive running sum along `axis` in double, each output rounded to `out`. Along one
// line of the axis, flat indices grow with the position, so a flat walk (backwards for
// reverse) visits every line in scan order.
inline Expected ref_cumsum(const Host& x, int axis, bool reverse, DType out) {
  Expected e{x.shape, out, std::vector<double>(x.v.size())};
  std::vector<double> acc(numel(reduced_shape(x.shape, {axis}, false)), 0.0);
  const int64_t n = numel(x.shape);
  for (int64_t s = 0; s < n; ++s) {
    int64_t i = reverse ? n - 1 - s : s;
    double& a = acc[out_index(i, x.shape, {axis})];
    a += x.v[i];
    e.values[i] = round_to(a, out);
  }
  return e;
}

}  // namespace graft::spec
