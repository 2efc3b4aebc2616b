// Keys, raw bits and the float samplers of jax.random, composed from public ops around the
// threefry2x32 primitive, so every draw is a lazy graph (jit / vmap see ordinary nodes).
// The algorithms follow JAX 0.10.2 with its default flags (partitionable Threefry, 32-bit
// seeds); tools/jax_random_algorithms.md states them and the numerics XLA:CPU adds.
#include "core/primitives/random.h"

#include <cmath>
#include <limits>

#include "core/error.h"
#include "core/ops.h"
#include "core/random/random.h"
#include "core/random/internal.h"

namespace graft::random {

namespace internal {

Array u32(uint32_t v) { return array<uint32_t>({v}, Shape{}); }
Array i64(int64_t v) { return array<int64_t>({v}, Shape{}); }

void check_key(std::string_view op, const Array& key) {
  if (!key.valid()) fail(op, "got an empty Array handle as key");
  if (key.dtype() != DType::kU32 || key.shape() != Shape{2}) {
    fail(op, "key must be a u32 array of shape (2,) (from random::key), got ", key.aval().str());
  }
}

std::pair<Array, Array> key_words(const Array& key) {
  return {reshape(slice(key, {0}, {1}), {}), reshape(slice(key, {1}, {2}), {})};
}

// JAX's iota_2x32_shape: the row-major flat index of each element as a 64-bit counter,
// split into (hi, lo) words.
std::pair<Array, Array> counters(const Shape& shape) {
  int64_t n = numel(shape);
  if (n <= int64_t{std::numeric_limits<uint32_t>::max()}) {
    return {broadcast_to(u32(0), shape), reshape(iota(DType::kU32, {n}), shape)};
  }
  Array i = reshape(iota(DType::kI64, {n}), shape);
  return {astype(shift_right_logical(i, i64(32)), DType::kU32), astype(i, DType::kU32)};
}

std::pair<Array, Array> block(const Array& key, const Shape& shape) {
  auto [k1, k2] = key_words(key);
  auto [hi, lo] = counters(shape);
  auto out = graft::bind(std::make_shared<const Threefry2x32>(), {k1, k2, hi, lo});
  return {out[0], out[1]};
}

Array bits32(const Array& key, const Shape& shape) {
  auto [y1, y2] = block(key, shape);
  return y1 ^ y2;
}

Array key_at(const Array& keys, int64_t i) { return reshape(slice(keys, {i, 0}, {i + 1, 2}), {2}); }

}  // namespace internal

using namespace internal;  // NOLINT: this file's own helpers

Array key(int64_t seed) {
  // x64 disabled: the seed wraps to 32 bits and the high word is 0 (PRNGKey(-1) = (0, 2^32-1)).
  return array<uint32_t>({0u, static_cast<uint32_t>(seed)}, Shape{2});
}

Array split(const Array& key, const Shape& shape) {
  check_key("split", key);
  check_shape("split", shape);
  auto [y1, y2] = block(key, shape);
  return stack({y1, y2}, static_cast<int64_t>(shape.size()));
}

Array split(const Array& key, int64_t num) {
  if (num < 0) fail("split", "num must be non-negative, got ", num);
  return random::split(key, Shape{num});
}

Array fold_in(const Array& key, const Array& data) {
  check_key("fold_in", key);
  if (!data.valid()) fail("fold_in", "got an empty Array handle as data");
  if (data.ndim() != 0 || !(is_integral(data.dtype()) || data.dtype() == DType::kBool)) {
    fail("fold_in", "data must be an integer scalar, got ", data.aval().str());
  }
  auto [k1, k2] = key_words(key);
  auto out = graft::bind(std::make_shared<const Threefry2x32>(),
                         {k1, k2, u32(0), astype(data, DType::kU32)});
  return stack({out[0], out[1]});
}

Array fold_in(const Array& key, uint32_t data) { return fold_in(key, u32(data)); }

std::pair<Array, Array> threefry2x32(const Array& k1, const Array& k2, const Array& x1,
                                     const Array& x2) {
  for (const Array* a : {&k1, &k2, &x1, &x2}) {
    if (!a->valid()) fail("threefry2x32", "got an empty Array handle");
    if (a->dtype() != DType::kU32) {
      fail("threefry2x32", "operands must be u32, got ", a->aval().str());
    }
  }
  if (x1.shape() != x2.shape()) {
    fail("threefry2x32", "x1 and x2 must have equal shapes, got ", x1.aval().str(), " and ",
         x2.aval().str());
  }
  auto out = graft::bind(std::make_shared<const Threefry2x32>(), {k1, k2, x1, x2});
  return {out[0], out[1]};
}

namespace detail {

Array random_bits(const Array& key, int bit_width, const Shape& shape) {
  check_key("bits", key);
  check_shape("bits", shape);
  switch (bit_width) {
    case 8:
      return bits32(key, shape) & u32(0xFF);
    case 16:
      return bits32(key, shape) & u32(0xFFFF);
    case 32:
      return bits32(key, shape);
    case 64: {
      // (y1 << 32) | y2 with no xor; i64 shifts wrap like u64.
      auto [y1, y2] = block(key, shape);
      return shift_left(astype(y1, DType::kI64), i64(32)) | astype(y2, DType::kI64);
    }
    default:
      fail("bits", "bit width must be 8, 16, 32 or 64, got ", bit_width);
  }
}

}  // namespace detail

Array bits(const Array& key, const Shape& shape, DType dtype) {
  switch (dtype) {
    case DType::kU32:
      return detail::random_bits(key, 32, shape);
    case DType::kU8:
    case DType::kU16:
      return astype(detail::random_bits(key, dtype == DType::kU8 ? 8 : 16, shape), dtype);
    case DType::kU64:
      return bitcast_convert_type(detail::random_bits(key, 64, shape), DType::kU64);
    default:
      fail("bits", "dtype must be an unsigned integer type (u8, u16, u32, u64), got ",
           dtype_name(dtype));
  }
}

}  // namespace graft::random
