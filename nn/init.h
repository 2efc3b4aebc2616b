// Parameter initializers (jax.nn.initializers semantics). Each takes a core/random/random.h key, a
// shape and a dtype and returns a fresh array.
//
// Fans follow JAX's variance_scaling with in_axis = -2, out_axis = -1: for a weight of shape
// [..., in, out], fan_in = in * receptive and fan_out = out * receptive, where receptive is
// the product of the other dims (1 for a matrix; a kernel's spatial size). A 1-D shape has
// fan_in = fan_out = its size. Errors: graft::Error for an empty shape or bad scale.
#pragma once

#include "core/array.h"
#include "core/dtype/dtype.h"
#include "core/shape.h"

namespace graft::nn {

enum class FanMode { kFanIn, kFanOut, kFanAvg, kFanGeoAvg };
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
// [-sqrt(3 variance), sqrt(3 variance)]. As in JAX, variance and the std are computed in
// `dtype` and the unit sample (uniform on [-1, 1)) is scaled by them, so f32 results equal
// jax.nn.initializers.variance_scaling's bit for bit (tests/nn/jax_nn_parity_test.cc).
// kFanGeoAvg: fan = sqrt(fan_in * fan_out). graft keeps JAX's default in_axis = -2,
// out_axis = -1 and no batch axis; unlike JAX it also accepts a 1-D shape (see above).
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

// LeCun: scale 1, fan_in (lecun_normal draws a truncated normal, as in JAX).
Array lecun_uniform(const Array& key, const Shape& shape, DType dtype = DType::kF32);
Array lecun_normal(const Array& key, const Shape& shape, DType dtype = DType::kF32);
// JAX's names for the above: glorot_* = xavier_*, he_* = kaiming_* (fan_in).
Array glorot_uniform(const Array& key, const Shape& shape, DType dtype = DType::kF32);
Array glorot_normal(const Array& key, const Shape& shape, DType dtype = DType::kF32);
Array he_uniform(const Array& key, const Shape& shape, DType dtype = DType::kF32);
Array he_normal(const Array& key, const Shape& shape, DType dtype = DType::kF32);

// jax.nn.initializers.uniform(scale): uniform on [0, scale).
Array uniform_init(const Array& key, const Shape& shape, double scale = 1e-2,
                   DType dtype = DType::kF32);
// jax.nn.initializers.constant / zeros / ones (the key is unused, as in JAX; suffixed so they
// do not hide graft::zeros / ones inside namespace nn).
Array constant_init(const Array& key, const Shape& shape, double value, DType dtype = DType::kF32);
Array zeros_init(const Array& key, const Shape& shape, DType dtype = DType::kF32);
Array ones_init(const Array& key, const Shape& shape, DType dtype = DType::kF32);

// jax.random.orthogonal's sampling for an n x m matrix: Q of the QR decomposition of a
// normal (max(n, m), min(n, m)) sample, columns signed so that diag(R) > 0, transposed when
// n < m. The normal sample is JAX's bit for bit; the QR is graft's own (Householder
// reflections in f64 built from ops: O(max * min^2) work in min(n, m) steps, fine for
// layer-sized weights), so the result matches JAX's LAPACK QR to rounding (~1e-6 in f32),
// not bit for bit. Floating dtypes only.
Array random_orthogonal(const Array& key, int64_t n, int64_t m, DType dtype = DType::kF32);
// jax.nn.initializers.orthogonal(scale, column_axis): the shape flattened to (prod of the
// other dims, shape[column_axis]) gets orthonormal columns (or rows, when there are fewer
// rows than columns), times scale. Needs rank >= 2; a shape with a zero dim gives zeros.
Array orthogonal(const Array& key, const Shape& shape, double scale = 1.0, int64_t column_axis = -1,
                 DType dtype = DType::kF32);
// jax.nn.initializers.delta_orthogonal: rank 3, 4 or 5, shape[-1] >= shape[-2]; zeros with
// an orthogonal(scale, column_axis) [in, out] matrix at the spatial center.
Array delta_orthogonal(const Array& key, const Shape& shape, double scale = 1.0,
                       int64_t column_axis = -1, DType dtype = DType::kF32);

// (fan_in, fan_out) of a shape, as used above.
std::pair<double, double> compute_fans(const Shape& shape);

// keys[i] of random::split(key, n) as a key of shape (2,).
Array key_at(const Array& keys, int64_t i);

}  // namespace graft::nn
