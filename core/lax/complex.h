// Complex numbers at lax level: real, imag, conj, complex over complex64 / complex128 arrays
// and, as JAX, real ones: real(x) is x, imag(x) zeros, conj(x) x for a real x. Complex
// arithmetic, the transcendental functions, comparisons (lexicographic, as jnp), reductions,
// cumulative sums and products, sorting and gathers / scatters are written with these over the
// real and imaginary parts (core/lax/complex_math.cc, core/lax/complex_reduce.cc); ops without a
// complex case reject complex operands with "[op] does not support complex values".
// core/lax/lax.h includes this header.
#pragma once

#include <string_view>
#include <vector>

#include "core/array.h"
#include "core/primitives/list.h"
#include "core/shape.h"

namespace graft {

Array real(const Array& x);
Array imag(const Array& x);  // zeros of x's shape and dtype for a real x
Array conjugate(const Array& x);
inline Array conj(const Array& x) { return conjugate(x); }
// lax.complex(x, y): x + i y, after jnp's promotion (integers and bool become f32, f64 gives
// c128) and broadcasting.
Array complex(const Array& x, const Array& y);
namespace detail {
// The complex cases of the public elementwise ops (core/lax/elementwise_ops.cc calls them when an
// operand is complex): operands already promoted to one complex dtype and broadcast.
Array complex_add(const Array& a, const Array& b);
Array complex_subtract(const Array& a, const Array& b);
Array complex_multiply(const Array& a, const Array& b);
Array complex_divide(const Array& a, const Array& b);
Array complex_neg(const Array& z);
Array complex_abs(const Array& z);  // real: |z| = hypot(re, im)
Array complex_exp(const Array& z);
// core/lax/complex_math.cc: the complex case of the unary op `id` (an error naming `op` for
// one JAX does not define on complex values), of power, and of the comparisons and max / min
// (lexicographic: real part, then imaginary part, as jnp).
Array complex_unary(const char* op, PrimitiveId id, const Array& z);
Array complex_power(const Array& a, const Array& b);
Array complex_compare(PrimitiveId id, const Array& a, const Array& b);
// core/lax/complex_reduce.cc: prod / max / min over sorted, normalized axes (a pairwise tree of
// complex products or lexicographic picks; max / min of an empty axis are the caller's error),
// and the lexicographic argsort along `axis` (stable, as jnp.argsort).
Array complex_reduce(PrimitiveId id, const Array& z, const std::vector<int>& axes, bool keepdims);
Array complex_argsort(const Array& z, int axis);
// scatter_mul / min / max of complex updates into a flat complex x at flat positions (negative
// ones wrap once, the rest out of range are dropped), as the primitives do for real values.
Array complex_scatter_reduce(const Array& x, const Array& positions, const Array& updates,
                             PrimitiveId id);
// f applied to the real and imaginary parts apart: the data-movement ops (gather, scatter set /
// add, cumsum) on complex values.
template <typename F>
Array through_parts(const Array& z, F f) {
  return complex(f(real(z)), f(imag(z)));
}
}  // namespace detail

}  // namespace graft
