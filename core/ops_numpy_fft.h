// The jnp.fft helpers that need no complex numbers (issue 17), with JAX's names and
// defaults, in namespace graft::fft: the sample frequencies and the spectrum shifts. The
// transforms themselves (fft, ifft, rfft, irfft, their 2-D / n-D forms, hfft, ihfft) need a
// complex dtype, which graft does not have yet: they are not here.
#pragma once

#include <optional>

#include "core/array.h"
#include "core/ops.h"  // Axes; ops.h includes this header at its end

namespace graft::fft {

// jnp.fft.fftfreq(n, d=1.0, dtype=f32): [0, 1, ..., (n-1)//2, -(n//2), ..., -1] / (d * n),
// computed in `dtype` (floating dtypes only; others are an error).
Array fftfreq(int64_t n, double d = 1.0, DType dtype = DType::kF32);
// jnp.fft.rfftfreq(n, d=1.0, dtype=f32): [0, 1, ..., n//2] / (d * n), n//2 + 1 values (n = 0
// gives [nan], as in JAX).
Array rfftfreq(int64_t n, double d = 1.0, DType dtype = DType::kF32);
// jnp.fft.fftshift(x, axes=None): rolls each of `axes` (all axes when none) by dim // 2, so
// the zero frequency moves to the centre. ifftshift rolls by -(dim // 2), its inverse.
Array fftshift(const Array& x, const std::optional<Axes>& axes = std::nullopt);
Array ifftshift(const Array& x, const std::optional<Axes>& axes = std::nullopt);

}  // namespace graft::fft
