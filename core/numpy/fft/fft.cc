#include "core/numpy/fft/fft.h"

#include <vector>

#include "core/error.h"
#include "core/numpy/numpy.h"
#include "core/lax/util.h"

namespace graft::fft {
namespace {

void require_freq_args(const char* op, int64_t n, DType dtype) {
  if (n < 0) fail(op, "n must be >= 0, got ", n);
  if (!is_floating(dtype)) fail(op, "dtype must be floating, got ", dtype_name(dtype));
}

// k / (d * n) in `dtype`, as JAX divides: the integers k converted first, d * n rounded once.
Array freqs(const std::vector<double>& k, double d, int64_t n, DType dtype) {
  Array ks = astype(array(k, Shape{static_cast<int64_t>(k.size())}), dtype);
  return ks / scalar(d * static_cast<double>(n), dtype);
}

// Rolls x along `axes` (all axes when none) by sign * dim // 2.
Array shift_half(const char* op, const Array& x, const std::optional<Axes>& axes, int sign) {
  detail::check_valid(op, x);
  Axes ax;
  if (axes) {
    ax = *axes;
  } else {
    for (int64_t i = 0; i < x.ndim(); ++i) ax.push_back(i);
  }
  std::vector<int64_t> shifts;
  for (int64_t a : ax) {
    if (a < -x.ndim() || a >= x.ndim()) {
      fail(op, "axis ", a, " is out of range for shape ", shape_str(x.shape()));
    }
    shifts.push_back(sign * (x.shape()[a < 0 ? a + x.ndim() : a] / 2));
  }
  return roll(x, shifts, ax);
}

}  // namespace

Array fftfreq(int64_t n, double d, DType dtype) {
  require_freq_args("fftfreq", n, dtype);
  std::vector<double> k;
  for (int64_t i = 0; i < n; ++i) k.push_back(static_cast<double>(i <= (n - 1) / 2 ? i : i - n));
  return freqs(k, d, n, dtype);
}

Array rfftfreq(int64_t n, double d, DType dtype) {
  require_freq_args("rfftfreq", n, dtype);
  std::vector<double> k;
  for (int64_t i = 0; i <= n / 2; ++i) k.push_back(static_cast<double>(i));
  return freqs(k, d, n, dtype);
}

Array fftshift(const Array& x, const std::optional<Axes>& axes) {
  return shift_half("fftshift", x, axes, 1);
}

Array ifftshift(const Array& x, const std::optional<Axes>& axes) {
  return shift_half("ifftshift", x, axes, -1);
}

}  // namespace graft::fft
