// Helpers shared by core/random*.cc (not part of the public API).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string_view>
#include <utility>

#include "core/array.h"

namespace graft::random::internal {

Array u32(uint32_t v);  // strongly typed scalars
Array i64(int64_t v);
void check_key(std::string_view op, const Array& key);  // u32[2], else "[op] ..."
std::pair<Array, Array> key_words(const Array& key);    // the two u32 scalars
// threefry2x32(key, hi(i), lo(i)) over the row-major flat index i of `shape`.
std::pair<Array, Array> block(const Array& key, const Shape& shape);
Array bits32(const Array& key, const Shape& shape);  // y1 ^ y2: JAX's 32-bit random bits
Array key_at(const Array& keys, int64_t i);          // keys[i] of a u32[n, 2] split

// Uniform in [minval, maxval) for minval / maxval scalar arrays of the float `dtype`, the
// way JAX computes it. `exact_product`: f * (maxval - minval) is known to be exact, so a
// plain multiply-add equals XLA's FMA.
Array uniform_between(const Array& key, const Shape& shape, DType dtype, const Array& minval,
                      const Array& maxval, bool exact_product);

// ---- shared by the samplers (core/random/floats.cc)
void check_float(std::string_view op, DType dtype);  // "[op] dtype must be floating"
double host_round(double v, DType dtype);            // v rounded to dtype
double next_toward(double v, DType dtype, double dir);  // one ulp of dtype toward dir
// Floats in [0, 1) from threefry outputs (y1, y2) of any (equal) shape, as JAX's _uniform.
Array unit_float_words(const Array& y1, const Array& y2, DType dtype);
Array unit_float(const Array& key, const Shape& shape, DType dtype);
// JAX's uniform(key, shape, dtype, minval=tiny, maxval=1) (gumbel, logistic).
Array uniform_tiny_to_one(const Array& key, const Shape& shape, DType dtype);

// ---- parameters of the distributions (core/random/continuous.cc)
// JAX's _check_broadcast_shapes: `shape` if given (the parameters must broadcast into it
// exactly), else the parameters' broadcast shape.
Shape param_shape(std::string_view op, const std::optional<Shape>& shape,
                  std::initializer_list<const Array*> params);
// The parameter converted to dtype (an empty handle is an error naming op).
Array param(std::string_view op, const Array& p, DType dtype);

}  // namespace graft::random::internal
