// jax.numpy array construction (core/numpy/array_creation.h), after JAX 0.10.2. Index sets
// whose size depends only on static ints (tril_indices...) are computed on the host.
#include "core/numpy/array_creation.h"

#include <cmath>
#include <cstring>
#include <numbers>
#include <vector>

#include "core/buffer.h"
#include "core/error.h"
#include "core/lax/util.h"
#include "core/numpy/numpy.h"

namespace graft {
namespace {

constexpr double kPi = std::numbers::pi;

// Row-major (i, j) with keep(i, j) in an n x m grid.
template <typename Keep>
std::pair<Array, Array> grid_indices(const char* op, int64_t n, int64_t m, Keep keep) {
  if (n < 0 || m < 0) fail(op, "sizes must be >= 0, got ", n, " and ", m);
  std::vector<int32_t> rows, cols;
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < m; ++j) {
      if (keep(i, j)) rows.push_back(static_cast<int32_t>(i)), cols.push_back(static_cast<int32_t>(j));
    }
  }
  return {array(rows), array(cols)};
}

void check_matrix(const char* op, const Array& arr) {
  detail::check_valid(op, arr);
  if (arr.ndim() < 2) fail(op, "arr must have rank >= 2, got shape ", shape_str(arr.shape()));
}

// n values iota * (pi-multiple) / (M - 1) for the cosine windows, or ones for M <= 1.
Array window_n(const char* op, int64_t M) {
  if (M < 0) fail(op, "M must be >= 0, got ", M);
  return iota(DType::kF32, {M}, 0);
}

}  // namespace

std::pair<Array, Array> tril_indices(int64_t n, int64_t k, std::optional<int64_t> m) {
  return grid_indices("tril_indices", n, m.value_or(n),
                      [k](int64_t i, int64_t j) { return j <= i + k; });
}
std::pair<Array, Array> triu_indices(int64_t n, int64_t k, std::optional<int64_t> m) {
  return grid_indices("triu_indices", n, m.value_or(n),
                      [k](int64_t i, int64_t j) { return j >= i + k; });
}
std::pair<Array, Array> tril_indices_from(const Array& arr, int64_t k) {
  check_matrix("tril_indices_from", arr);
  return tril_indices(arr.dim(-2), k, arr.dim(-1));
}
std::pair<Array, Array> triu_indices_from(const Array& arr, int64_t k) {
  check_matrix("triu_indices_from", arr);
  return triu_indices(arr.dim(-2), k, arr.dim(-1));
}

std::vector<Array> diag_indices(int64_t n, int64_t ndim) {
  if (n < 0) fail("diag_indices", "n must be >= 0, got ", n);
  if (ndim < 0) fail("diag_indices", "ndim must be >= 0, got ", ndim);
  return std::vector<Array>(ndim, iota(DType::kI32, {n}, 0));
}
std::vector<Array> diag_indices_from(const Array& arr) {
  check_matrix("diag_indices_from", arr);
  for (int64_t d : arr.shape()) {
    if (d != arr.shape()[0]) {
      fail("diag_indices_from", "all dims must be equal, got ", shape_str(arr.shape()));
    }
  }
  return diag_indices(arr.shape()[0], arr.ndim());
}

Array indices(const Shape& dimensions, DType dtype) {
  if (!is_integral(dtype) && !is_floating(dtype)) {
    fail("indices", "dtype must be numeric, got ", dtype_name(dtype));
  }
  for (int64_t d : dimensions) {
    if (d < 0) fail("indices", "dimensions must be >= 0, got ", shape_str(dimensions));
  }
  std::vector<Array> parts;
  for (size_t i = 0; i < dimensions.size(); ++i) {
    parts.push_back(iota(dtype, dimensions, static_cast<int>(i)));
  }
  if (parts.empty()) return zeros({0}, dtype);
  return stack(parts, 0);
}

Array logspace(double start, double stop, int64_t num, bool endpoint, double base) {
  if (num < 0) fail("logspace", "num must be >= 0, got ", num);
  return power(scalar(base, DType::kF32), linspace(start, stop, num, endpoint, DType::kF32));
}

