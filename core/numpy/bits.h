// jax.numpy integer and bit functions: gcd / lcm, bitwise_count, right_shift,
// packbits / unpackbits. Written after JAX 0.10.2 (lax_numpy.py, ufuncs.py) as compositions of
// graft's ops (shift_right_logical, and / or / xor, while_loop...), no new primitive, so vmap
// and jit work through them. Integer results: no derivatives. Included at the end of
// core/ops.h; definitions in core/numpy/bits.cc.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "core/array.h"

namespace graft {

// Greatest common divisor of |x1| and |x2| (promoted, broadcast; integers only):
// gcd(0, 0) = 0. Like JAX, Euclid's algorithm in a while_loop over the whole array.
Array gcd(const Array& x1, const Array& x2);
// Least common multiple of |x1| and |x2|: 0 where either is 0 (integers only).
Array lcm(const Array& x1, const Array& x2);
// The number of 1 bits of |x| (u8), like numpy; bool counts as an integer.
Array bitwise_count(const Array& x);
// x1 >> x2: arithmetic for signed, logical for unsigned integers (bool promotes to i32).
// Shift counts outside [0, bits) give 0, or -1 for a negative signed x1, as XLA's shifts do.
Array right_shift(const Array& x1, const Array& x2);
inline Array bitwise_right_shift(const Array& x1, const Array& x2) {
  return right_shift(x1, x2);
}
// The elements' truth (x != 0) packed 8 to a u8 along axis (flattened if none), the last byte
// padded with 0 bits; bitorder "big" (first element in the high bit) or "little".
Array packbits(const Array& a, std::optional<int64_t> axis = std::nullopt,
               const std::string& bitorder = "big");
// The inverse: each u8 of `a` becomes 8 u8 bits along axis (flattened if none); count keeps the
// first `count` bits (zero-padded when larger).
Array unpackbits(const Array& a, std::optional<int64_t> axis = std::nullopt,
                 std::optional<int64_t> count = std::nullopt,
                 const std::string& bitorder = "big");

}  // namespace graft
