// lax.fft: the discrete Fourier transform over the trailing len(fft_lengths) dims,
// computed on the CPU by PocketFFT (core/backend/cpu/fft_kernel.cc). fft_type as JAX's:
//   kFft    c64/c128 [..., n1..nk] -> same, unnormalized forward transform;
//   kIfft   c64/c128 [..., n1..nk] -> same, inverse scaled by 1 / (n1 * ... * nk);
//   kRfft   f32/f64 [..., n1..nk] -> c64/c128 [..., n1..nk//2+1], forward of a real signal;
//   kIrfft  c64/c128 [..., n1..nk//2+1] -> f32/f64 [..., n1..nk], inverse (scaled) to real.
// Rules as JAX's jax/_src/lax/fft.py: linear (the jvp transforms the tangent); the transpose
// of fft / ifft is itself, of rfft the real part of the fft of the zero-padded cotangent, of
// irfft the conj of the masked, scaled rfft of the cotangent; vmap moves the batch to the front.
#pragma once

#include <string>
#include <vector>

#include "core/ir/primitive.h"

namespace graft {

enum class FftType { kFft, kIfft, kRfft, kIrfft };

class Fft : public Primitive {
 public:
  Fft(FftType type, Shape lengths)
      : Primitive(PrimitiveId::kFft), type_(type), lengths_(std::move(lengths)) {}
  std::vector<Aval> infer(const std::vector<Aval>& in) const override;
  std::string params() const override;
  bool same_params(const Primitive& o) const override;
  Cost cost(const std::vector<Aval>& in, const std::vector<Aval>& out) const override;
  GRAFT_TRANSFORM_RULES;
  FftType type() const { return type_; }
  const Shape& lengths() const { return lengths_; }

 private:
  FftType type_;
  Shape lengths_;
};

// lax.fft(x, fft_type, fft_lengths).
Array lax_fft(const Array& x, FftType type, const Shape& lengths);

}  // namespace graft
