#include "nn/init.h"

#include <cmath>

#include "core/error.h"
#include "core/ops.h"
#include "core/random.h"

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
                                          : (fan_in + fan_out) / 2;
  if (!(fan > 0)) fail("variance_scaling", "shape ", shape_str(shape), " has a zero fan");
  double variance = scale / fan;
  switch (distribution) {
    case Distribution::kNormal:
      return random::normal(key, shape, dtype) * std::sqrt(variance);
    case Distribution::kTruncatedNormal:
      // The std of N(0, 1) truncated to (-2, 2), as in JAX.
      return random::truncated_normal(key, -2.0, 2.0, shape, dtype) *
             (std::sqrt(variance) / 0.87962566103423978);
    case Distribution::kUniform: {
      double limit = std::sqrt(3.0 * variance);
      return random::uniform(key, shape, dtype, -limit, limit);
    }
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

}  // namespace graft::nn
