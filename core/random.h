// Counter-based random numbers: Threefry-2x32 keys, bit for bit JAX's jax.random with its
// default configuration (see tools/jax_random_algorithms.md and
// tests/core/random_test.cc for what is checked against JAX and how the vectors were made).
//
// A key is a u32 array of shape (2,), like jax.random.PRNGKey. Keys are values: split them,
// never reuse one for two purposes.
#pragma once

#include <cstdint>
#include <optional>
#include <utility>

#include "core/array.h"
#include "core/ops.h"

namespace graft::random {

Array key(int64_t seed);                         // jax.random.PRNGKey(seed)
Array split(const Array& key, int64_t num = 2);  // u32[num, 2]
Array fold_in(const Array& key, uint32_t data);
Array fold_in(const Array& key, const Array& data);  // data: scalar integer array

// lax.threefry2x32_p: the Threefry-2x32 block cipher (20 rounds), elementwise over x.
std::pair<Array, Array> threefry2x32(const Array& k1, const Array& k2, const Array& x1,
                                     const Array& x2);

// Uniform random bits: u32 of `shape` (jax.random.bits with the default width).
Array bits(const Array& key, const Shape& shape);
// Uniform in [minval, maxval).
Array uniform(const Array& key, const Shape& shape = {}, DType dtype = DType::kF32,
              double minval = 0.0, double maxval = 1.0);
Array normal(const Array& key, const Shape& shape = {}, DType dtype = DType::kF32);
// Normal truncated to (lower, upper).
Array truncated_normal(const Array& key, double lower, double upper, const Shape& shape = {},
                       DType dtype = DType::kF32);
Array bernoulli(const Array& key, double p = 0.5, const Shape& shape = {});
// Integers in [minval, maxval).
Array randint(const Array& key, const Shape& shape, int64_t minval, int64_t maxval,
              DType dtype = DType::kI32);
// Samples indices from unnormalized log-probabilities along `axis`. `shape` defaults to
// logits.shape without `axis`.
Array categorical(const Array& key, const Array& logits, int64_t axis = -1,
                  std::optional<Shape> shape = std::nullopt);
Array permutation(const Array& key, int64_t n);
Array permutation(const Array& key, const Array& x, int64_t axis = 0);

}  // namespace graft::random
