// Helpers shared by core/random*.cc (not part of the public API).
#pragma once

#include <cstdint>
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

}  // namespace graft::random::internal
