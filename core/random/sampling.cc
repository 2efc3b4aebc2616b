// Discrete samplers of jax.random: randint, categorical (Gumbel-max) and permutation
// (repeated stable sorts by random keys), composed from public ops.
#include <algorithm>
#include <cmath>
#include <limits>

#include "core/error.h"
#include "core/ops.h"
#include "core/random/random.h"
#include "core/random/internal.h"

namespace graft::random {

using namespace internal;  // NOLINT: the family's own helpers

namespace {

// XLA's unsigned remainder: x % 0 == x.
uint32_t rem(uint32_t x, uint32_t y) { return y == 0 ? x : x % y; }

// JAX's _randint for a 32-bit dtype (i32 or u32) with int64 bounds.
Array randint32(const Array& key, const Shape& shape, int64_t minval, int64_t maxval, DType dtype) {
  int64_t lo = dtype == DType::kI32 ? std::numeric_limits<int32_t>::min() : 0;
  int64_t hi = dtype == DType::kI32 ? std::numeric_limits<int32_t>::max()
                                    : std::numeric_limits<uint32_t>::max();
  bool maxval_out_of_range = maxval > hi;
  minval = std::clamp(minval, lo, hi);
  maxval = std::clamp(maxval, lo, hi);
  // The span and 2^32 mod span are parameters, computed here the way JAX computes them in
  // u32 (wrapping): span 2^32 wraps to 0, and XLA's rem by 0 then passes values through.
  auto span = static_cast<uint32_t>(maxval - minval);
  if (maxval <= minval) span = 1;
  if (maxval_out_of_range && maxval > minval) span += 1;
  uint32_t mult = rem(65536u, span);
  mult = rem(mult * mult, span);

  Array keys = random::split(key, 2);
  Array higher = bits32(key_at(keys, 0), shape), lower = bits32(key_at(keys, 1), shape);
  Array s = u32(span);
  // u32 arithmetic wraps (when span > 2^16 the product can overflow): that is JAX's result.
  Array offset = (higher % s * u32(mult) + lower % s) % s;
  // minval + offset is in range; adding in u32 avoids signed overflow in between.
  return astype(u32(static_cast<uint32_t>(minval)) + offset, dtype);
}

}  // namespace

Array randint(const Array& key, const Shape& shape, int64_t minval, int64_t maxval, DType dtype) {
  check_key("randint", key);
  check_shape("randint", shape);
  switch (dtype) {
    case DType::kI32:
    case DType::kU32:
      return randint32(key, shape, minval, maxval, dtype);
    case DType::kU8:
      // Narrow types sample as i32 with bounds clipped to the type (maxval up to 256).
      return astype(randint32(key, shape, std::clamp<int64_t>(minval, 0, 255),
                              std::clamp<int64_t>(maxval, 0, 256), DType::kI32),
                    dtype);
    case DType::kI64:
      fail("randint", "i64 needs 64-bit unsigned arithmetic (JAX's x64 mode); use i32 or u32");
    default:
      fail("randint", "dtype must be an integer type, got ", dtype_name(dtype));
  }
}

Array categorical(const Array& key, const Array& logits, int64_t axis, std::optional<Shape> shape) {
  check_key("categorical", key);
  if (!logits.valid()) fail("categorical", "got an empty Array handle as logits");
  if (!is_floating(logits.dtype())) {
    fail("categorical", "logits must be floating, got ", logits.aval().str());
  }
  if (logits.ndim() == 0) fail("categorical", "logits must have at least one dimension");
  int nd = logits.ndim();
  int ax = normalize_axis("categorical", axis, nd);
  Shape batch = logits.shape();
  batch.erase(batch.begin() + ax);
  Shape out = shape.value_or(batch);
  check_shape("categorical", out);
  if (out.size() < batch.size() || broadcast_shapes("categorical", out, batch) != out) {
    fail("categorical", "shape ", shape_str(out), " is not compatible with the batch shape ",
         shape_str(batch), " of logits ", logits.aval().str());
  }
  size_t prefix = out.size() - batch.size();
  // Gumbel noise over prefix + batch with the class axis inserted; its row-major index is
  // the counter, so the layout matters for bit-exactness.
  Shape noise(out.begin(), out.begin() + static_cast<int64_t>(prefix));
  Shape tail(out.begin() + static_cast<int64_t>(prefix), out.end());
  tail.insert(tail.begin() + ax, logits.shape()[ax]);
  noise.insert(noise.end(), tail.begin(), tail.end());
  Axes lead(prefix);
  for (size_t i = 0; i < prefix; ++i) lead[i] = static_cast<int64_t>(i);
  Array l = prefix ? expand_dims(logits, lead) : logits;
  return argmax(gumbel(key, noise, logits.dtype()) + l, ax - nd);
}

namespace {

// JAX's _shuffle: rounds of stable sorts of x along `axis` by fresh 32-bit keys; enough
// rounds that all keys are distinct with high probability (tjablin's criterion).
Array shuffle(Array key, Array x, int axis) {
  const double uint32max = std::numeric_limits<uint32_t>::max();
  auto rounds = static_cast<int>(
      std::ceil(3 * std::log(std::max<double>(1, x.size())) / std::log(uint32max)));
  for (int r = 0; r < rounds; ++r) {
    Array keys = random::split(key, 2);
    key = key_at(keys, 0);
    x = sort_key_val(bits32(key_at(keys, 1), x.shape()), x, axis).second;
  }
  return x;
}

}  // namespace

Array permutation(const Array& key, int64_t n) {
  check_key("permutation", key);
  // jax.random.permutation(key, -4) returns an empty array (its arange(-4)); a negative
  // count is a mistake, so graft says so.
  if (n < 0) fail("permutation", "n must be non-negative, got ", n);
  return shuffle(key, arange(n), 0);
}

Array permutation(const Array& key, const Array& x, int64_t axis, bool independent) {
  check_key("permutation", key);
  if (!x.valid()) fail("permutation", "got an empty Array handle as x");
  if (x.ndim() == 0) {
    fail("permutation", "x must have at least one dimension (for a range, call ",
         "permutation(key, n)), got ", x.aval().str());
  }
  int ax = normalize_axis("permutation", axis, x.ndim());
  if (independent || x.ndim() == 1) return shuffle(key, x, ax);
  return take(x, shuffle(key, arange(x.shape()[ax]), 0), ax);
}

}  // namespace graft::random
