// Counter-based random numbers: Threefry-2x32 keys, bit for bit JAX's jax.random with its
// default configuration (see tools/jax_random_algorithms.md and
// tests/core/random/random_test.cc for what is checked against JAX and how the vectors were made).
//
// A key is a u32 array of shape (2,), like jax.random.PRNGKey. Keys are values: split them,
// never reuse one for two purposes. Every draw is a lazy graph around the threefry2x32
// primitive. f32 / f16 / bf16 results equal JAX's on XLA:CPU exactly; f64 normal, gumbel and
// truncated_normal differ from JAX's x64 mode by a few ulp (different f64 log / erf_inv).
// Call these qualified (random::split): argument-dependent lookup also finds graft::split.
// Errors: graft::Error "[op] ..." for a bad key, shape or dtype.
#pragma once

#include <cstdint>
#include <optional>
#include <utility>

#include "core/array.h"
#include "core/ops.h"
#include "core/random/distributions.h"  // the other distributions of jax.random

namespace graft::random {

// jax.random.PRNGKey(seed) with JAX's default 32-bit mode: (0, seed mod 2^32).
Array key(int64_t seed);
Array split(const Array& key, int64_t num = 2);     // u32[num, 2]
Array split(const Array& key, const Shape& shape);  // u32[*shape, 2]
Array fold_in(const Array& key, uint32_t data);
Array fold_in(const Array& key, const Array& data);  // data: scalar integer array

// lax.threefry2x32_p: the Threefry-2x32 block cipher (20 rounds), elementwise over x.
std::pair<Array, Array> threefry2x32(const Array& k1, const Array& k2, const Array& x1,
                                     const Array& x2);

// Uniform random bits of `shape` (jax.random.bits): dtype u32 (the default), u8, u16 or u64.
Array bits(const Array& key, const Shape& shape, DType dtype = DType::kU32);
// Uniform in [minval, maxval) (f32, f64, f16 or bf16; bf16 has only 7 random bits, as in
// JAX).
Array uniform(const Array& key, const Shape& shape = {}, DType dtype = DType::kF32,
              double minval = 0.0, double maxval = 1.0);
// Bounds as arrays (converted to dtype), broadcast into `shape` as JAX's: each element drawn
// in its own [minval, maxval), the same bits as jax.random.uniform.
Array uniform(const Array& key, const Shape& shape, DType dtype, const Array& minval,
              const Array& maxval);
Array normal(const Array& key, const Shape& shape = {}, DType dtype = DType::kF32);
// Normal truncated to the open interval (lower, upper).
Array truncated_normal(const Array& key, double lower, double upper, const Shape& shape = {},
                       DType dtype = DType::kF32);
// Standard Gumbel samples (JAX's default mode "low").
Array gumbel(const Array& key, const Shape& shape = {}, DType dtype = DType::kF32);
Array bernoulli(const Array& key, double p = 0.5, const Shape& shape = {});
// p as a floating array, one probability per element: `shape` when given (p must broadcast
// into it), else p's shape; drawn as JAX's, uniform(key, shape, p's dtype) < p (a weak p, as a
// C++ double makes, is f32).
Array bernoulli(const Array& key, const Array& p,
                const std::optional<Shape>& shape = std::nullopt);
// Integers in [minval, maxval) of dtype i32, u32 or u8 (bounds clip to the dtype; u8 samples
// as i32 like JAX). maxval <= minval gives minval. i64 would need JAX's x64 arithmetic.
Array randint(const Array& key, const Shape& shape, int64_t minval, int64_t maxval,
              DType dtype = DType::kI32);
// Samples indices from unnormalized log-probabilities along `axis`. `shape` defaults to
// logits.shape without `axis`.
Array categorical(const Array& key, const Array& logits, int64_t axis = -1,
                  std::optional<Shape> shape = std::nullopt);
// A shuffled arange(n) (i32), or x shuffled along `axis`: whole slices move together unless
// `independent`, which shuffles each 1-D slice along `axis` on its own.
Array permutation(const Array& key, int64_t n);
Array permutation(const Array& key, const Array& x, int64_t axis = 0, bool independent = false);

namespace detail {
// JAX's _random_bits(key, bit_width, shape) for 8, 16, 32 or 64 bits. graft has no u16 or
// u64: widths up to 32 come back as u32 holding the low bits, 64 as i64 holding the bits.
Array random_bits(const Array& key, int bit_width, const Shape& shape);
}  // namespace detail

}  // namespace graft::random
