// jnp.fft, with JAX's names, defaults and semantics, in namespace graft::fft: the
// transforms (through lax_fft, core/primitives/fft.h, PocketFFT on the CPU), the sample
// frequencies and the spectrum shifts.
//
// Transforms: fft / ifft / rfft / irfft / hfft / ihfft (1-D, along `axis`, length `n`: the
// input is cropped or zero-padded to n first), fft2 / ifft2 / rfft2 / irfft2 (over `axes`,
// default the last two) and fftn / ifftn / rfftn / irfftn (over `axes`, default all, or the
// last len(s)), with `s` the lengths. norm is "backward" (default: the inverse scaled by 1/N),
// "ortho" (both by 1/sqrt(N)) or "forward" (the forward by 1/N). Real inputs of fft / ifft
// become complex (c64, c128 from f64), integers f32 first; rfft takes real inputs only.
// irfft's default length along the last axis is 2 * (m - 1). Errors name the function.
#pragma once

#include <optional>
#include <string>

#include "core/array.h"
#include "core/lax/lax.h"  // Axes; ops.h includes this header at its end

namespace graft::fft {

Array fft(const Array& a, std::optional<int64_t> n = std::nullopt, int64_t axis = -1,
          const std::string& norm = "backward");
Array ifft(const Array& a, std::optional<int64_t> n = std::nullopt, int64_t axis = -1,
           const std::string& norm = "backward");
Array rfft(const Array& a, std::optional<int64_t> n = std::nullopt, int64_t axis = -1,
           const std::string& norm = "backward");
Array irfft(const Array& a, std::optional<int64_t> n = std::nullopt, int64_t axis = -1,
            const std::string& norm = "backward");
// hfft: the real spectrum of a Hermitian-symmetric signal given by its first half:
// irfft(conj(a), n) * n. ihfft: its inverse, conj(rfft(a, n)) / n.
Array hfft(const Array& a, std::optional<int64_t> n = std::nullopt, int64_t axis = -1,
           const std::string& norm = "backward");
Array ihfft(const Array& a, std::optional<int64_t> n = std::nullopt, int64_t axis = -1,
            const std::string& norm = "backward");

Array fft2(const Array& a, std::optional<Shape> s = std::nullopt, const Axes& axes = {-2, -1},
           const std::string& norm = "backward");
Array ifft2(const Array& a, std::optional<Shape> s = std::nullopt, const Axes& axes = {-2, -1},
            const std::string& norm = "backward");
Array rfft2(const Array& a, std::optional<Shape> s = std::nullopt, const Axes& axes = {-2, -1},
            const std::string& norm = "backward");
Array irfft2(const Array& a, std::optional<Shape> s = std::nullopt, const Axes& axes = {-2, -1},
             const std::string& norm = "backward");

Array fftn(const Array& a, std::optional<Shape> s = std::nullopt,
           std::optional<Axes> axes = std::nullopt, const std::string& norm = "backward");
Array ifftn(const Array& a, std::optional<Shape> s = std::nullopt,
            std::optional<Axes> axes = std::nullopt, const std::string& norm = "backward");
Array rfftn(const Array& a, std::optional<Shape> s = std::nullopt,
            std::optional<Axes> axes = std::nullopt, const std::string& norm = "backward");
Array irfftn(const Array& a, std::optional<Shape> s = std::nullopt,
             std::optional<Axes> axes = std::nullopt, const std::string& norm = "backward");

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