Array geomspace(double start, double stop, int64_t num, bool endpoint) {
  if (start == 0 || stop == 0) fail("geomspace", "start and stop must be nonzero");
  if (num < 0) fail("geomspace", "num must be >= 0, got ", num);
  // As JAX: in f32, sign(start) * logspace(log10(start / sign), log10(stop / sign)).
  const float sign = start < 0 ? -1.0f : 1.0f;
  const float lo = std::log10(static_cast<float>(start) / sign);
  const float hi = std::log10(static_cast<float>(stop) / sign);
  return logspace(lo, hi, num, endpoint, 10.0) * scalar(sign, DType::kF32);
}

Array vander(const Array& x, std::optional<int64_t> N, bool increasing) {
  detail::check_valid("vander", x);
  if (x.ndim() != 1) fail("vander", "x must be 1-D, got shape ", shape_str(x.shape()));
  const int64_t n = N.value_or(x.shape()[0]);
  if (n < 0) fail("vander", "N must be >= 0, got ", n);
  Array e = iota(x.dtype() == DType::kBool ? DType::kI32 : x.dtype(), {n}, 0);
  if (!increasing) e = flip(e);
  return power(expand_dims(x, {1}), expand_dims(e, {0}));
}

Array empty(const Shape& shape, DType dtype) { return zeros(shape, dtype); }
Array empty_like(const Array& x) {
  detail::check_valid("empty_like", x);
  return zeros_like(x);
}

Array diagflat(const Array& v, int64_t k) {
  detail::check_valid("diagflat", v);
  return diag(ravel(v), k);
}

Array bartlett(int64_t M) {
  Array n = window_n("bartlett", M);
  if (M <= 1) return ones({M});
  return 1.0 - abs(2.0 * n + 1.0 - static_cast<double>(M)) / static_cast<double>(M - 1);
}
Array blackman(int64_t M) {
  Array n = window_n("blackman", M);
  if (M <= 1) return ones({M});
  const double d = static_cast<double>(M - 1);
  return 0.42 - 0.5 * cos(2.0 * kPi * n / d) + 0.08 * cos(4.0 * kPi * n / d);
}
Array hamming(int64_t M) {
  Array n = window_n("hamming", M);
  if (M <= 1) return ones({M});
  return 0.54 - 0.46 * cos(2.0 * kPi * n / static_cast<double>(M - 1));
}
Array hanning(int64_t M) {
  Array n = window_n("hanning", M);
  if (M <= 1) return ones({M});
  return 0.5 * (1.0 - cos(2.0 * kPi * n / static_cast<double>(M - 1)));
}

Array frombuffer(std::string_view buffer, DType dtype, int64_t count, int64_t offset) {
  const int64_t size = static_cast<int64_t>(buffer.size()), item = dtype_size(dtype);
  if (offset < 0 || offset > size) {
    fail("frombuffer", "offset ", offset, " is outside the buffer of ", size, " bytes");
  }
  const int64_t avail = size - offset;
  int64_t n = count;
  if (count < 0) {
    if (avail % item != 0) {
      fail("frombuffer", "buffer size ", avail, " must be a multiple of element size ", item);
    }
    n = avail / item;
  } else if (count * item > avail) {
    fail("frombuffer", "buffer of ", avail, " bytes is smaller than requested size ", count, " x ",
         item);
  }
  auto buf = Buffer::make(static_cast<size_t>(n * item));
  if (n > 0) std::memcpy(buf->data(), buffer.data() + offset, static_cast<size_t>(n * item));
  if (dtype == DType::kBool) {  // graft's bools are 0 / 1 bytes
    auto* b = static_cast<uint8_t*>(buf->data());
    for (int64_t i = 0; i < n; ++i) b[i] = b[i] != 0;
  }
  return Array::from_buffer(std::move(buf), {n}, dtype);
}

}  // namespace graft
