// jax.numpy's complex-number functions beyond lax's (core/lax/complex.h): angle, iscomplex /
// isreal, iscomplexobj / isrealobj, sort_complex.
#pragma once

#include <string_view>
#include <vector>

#include "core/array.h"
#include "core/lax/complex.h"

namespace graft {

// jnp.angle(z, deg=False): atan2(imag(z), real(z)); integer and bool inputs, and floating
// 0-d inputs, are computed in f32 first, as in JAX. In degrees when `deg`.
Array angle(const Array& z, bool deg = false);
Array iscomplex(const Array& x);  // bool array of x's shape: imag(x) != 0
Array isreal(const Array& x);     // bool array of x's shape: imag(x) == 0
bool iscomplexobj(const Array& x);
bool isrealobj(const Array& x);
// jnp.sort_complex(a): sorted along the last axis by real part, then imaginary part; the
// result is complex (c64 for real inputs other than f64, as JAX).
Array sort_complex(const Array& a);

}  // namespace graft
