// Parameter initializers (jax.nn.initializers semantics). Each takes a core/random.h key, a
// shape and a dtype and returns a fresh array.
//
// Fans follow JAX's variance_scaling with in_axis = -2, out_axis = -1: for a weight of shape
// [..., in, out], fan_in = in * receptive and fan_out = out * receptive, where receptive is
// the product of the other dims (1 for a matrix; a kernel's spatial size). A 1-D shape has
// fan_in = fan_out = its size. Errors: graft::Error for an empty shape or bad scale.
#pragma once

#include "core/array.h"
#include "core/dtype.h"
#include "core/shape.h"

namespace graft::nn {

enum class FanMode { kFanIn, kFanOut, kFanAvg };
enum class Distribution { kNormal, kTruncatedNormal, kUniform };

// normal(0, stddev).
Array normal_init(const Array& key, const Shape& shape, double stddev = 0.01,
                  DType dtype = DType::kF32);
// stddev * N(0, 1) truncated to (-2, 2), like jax.nn.initializers.truncated_normal (the
// resulting std is ~0.88 stddev; variance_scaling corrects for that, this does not).
Array truncated_normal_init(const Array& key, const Shape& shape, double stddev = 0.01,
                            DType dtype = DType::kF32);

// variance = scale / fan; normal: std sqrt(variance); truncated normal: std sqrt(variance)
// / 0.8796... (so the truncated samples have the target variance); uniform: in
// [-sqrt(3 variance), sqrt(3 variance)].
Array variance_scaling(const Array& key, const Shape& shape, double scale, FanMode mode,
                       Distribution distribution, DType dtype = DType::kF32);

// Glorot / Xavier: scale 1, fan_avg. (JAX's glorot_normal draws a truncated normal; so does
// xavier_normal here.)
Array xavier_uniform(const Array& key, const Shape& shape, DType dtype = DType::kF32);
Array xavier_normal(const Array& key, const Shape& shape, DType dtype = DType::kF32);
// He / Kaiming: scale 2 (for ReLU), fan_in by default.
Array kaiming_uniform(const Array& key, const Shape& shape, FanMode mode = FanMode::kFanIn,
                      DType dtype = DType::kF32);
Array kaiming_normal(const Array& key, const Shape& shape, FanMode mode = FanMode::kFanIn,
                     DType dtype = DType::kF32);

// (fan_in, fan_out) of a shape, as used above.
std::pair<double, double> compute_fans(const Shape& shape);

// keys[i] of random::split(key, n) as a key of shape (2,).
Array key_at(const Array& keys, int64_t i);

}  // namespace graft::nn
