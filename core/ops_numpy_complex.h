// jax.numpy's complex-number functions (issue 17). graft has no complex dtype yet, so every
// array is real and these take JAX's real-input path: real(x) is x, imag(x) zeros of x's
// dtype, conj(x) x, angle(x) atan2(0, x) (0 or pi), iscomplex all false, isreal all true.
// They are exact for every graft array; complex64 / complex128 (and sort_complex, whose
// result is complex) are still missing.
#pragma once

#include "core/array.h"

namespace graft {

Array real(const Array& x);
Array imag(const Array& x);  // zeros of x's shape and dtype
Array conjugate(const Array& x);
inline Array conj(const Array& x) { return conjugate(x); }
// jnp.angle(z, deg=False): atan2(imag(z), real(z)); integer and bool inputs, and floating
// 0-d inputs, are computed in f32 first, as in JAX. In degrees when `deg`.
Array angle(const Array& z, bool deg = false);
Array iscomplex(const Array& x);  // bool array of x's shape: imag(x) != 0
Array isreal(const Array& x);     // bool array of x's shape: imag(x) == 0
bool iscomplexobj(const Array& x);
bool isrealobj(const Array& x);

}  // namespace graft
