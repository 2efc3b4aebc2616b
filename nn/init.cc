#include "nn/init.h"

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include "core/error.h"
#include "core/ops.h"
#include "core/random/random.h"

namespace graft::nn {

std::pair<double, double> compute_fans(const Shape& shape) {
  if (shape.empty()) fail("compute_fans", "a scalar has no fans");
  if (shape.size() == 1) return {double(shape[0]), double(shape[0])};
  double receptive = 1;
  for (size_t i = 0; i + 2 < shape.size(); ++i) receptive *= double(shape[i]);
  return {double(shape[shape.size() - 2]) * receptive, double(shape.back()) * receptive};
}

Array key_at(const Array& keys, int64_t i) { return reshape(slice(keys, {i, 0}, {i + 1, 2}), {2}); }

Array normal_init(const Array& key, const Shape& shape, double stddev, DType dtype) {
  return random::normal(key, shape, dtype) * stddev;
}

Array truncated_normal_init(const Array& key, const Shape& shape, double stddev, DType dtype) {
  return random::truncated_normal(key, -2.0, 2.0, shape, dtype) * stddev;
}

Array variance_scaling(const Array& key, const Shape& shape, double scale, FanMode mode,
                       Distribution distribution, DType dtype) {
  if (!(scale > 0)) fail("variance_scaling", "scale must be positive, got ", scale);
  auto [fan_in, fan_out] = compute_fans(shape);
  double fan = mode == FanMode::kFanIn    ? fan_in
               : mode == FanMode::kFanOut ? fan_out
               : mode == FanMode::kFanAvg ? (fan_in + fan_out) / 2
                                          : std::sqrt(fan_in * fan_out);
  if (!(fan > 0)) fail("variance_scaling", "shape ", shape_str(shape), " has a zero fan");
  // JAX rounds the variance to `dtype` and takes the square root (and the division by the
  // truncation constant) in `dtype`: the same steps give the same bits.
  Array variance = scalar(scale / fan, dtype);
  switch (distribution) {
    case Distribution::kNormal:
      return random::normal(key, shape, dtype) * sqrt(variance);
    case Distribution::kTruncatedNormal:
      // The std of N(0, 1) truncated to (-2, 2), as in JAX.
      return random::truncated_normal(key, -2.0, 2.0, shape, dtype) *
             (sqrt(variance) / scalar(0.87962566103423978, dtype));
    case Distribution::kUniform:
      return random::uniform(key, shape, dtype, -1.0, 1.0) * sqrt(3.0 * variance);
  }
  fail("variance_scaling", "unknown distribution");
}

Array xavier_uniform(const Array& key, const Shape& shape, DType dtype) {
  return variance_scaling(key, shape, 1.0, FanMode::kFanAvg, Distribution::kUniform, dtype);
}
Array xavier_normal(const Array& key, const Shape& shape, DType dtype) {
  return variance_scaling(key, shape, 1.0, FanMode::kFanAvg, Distribution::kTruncatedNormal, dtype);
}
Array kaiming_uniform(const Array& key, const Shape& shape, FanMode mode, DType dtype) {
  return variance_scaling(key, shape, 2.0, mode, Distribution::kUniform, dtype);
}
Array kaiming_normal(const Array& key, const Shape& shape, FanMode mode, DType dtype) {
  return variance_scaling(key, shape, 2.0, mode, Distribution::kTruncatedNormal, dtype);
}

Array lecun_uniform(const Array& key, const Shape& shape, DType dtype) {
  return variance_scaling(key, shape, 1.0, FanMode::kFanIn, Distribution::kUniform, dtype);
}
Array lecun_normal(const Array& key, const Shape& shape, DType dtype) {
  return variance_scaling(key, shape, 1.0, FanMode::kFanIn, Distribution::kTruncatedNormal, dtype);
}
Array glorot_uniform(const Array& key, const Shape& shape, DType dtype) {
  return xavier_uniform(key, shape, dtype);
}
Array glorot_normal(const Array& key, const Shape& shape, DType dtype) {
  return xavier_normal(key, shape, dtype);
}
Array he_uniform(const Array& key, const Shape& shape, DType dtype) {
  return kaiming_uniform(key, shape, FanMode::kFanIn, dtype);
}
Array he_normal(const Array& key, const Shape& shape, DType dtype) {
  return kaiming_normal(key, shape, FanMode::kFanIn, dtype);
}

Array uniform_init(const Array& key, const Shape& shape, double scale, DType dtype) {
  return random::uniform(key, shape, dtype) * scalar(scale, dtype);
}
Array constant_init(const Array&, const Shape& shape, double value, DType dtype) {
  return full(shape, value, dtype);
}
Array zeros_init(const Array&, const Shape& shape, DType dtype) { return zeros(shape, dtype); }
Array ones_init(const Array&, const Shape& shape, DType dtype) { return ones(shape, dtype); }

Array random_orthogonal(const Array& key, int64_t n, int64_t m, DType dtype) {
  if (n <= 0 || m <= 0) fail("orthogonal", "needs positive sizes, got ", n, " x ", m);
  if (!is_floating(dtype)) fail("orthogonal", "needs a floating dtype, got ", dtype_name(dtype));
  const int64_t p = std::max(n, m), q = std::min(n, m);
  Array a = astype(random::normal(key, {p, q}, dtype), DType::kF64);
  // Householder QR of the p x q sample: reflector k zeroes column k below the diagonal.
  std::vector<Array> reflectors;
  for (int64_t k = 0; k < q; ++k) {
    Array x = slice(a, {k, k}, {p, k + 1});  // (p - k, 1)
    Array x0 = slice(x, {0, 0}, {1, 1});
    Array norm_x = sqrt(sum(square(x)));
    // alpha = -sign(x0) |x| keeps x - alpha e1 free of cancellation.
    Array alpha = where(x0 >= 0.0, -norm_x, norm_x);
    Array e1 = pad(ones({1, 1}, DType::kF64), {{0, p - k - 1}, {0, 0}});
    Array v = x - alpha * e1;
    v = v / sqrt(sum(square(v)));
    Array v_full = pad(v, {{k, 0}, {0, 0}});  // (p, 1)
    a = a - 2.0 * matmul(v_full, matmul(transpose(v_full), a));
    reflectors.push_back(v_full);
  }
  // The reduced Q = H_0 ... H_{q-1} [I_q; 0], applied right to left.
  Array qm = eye(p, q, 0, DType::kF64);
  for (int64_t k = q - 1; k >= 0; --k) {
    const Array& v = reflectors[k];
    qm = qm - 2.0 * matmul(v, matmul(transpose(v), qm));
  }
  // Sign each column by diag(R), as jax.random.orthogonal does (a unique Q).
  Array diag_r = sum(slice(a, {0, 0}, {q, q}) * eye(q, std::nullopt, 0, DType::kF64), {0});
  qm = qm * reshape(sign(diag_r), {1, q});
  Array out = astype(qm, dtype);
  return n < m ? transpose(out) : out;
}

Array orthogonal(const Array& key, const Shape& shape, double scale, int64_t column_axis,
                 DType dtype) {
  const int64_t rank = int64_t(shape.size());
  if (rank < 2) fail("orthogonal", "needs at least a 2-D shape, got ", shape_str(shape));
  if (column_axis < -rank || column_axis >= rank) {
    fail("orthogonal", "column_axis ", column_axis, " out of range for ", shape_str(shape));
  }
  const int64_t col = column_axis < 0 ? column_axis + rank : column_axis;
  int64_t total = 1;
  for (int64_t d : shape) total *= d;
  if (total == 0) return zeros(shape, dtype);
  const int64_t n_cols = shape[col], n_rows = total / n_cols;
  Shape rest;
  for (int64_t i = 0; i < rank; ++i) {
    if (i != col) rest.push_back(shape[i]);
  }
  rest.push_back(n_cols);
  Array q = reshape(random_orthogonal(key, n_rows, n_cols, dtype), rest);
  return scalar(scale, dtype) * moveaxis(q, -1, col);
}

Array delta_orthogonal(const Array& key, const Shape& shape, double scale, int64_t column_axis,
                       DType dtype) {
  const size_t rank = shape.size();
  if (rank < 3 || rank > 5) {
    fail("delta_orthogonal", "needs a 3-D, 4-D or 5-D shape, got ", shape_str(shape));
  }
  if (shape[rank - 1] < shape[rank - 2]) {
    fail("delta_orthogonal", "fan_in must be <= fan_out, got ", shape_str(shape));
  }
  Array w = orthogonal(key, {shape[rank - 2], shape[rank - 1]}, scale, column_axis, dtype);
  // Put the matrix at index (k - 1) / 2 of every spatial dim by padding with zeros.
  Shape expanded(rank - 2, 1);
  std::vector<std::pair<int64_t, int64_t>> widths;
  for (size_t i = 0; i + 2 < rank; ++i) {
    const int64_t c = (shape[i] - 1) / 2;
    widths.push_back({c, shape[i] - 1 - c});
  }
  expanded.push_back(shape[rank - 2]);
  expanded.push_back(shape[rank - 1]);
  widths.push_back({0, 0});
  widths.push_back({0, 0});
  return pad(reshape(w, expanded), widths);
}

}  // namespace graft::nn
