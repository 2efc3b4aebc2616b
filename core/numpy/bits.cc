// jax.numpy integer and bit functions (core/numpy/bits.h), after JAX 0.10.2's
// lax_numpy.py (gcd, lcm, packbits, unpackbits) and ufuncs.py (bitwise_count, right_shift).
#include "core/numpy/bits.h"

#include <cstdint>
#include <vector>

#include "core/error.h"
#include "core/numpy/numpy.h"
#include "core/lax/util.h"
#include "core/primitives/control.h"

namespace graft {

using detail::promote_and_broadcast;

namespace {

// promote_args_numeric, then a check that the result is an integer type: bool becomes the
// default int (i32), floats are an error naming op.
std::vector<Array> integer_operands(const char* op, const std::vector<Array>& xs) {
  std::vector<Array> out = promote_and_broadcast(op, xs);
  if (out[0].dtype() == DType::kBool) {
    for (Array& x : out) x = detail::convert(x, DType::kI32, x.weak_type());
  }
  if (!is_integral(out[0].dtype())) {
    fail(op, "arguments must be integers, got ", dtype_name(out[0].dtype()));
  }
  return out;
}

// b, with 1 where b is 0: a divisor that never traps (the quotient is masked out there).
Array nonzero_divisor(const Array& b) { return where(equal(b, 0), ones_like(b), b); }

// The number of 1 bits of each u32, by the SWAR sum of bit fields.
Array popcount_u32(Array v) {
  v = v - bitwise_and(shift_right_logical(v, Array(1)), Array(0x55555555));
  v = bitwise_and(v, Array(0x33333333)) +
      bitwise_and(shift_right_logical(v, Array(2)), Array(0x33333333));
  v = bitwise_and(v + shift_right_logical(v, Array(4)), Array(0x0F0F0F0F));
  return shift_right_logical(v * Array(0x01010101), Array(24));
}

// An axis argument of packbits / unpackbits: none flattens a to 1-D (axis 0).
std::pair<Array, int64_t> along(const char* op, const Array& a, std::optional<int64_t> axis) {
  if (!axis) return {ravel(a), 0};
  return {a, normalize_axis(op, *axis, a.ndim())};
}

void check_bitorder(const char* op, const std::string& bitorder) {
  if (bitorder != "big" && bitorder != "little") {
    fail(op, "bitorder must be either 'little' or 'big', got '", bitorder, "'");
  }
}

// The bit positions 0..7 of a byte's 8 elements (u8), highest first for "big".
Array bit_positions(const std::string& bitorder) {
  std::vector<uint8_t> v(8);
  for (int k = 0; k < 8; ++k) v[k] = static_cast<uint8_t>(bitorder == "big" ? 7 - k : k);
  return array(v);
}

}  // namespace

Array gcd(const Array& x1, const Array& x2) {
  std::vector<Array> xs = promote_and_broadcast("gcd", {x1, x2});
  if (!is_integral(xs[0].dtype())) {
    fail("gcd", "arguments must be integers, got ", dtype_name(xs[0].dtype()));
  }
  // JAX's loop: while any x2 != 0, (x1, x2) <- (x2, x1 rem x2) where x2 != 0, larger first.
  FlatFn cond = [](const std::vector<Array>& c) {
    return std::vector<Array>{any(not_equal(c[1], 0))};
  };
  FlatFn body = [](const std::vector<Array>& c) {
    Array nz = not_equal(c[1], 0);
    Array a = where(nz, c[1], c[0]);
    Array b = where(nz, fmod(c[0], c[1]), zeros_like(c[1]));  // fmod: x % 0 is 0
    Array swap = less(a, b);
    return std::vector<Array>{where(swap, b, a), where(swap, a, b)};
  };
  return detail::bind_while(cond, body, {}, {}, {abs(xs[0]), abs(xs[1])})[0];
}

Array lcm(const Array& x1, const Array& x2) {
  std::vector<Array> xs = promote_and_broadcast("lcm", {x1, x2});
  if (!is_integral(xs[0].dtype())) {
    fail("lcm", "arguments must be integers, got ", dtype_name(xs[0].dtype()));
  }
  Array a = abs(xs[0]), b = abs(xs[1]);
  Array d = gcd(a, b);
  return where(equal(d, 0), zeros_like(d), a * floor_divide(b, nonzero_divisor(d)));
}

Array bitwise_count(const Array& x) {
  detail::check_valid("bitwise_count", x);
  Array a = abs(integer_operands("bitwise_count", {x})[0]);
  Array count;
  switch (a.dtype()) {
    case DType::kU8:
    case DType::kU16:
      count = popcount_u32(astype(a, DType::kU32));
      break;
    case DType::kI8:
    case DType::kI16:  // |x| of a narrow signed int fits its unsigned type (MIN wraps to MIN)
      count = popcount_u32(astype(bitcast_convert_type(a, a.dtype() == DType::kI8 ? DType::kU8
                                                                                 : DType::kU16),
                                  DType::kU32));
      break;
    case DType::kI32:
      count = popcount_u32(bitcast_convert_type(a, DType::kU32));
      break;
    case DType::kI64:
    case DType::kU64: {  // the two 32-bit halves
      Array u = a.dtype() == DType::kU64 ? a : bitcast_convert_type(a, DType::kU64);
      count = popcount_u32(astype(bitwise_and(u, scalar(0xFFFFFFFF, DType::kU64)), DType::kU32)) +
              popcount_u32(astype(shift_right_logical(u, scalar(32, DType::kU64)), DType::kU32));
      break;
    }
    default:
      count = popcount_u32(a);
  }
  return astype(count, DType::kU8);
}

Array right_shift(const Array& x1, const Array& x2) {
  detail::check_valid("right_shift", x1);
  detail::check_valid("right_shift", x2);
  std::vector<Array> xs = integer_operands("right_shift", {x1, x2});
  const Array &x = xs[0], &s = xs[1];
  const int bits = static_cast<int>(dtype_size(x.dtype()) * 8);
  // Counts outside [0, bits) are XLA's "too large" shifts; the kernel only sees valid ones.
  Array valid = less(s, bits);
  if (!is_unsigned(x.dtype())) valid = logical_and(valid, greater_equal(s, 0));
  Array s_ok = where(valid, s, zeros_like(s));
  if (is_unsigned(x.dtype())) {
    return where(valid, shift_right_logical(x, s_ok), zeros_like(x));
  }
  // Arithmetic: a negative x is ~(~x >> s), where ~x >= 0 shifts in zeros.
  Array neg = less(x, 0);
  Array shifted = where(neg, bitwise_not(shift_right_logical(bitwise_not(x), s_ok)),
                        shift_right_logical(x, s_ok));
  return where(valid, shifted, where(neg, full_like(x, -1), zeros_like(x)));
}

Array packbits(const Array& a, std::optional<int64_t> axis, const std::string& bitorder) {
  detail::check_valid("packbits", a);
  if (!is_integral(a.dtype()) && a.dtype() != DType::kBool) {
    fail("packbits", "expected an integer or boolean array, got ", dtype_name(a.dtype()));
  }
  check_bitorder("packbits", bitorder);
  auto [arr, ax] = along("packbits", astype(not_equal(a, 0), DType::kU8), axis);
  arr = swapaxes(arr, ax, -1);
  const int64_t n = arr.shape().back();
  if (n % 8) {
    std::vector<std::pair<int64_t, int64_t>> widths(arr.ndim(), {0, 0});
    widths.back() = {0, 8 - n % 8};
    arr = pad(arr, widths);
  }
  Shape grouped(arr.shape().begin(), arr.shape().end() - 1);
  grouped.push_back((n + 7) / 8);
  grouped.push_back(8);
  Array packed = sum(shift_left(reshape(arr, grouped), bit_positions(bitorder)), {-1});
  return swapaxes(astype(packed, DType::kU8), ax, -1);
}

Array unpackbits(const Array& a, std::optional<int64_t> axis, std::optional<int64_t> count,
                 const std::string& bitorder) {
  detail::check_valid("unpackbits", a);
  if (a.dtype() != DType::kU8) {
    fail("unpackbits", "expected an input array of unsigned byte data type, got ",
         dtype_name(a.dtype()));
  }
  check_bitorder("unpackbits", bitorder);
  auto [arr, ax] = along("unpackbits", a, axis);
  arr = swapaxes(arr, ax, -1);
  Array masks = shift_left(full({8}, 1, DType::kU8), bit_positions(bitorder));
  Array bits = astype(greater(bitwise_and(expand_dims(arr, {-1}), masks), 0),
                      DType::kU8);
  Shape flat(arr.shape().begin(), arr.shape().end() - 1);
  flat.push_back(arr.shape().back() * 8);
  Array unpacked = reshape(bits, flat);
  if (count) {
    const int64_t have = flat.back();
    if (*count > have) {
      std::vector<std::pair<int64_t, int64_t>> widths(unpacked.ndim(), {0, 0});
      widths.back() = {0, *count - have};
      unpacked = pad(unpacked, widths);
    } else {
      unpacked = slice_axis(unpacked, -1, std::nullopt, *count);
    }
  }
  return swapaxes(unpacked, ax, -1);
}

}  // namespace graft
