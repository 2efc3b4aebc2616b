// jnp.pad's non-constant modes, after JAX 0.10.2's lax_numpy._pad_*: one axis at a time, the
// padding built from slices of the (already padded) array, so gradients flow to the elements
// the padding copies.
#include "core/numpy/pad.h"

#include <algorithm>

#include "core/error.h"
#include "core/numpy/numpy.h"

namespace graft {
namespace {

using Widths = std::vector<std::pair<int64_t, int64_t>>;

const char* mode_name(PadMode m) {
  switch (m) {
    case PadMode::kConstant: return "constant";
    case PadMode::kEdge: return "edge";
    case PadMode::kWrap: return "wrap";
    case PadMode::kReflect: return "reflect";
    case PadMode::kSymmetric: return "symmetric";
    case PadMode::kLinearRamp: return "linear_ramp";
    case PadMode::kMaximum: return "maximum";
    case PadMode::kMinimum: return "minimum";
    case PadMode::kMean: return "mean";
    case PadMode::kMedian: return "median";
    case PadMode::kEmpty: return "empty";
  }
  return "?";
}

// One pair per dim: a single pair is used for every dim (JAX's _broadcast_to_pairs).
template <typename P>
std::vector<P> per_dim(const std::vector<P>& v, size_t nd, const char* what) {
  if (v.size() == 1) return std::vector<P>(nd, v[0]);
  if (v.size() != nd) fail("pad", what, " has ", v.size(), " pairs for rank ", nd);
  return v;
}

Array slice_in_dim(const Array& x, int64_t start, int64_t stop, int64_t axis) {
  return slice_axis(x, axis, start, stop);
}

Array cat3(const Array& before, const Array& x, const Array& after, int64_t axis) {
  return concatenate({before, x, after}, axis);
}

// One lax.pad per side and dim with that side's value (one for all sides when they agree).
Array pad_constant(Array x, const Widths& w, const std::vector<std::pair<double, double>>& values) {
  const double v0 = values[0].first;
  bool same = true;
  for (const auto& [lo, hi] : values) same = same && lo == v0 && hi == v0;
  if (same) return pad(x, w, astype(Array(v0), x.dtype()));
  for (int64_t i = 0; i < x.ndim(); ++i) {
    for (bool before : {true, false}) {
      const int64_t width = before ? w[i].first : w[i].second;
      if (width == 0) continue;
      Widths one(static_cast<size_t>(x.ndim()), {0, 0});
      (before ? one[i].first : one[i].second) = width;
      x = pad(x, one, astype(Array(before ? values[i].first : values[i].second), x.dtype()));
    }
  }
  return x;
}

Array pad_wrap(Array x, const Widths& w) {
  for (int64_t i = 0; i < x.ndim(); ++i) {
    const int64_t size = x.shape()[i];
    if (size == 0) continue;
    const int64_t left_rep = w[i].first / size, left_rem = w[i].first % size;
    const int64_t right_rep = w[i].second / size, right_rem = w[i].second % size;
    std::vector<Array> parts;
    if (left_rem > 0) parts.push_back(slice_in_dim(x, size - left_rem, size, i));
    for (int64_t r = 0; r < left_rep + right_rep + 1; ++r) parts.push_back(x);
    if (right_rem > 0) parts.push_back(slice_in_dim(x, 0, right_rem, i));
    x = concatenate(parts, i);
  }
  return x;
}

// _pad_symmetric_or_reflect: reflections of at most size - offset elements at a time, so wide
// padding reflects the already padded array again.
Array pad_reflect(Array x, const Widths& w, bool symmetric, bool odd) {
  for (int64_t i = 0; i < x.ndim(); ++i) {
    const int64_t size = x.shape()[i];
    if (size == 0 || (w[i].first == 0 && w[i].second == 0)) continue;
    const int64_t offset = (!symmetric && size > 1) ? 1 : 0;
    for (bool before : {true, false}) {
      int64_t padding = before ? w[i].first : w[i].second;
      auto edge_of = [&](const Array& a) {
        const int64_t n = a.shape()[i];
        return before ? slice_in_dim(a, 0, 1, i) : slice_in_dim(a, n - 1, n, i);
      };
      Array edge = edge_of(x);
      while (padding > 0) {
        const int64_t cur = std::min(padding, size - offset);
        padding -= cur;
        const int64_t n = x.shape()[i];
        Array part = before ? slice_in_dim(x, offset, offset + cur, i)
                            : slice_in_dim(x, n - (cur + offset),
                                           (symmetric || size == 1) ? n : n - 1, i);
        part = flip(part, {i});
        if (odd) {
          part = 2 * edge - part;
          if (size > 1) edge = edge_of(part);
        }
        x = before ? concatenate({part, x}, i) : concatenate({x, part}, i);
      }
    }
  }
  return x;
}

Array pad_edge(Array x, const Widths& w) {
  for (int64_t i = 0; i < x.ndim(); ++i) {
    const int64_t n = x.shape()[i];
    if (n == 0) continue;
    x = cat3(repeat(slice_in_dim(x, 0, 1, i), w[i].first, i), x,
             repeat(slice_in_dim(x, n - 1, n, i), w[i].second, i), i);
  }
  return x;
}

// linspace(start, edge, num, endpoint=False) along axis i, as jnp.linspace computes it:
// start * (1 - t) + edge * t with t = k / num, in x's inexact dtype, floored for integers.
Array ramp(double start, const Array& edge, int64_t num, int64_t i, DType dtype) {
  const DType ct = is_floating(dtype) ? dtype : DType::kF32;
  Shape s(edge.shape());
  s[i] = num;
  Array t = iota(ct, s, static_cast<int>(i)) / scalar(static_cast<double>(num), ct);
  Array out = scalar(start, ct) * (1 - t) + astype(edge, ct) * t;
  if (!is_floating(dtype)) out = floor(out);
  return astype(out, dtype);
}

Array pad_linear_ramp(Array x, const Widths& w, const std::vector<std::pair<double, double>>& ends) {
  for (int64_t i = 0; i < x.ndim(); ++i) {
    const int64_t n = x.shape()[i];
    if (n == 0) continue;
    Array before = ramp(ends[i].first, slice_in_dim(x, 0, 1, i), w[i].first, i, x.dtype());
    Array after = flip(ramp(ends[i].second, slice_in_dim(x, n - 1, n, i), w[i].second, i,
                            x.dtype()), {i});
    x = cat3(before, x, after, i);
  }
  return x;
}

Array stat(PadMode m, const Array& a, int64_t axis) {
  switch (m) {
    case PadMode::kMaximum: return max(a, {axis}, true);
    case PadMode::kMinimum: return min(a, {axis}, true);
    case PadMode::kMean: return mean(a, {axis}, true);
    default: return median(a, axis, true);
  }
}

Array pad_stats(Array x, const Widths& w, const std::optional<Widths>& lengths, PadMode m) {
  for (int64_t i = 0; i < x.ndim(); ++i) {
    const int64_t n = x.shape()[i];
    if (n == 0) {
      if (w[i].first > 0 || w[i].second > 0) {
        fail("pad", "cannot apply '", mode_name(m), "' padding to empty axis ", i);
      }
      continue;
    }
    Array before, after;
    if (!lengths) {
      before = after = stat(m, x, i);
    } else {
      const int64_t lb = std::min((*lengths)[i].first, n), la = std::min((*lengths)[i].second, n);
      before = stat(m, slice_in_dim(x, 0, lb, i), i);
      after = stat(m, slice_in_dim(x, n - la, n, i), i);
    }
    if (is_integral(x.dtype())) {
      before = round(before);
      after = round(after);
    }
    before = astype(before, x.dtype());
    after = astype(after, x.dtype());
    x = cat3(repeat(before, w[i].first, i), x, repeat(after, w[i].second, i), i);
  }
  return x;
}

Array pad_empty(Array x, const Widths& w) {  // jnp.empty is zeros
  for (int64_t i = 0; i < x.ndim(); ++i) {
    Shape b(x.shape()), a(x.shape());
    b[i] = w[i].first;
    a[i] = w[i].second;
    x = cat3(zeros(b, x.dtype()), x, zeros(a, x.dtype()), i);
  }
  return x;
}

}  // namespace

Array pad(const Array& x, const std::vector<std::pair<int64_t, int64_t>>& widths,
          const PadOptions& o) {
  const size_t nd = static_cast<size_t>(x.ndim());
  if (nd == 0) return x;
  const Widths w = per_dim(widths, nd, "pad_width");
  for (const auto& [lo, hi] : w) {
    if (lo < 0 || hi < 0) fail("pad", "negative pad width (", lo, ", ", hi, ")");
  }
  // JAX's _check_no_padding: only constant, linear_ramp and empty can pad an empty axis.
  if (o.mode != PadMode::kConstant && o.mode != PadMode::kLinearRamp &&
      o.mode != PadMode::kEmpty) {
    for (size_t i = 0; i < nd; ++i) {
      if (x.shape()[i] == 0 && (w[i].first > 0 || w[i].second > 0)) {
        fail("pad", "cannot apply '", mode_name(o.mode), "' padding to empty axis ", i);
      }
    }
  }
  std::optional<Widths> lengths;
  if (o.stat_length) {
    lengths = per_dim(*o.stat_length, nd, "stat_length");
    for (const auto& [lo, hi] : *lengths) {
      if (lo <= 0 || hi <= 0) fail("pad", "stat_length (", lo, ", ", hi, ") yields no value");
    }
  }
  switch (o.mode) {
    case PadMode::kConstant:
      return pad_constant(x, w, per_dim(o.constant_values, nd, "constant_values"));
    case PadMode::kEdge:
      return pad_edge(x, w);
    case PadMode::kWrap:
      return pad_wrap(x, w);
    case PadMode::kReflect:
    case PadMode::kSymmetric:
      return pad_reflect(x, w, o.mode == PadMode::kSymmetric, o.reflect_odd);
    case PadMode::kLinearRamp:
      return pad_linear_ramp(x, w, per_dim(o.end_values, nd, "end_values"));
    case PadMode::kEmpty:
      return pad_empty(x, w);
    default:
      return pad_stats(x, w, lengths, o.mode);
  }
}

}  // namespace graft
