// jnp.fft's transforms, as jax/_src/numpy/fft.py writes them over lax.fft (see core/numpy/fft/fft.h).
#include <algorithm>
#include <cmath>
#include <set>

#include "core/error.h"
#include "core/numpy/numpy.h"
#include "core/lax/util.h"
#include "core/primitives/fft.h"

namespace graft::fft {
namespace {

// lax.fft's input conversion: rfft takes real values (as inexact), the others complex ones.
Array to_fft_dtype(const char* op, const Array& a, FftType type) {
  if (type == FftType::kRfft) {
    if (is_complex(a.dtype()))
      fail(op, "only real valued inputs are supported, got ", a.aval().str());
    return is_floating(a.dtype()) && a.dtype() != DType::kF16 && a.dtype() != DType::kBF16
               ? a
               : astype(a, DType::kF32);
  }
  if (is_complex(a.dtype())) return a;
  return astype(a, complex_dtype_for(a.dtype()));
}

// The factor _fft_norm multiplies by: 1 for "backward", 1/sqrt(N) or sqrt(N) for "ortho",
// 1/N or N for "forward" (the inverse transforms, whose names start with 'i', take the second).
double norm_factor(const char* op, const std::string& norm, const Shape& s) {
  double n = 1;
  for (int64_t l : s) n *= static_cast<double>(l);
  const bool inverse = op[0] == 'i';
  if (norm == "backward") return 1;
  if (norm == "ortho") return inverse ? std::sqrt(n) : 1 / std::sqrt(n);
  if (norm == "forward") return inverse ? n : 1 / n;
  fail(op, "invalid norm value ", norm, "; should be \"backward\", \"ortho\" or \"forward\"");
}

// x cropped or zero-padded along `axis` to length n.
Array fit_length(const Array& x, int axis, int64_t n) {
  const int64_t have = x.shape()[axis];
  if (have > n) return slice_axis(x, axis, 0, n);
  if (have == n) return x;
  Shape zs = x.shape();
  zs[axis] = n - have;
  return concatenate({x, zeros(zs, x.dtype())}, axis);
}

// lax.fft over the trailing dims, in chunks of at most 3 (lax.fft's limit) for fft / ifft.
Array trailing_fft(const Array& a, FftType type, const Shape& s) {
  if (s.size() <= 3) return lax_fft(a, type, s);
  Shape head(s.begin(), s.end() - 3), tail(s.end() - 3, s.end());
  Array x = lax_fft(a, type, tail);
  // Bring the remaining axes to the end, transform them, move them back.
  const int r = a.ndim(), k = static_cast<int>(head.size());
  std::vector<int> perm, inv(r);
  for (int d = 0; d < r - k - 3; ++d) perm.push_back(d);
  for (int d = r - 3; d < r; ++d) perm.push_back(d);
  for (int d = r - k - 3; d < r - 3; ++d) perm.push_back(d);
  for (int i = 0; i < r; ++i) inv[perm[i]] = i;
  return transpose(trailing_fft(transpose(x, perm), type, head), inv);
}

// _fft_core: moves `axes` to the end, crops / pads to `s`, transforms, normalizes, moves back.
Array fft_core(const char* op, FftType type, const Array& a0, std::optional<Shape> s,
               std::optional<Axes> axes_in, const std::string& norm) {
  detail::check_valid(op, a0);
  if (s) {
    for (int64_t n : *s) {
      if (n < 0) fail(op, "the lengths s must be >= 0, got ", shape_str(*s));
    }
    if (axes_in && axes_in->size() != s->size()) {
      fail(op, "shape and axes have different lengths: ", s->size(), " and ", axes_in->size());
    }
  }
  const int r = a0.ndim();
  std::vector<int> axes;
  if (axes_in) {
    for (int64_t ax : *axes_in) {
      if (ax < -r || ax >= r) fail(op, "axis ", ax, " is out of range for ", a0.aval().str());
      axes.push_back(static_cast<int>(ax < 0 ? ax + r : ax));
    }
  } else {
    const int k = s ? static_cast<int>(s->size()) : r;
    if (k > r) fail(op, "s has ", k, " entries but the array has rank ", r);
    for (int d = r - k; d < r; ++d) axes.push_back(d);
  }
  if (std::set<int>(axes.begin(), axes.end()).size() != axes.size()) {
    fail(op, "all axes must be different");
  }
  if (axes.empty()) fail(op, "needs at least one axis to transform");
  // Move the axes to the end, in the given order.
  std::vector<int> perm, inv(r);
  for (int d = 0; d < r; ++d) {
    if (std::find(axes.begin(), axes.end(), d) == axes.end()) perm.push_back(d);
  }
  perm.insert(perm.end(), axes.begin(), axes.end());
  for (int i = 0; i < r; ++i) inv[perm[i]] = i;
  Array a = to_fft_dtype(op, transpose(a0, perm), type);
  const int k = static_cast<int>(axes.size());
  Shape lengths;
  if (s) {
    lengths = *s;
    Shape in_s = lengths;
    if (type == FftType::kIrfft) in_s.back() = in_s.back() / 2 + 1;
    for (int i = 0; i < k; ++i) a = fit_length(a, r - k + i, in_s[i]);
  } else {
    for (int i = 0; i < k; ++i) lengths.push_back(a.shape()[r - k + i]);
    if (type == FftType::kIrfft) lengths.back() = std::max<int64_t>(0, 2 * (lengths.back() - 1));
  }
  // A real transform over k > 1 axes: the complex one over all but the last axis, moved to
  // the end for it (and back), with the real one over the last axis before (rfft) or after.
  const Shape rest(lengths.begin(), lengths.end() - 1);
  auto fft_rest = [&](const Array& x, FftType t) {
    std::vector<int> p2, i2(r);
    for (int d = 0; d < r - k; ++d) p2.push_back(d);
    p2.push_back(r - 1);
    for (int d = r - k; d < r - 1; ++d) p2.push_back(d);
    for (int i = 0; i < r; ++i) i2[p2[i]] = i;
    return transpose(trailing_fft(transpose(x, p2), t, rest), i2);
  };
  Array out;
  if (type == FftType::kRfft && k > 1) {
    out = fft_rest(lax_fft(a, FftType::kRfft, Shape{lengths.back()}), FftType::kFft);
  } else if (type == FftType::kIrfft && k > 1) {
    out = lax_fft(fft_rest(a, FftType::kIfft), FftType::kIrfft, Shape{lengths.back()});
  } else {
    out = trailing_fft(a, type, lengths);
  }
  const double f = norm_factor(op, norm, lengths);
  if (f != 1) out = out * Array(f);
  return transpose(out, inv);
}

Array core_1d(const char* op, FftType type, const Array& a, std::optional<int64_t> n, int64_t axis,
              const std::string& norm) {
  std::optional<Shape> s;
  if (n) s = Shape{*n};
  return fft_core(op, type, a, s, Axes{axis}, norm);
}

int64_t axis_len(const char* op, const Array& a, int64_t axis) {
  const int64_t r = a.ndim();
  if (axis < -r || axis >= r) fail(op, "axis ", axis, " is out of range for ", a.aval().str());
  return a.shape()[axis < 0 ? axis + r : axis];
}

}  // namespace

Array fft(const Array& a, std::optional<int64_t> n, int64_t axis, const std::string& norm) {
  return core_1d("fft", FftType::kFft, a, n, axis, norm);
}
Array ifft(const Array& a, std::optional<int64_t> n, int64_t axis, const std::string& norm) {
  return core_1d("ifft", FftType::kIfft, a, n, axis, norm);
}
Array rfft(const Array& a, std::optional<int64_t> n, int64_t axis, const std::string& norm) {
  return core_1d("rfft", FftType::kRfft, a, n, axis, norm);
}
Array irfft(const Array& a, std::optional<int64_t> n, int64_t axis, const std::string& norm) {
  return core_1d("irfft", FftType::kIrfft, a, n, axis, norm);
}
Array hfft(const Array& a, std::optional<int64_t> n, int64_t axis, const std::string& norm) {
  detail::check_valid("hfft", a);
  const int64_t nn = n ? *n : (axis_len("hfft", a, axis) - 1) * 2;
  return core_1d("hfft", FftType::kIrfft, conj(a), n, axis, norm) * Array(double(nn));
}
Array ihfft(const Array& a, std::optional<int64_t> n, int64_t axis, const std::string& norm) {
  detail::check_valid("ihfft", a);
  const int64_t nn = n ? *n : axis_len("ihfft", a, axis);
  return conj(core_1d("ihfft", FftType::kRfft, a, n, axis, norm)) * Array(1.0 / double(nn));
}

Array fft2(const Array& a, std::optional<Shape> s, const Axes& axes, const std::string& norm) {
  return fft_core("fft2", FftType::kFft, a, s, axes, norm);
}
Array ifft2(const Array& a, std::optional<Shape> s, const Axes& axes, const std::string& norm) {
  return fft_core("ifft2", FftType::kIfft, a, s, axes, norm);
}
Array rfft2(const Array& a, std::optional<Shape> s, const Axes& axes, const std::string& norm) {
  return fft_core("rfft2", FftType::kRfft, a, s, axes, norm);
}
Array irfft2(const Array& a, std::optional<Shape> s, const Axes& axes, const std::string& norm) {
  return fft_core("irfft2", FftType::kIrfft, a, s, axes, norm);
}

Array fftn(const Array& a, std::optional<Shape> s, std::optional<Axes> axes,
           const std::string& norm) {
  return fft_core("fftn", FftType::kFft, a, s, axes, norm);
}
Array ifftn(const Array& a, std::optional<Shape> s, std::optional<Axes> axes,
            const std::string& norm) {
  return fft_core("ifftn", FftType::kIfft, a, s, axes, norm);
}
Array rfftn(const Array& a, std::optional<Shape> s, std::optional<Axes> axes,
            const std::string& norm) {
  return fft_core("rfftn", FftType::kRfft, a, s, axes, norm);
}
Array irfftn(const Array& a, std::optional<Shape> s, std::optional<Axes> axes,
             const std::string& norm) {
  return fft_core("irfftn", FftType::kIrfft, a, s, axes, norm);
}

}  // namespace graft::fft
