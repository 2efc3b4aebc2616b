// Shape / dtype rule, parameters, cost and transform rules of lax.fft (see fft.h).
#include "core/primitives/fft.h"

#include <cmath>

#include "core/error.h"
#include "core/lax/lax.h"
#include "core/primitives/shape_rules_util.h"

namespace graft {

namespace {

const char* type_name(FftType t) {
  switch (t) {
    case FftType::kFft:
      return "FFT";
    case FftType::kIfft:
      return "IFFT";
    case FftType::kRfft:
      return "RFFT";
    case FftType::kIrfft:
      return "IRFFT";
  }
  return "?";
}

// z * r for complex z and real r (broadcasting r), through the real and imaginary parts.
Array scale_complex(const Array& z, const Array& r) { return complex(real(z) * r, imag(z) * r); }

}  // namespace

std::vector<Aval> Fft::infer(const std::vector<Aval>& in) const {
  if (in.size() != 1) fail(name(), "takes 1 operand, got ", in.size());
  const Aval& a = in[0];
  const size_t k = lengths_.size();
  if (k < 1 || k > 3) fail(name(), "fft_lengths must have 1 to 3 entries, got ", k);
  if (a.shape.size() < k) {
    fail(name(), "operand of rank ", a.shape.size(), " is smaller than the ", k,
         " transformed dims: ", a.str());
  }
  for (int64_t n : lengths_) {
    if (n < 0) fail(name(), "fft_lengths must be >= 0, got ", shape_str(lengths_));
  }
  const bool real_in = type_ == FftType::kRfft;
  if (real_in ? (a.dtype != DType::kF32 && a.dtype != DType::kF64) : !is_complex(a.dtype)) {
    fail(name(), type_name(type_), " needs ", real_in ? "an f32 or f64" : "a c64 or c128",
         " operand, got ", a.str());
  }
  Shape expect(a.shape.begin(), a.shape.end() - k);
  expect.insert(expect.end(), lengths_.begin(), lengths_.end());
  if (type_ == FftType::kIrfft) expect.back() = lengths_.back() / 2 + 1;
  if (expect != a.shape) {
    fail(name(), type_name(type_), " with fft_lengths ", shape_str(lengths_),
         " needs an operand of shape ", shape_str(expect), ", got ", a.str());
  }
  Aval out = a;
  if (type_ == FftType::kRfft) {
    out.shape.back() = lengths_.back() / 2 + 1;
    out.dtype = complex_dtype_for(a.dtype);
  } else if (type_ == FftType::kIrfft) {
    out.shape.back() = lengths_.back();
    out.dtype = complex_part_dtype(a.dtype);
  }
  return {out};
}

std::string Fft::params() const {
  return str_cat("fft_type=", type_name(type_), " fft_lengths=", shape_str(lengths_));
}

bool Fft::same_params(const Primitive& o) const {
  if (o.id() != id()) return false;
  const auto& f = static_cast<const Fft&>(o);
  return f.type_ == type_ && f.lengths_ == lengths_;
}

Cost Fft::cost(const std::vector<Aval>& in, const std::vector<Aval>& out) const {
  Cost c = Primitive::cost(in, out);
  const Shape& big = type_ == FftType::kIrfft ? out[0].shape : in[0].shape;
  const double n = static_cast<double>(numel(big));
  double len = 1;
  for (int64_t l : lengths_) len *= static_cast<double>(l);
  c.flops = len > 1 ? 5.0 * n * std::log2(len) : 0.0;
  return c;
}

std::vector<Array> Fft::jvp(const std::vector<Array>&, const std::vector<Array>& t,
                            const std::vector<Array>&) const {
  return {t[0].valid() ? lax_fft(t[0], type_, lengths_) : Array()};
}

std::vector<Array> Fft::vjp(const std::vector<Array>&, const std::vector<Array>&,
                            const std::vector<Array>& ct) const {
  if (!ct[0].valid()) return {Array()};
  const Array& t = ct[0];
  switch (type_) {
    case FftType::kFft:
    case FftType::kIfft:
      return {lax_fft(t, type_, lengths_)};
    case FftType::kRfft: {
      // JAX transposes the naive rfft (the fft of the real input, cut to n // 2 + 1): pad the
      // cotangent back to n with zeros, transform, keep the real part.
      const int64_t n = lengths_.back(), kept = t.shape().back();
      Array padded = t;
      if (n > kept) {
        Shape zs = t.shape();
        zs.back() = n - kept;
        padded = concatenate({t, zeros(zs, t.dtype())}, t.ndim() - 1);
      }
      return {real(lax_fft(padded, FftType::kFft, lengths_))};
    }
    case FftType::kIrfft: {
      // The rfft of the cotangent, scaled by 1 / N, doubled on the components the rfft keeps
      // once for two (all but the first, and the last when n is even), conjugated (JAX's
      // convention for complex cotangents).
      Array x = lax_fft(t, FftType::kRfft, lengths_);
      const int64_t m = x.shape().back();
      const bool odd = lengths_.back() % 2 != 0;
      double count = 1;
      for (int64_t l : lengths_) count *= static_cast<double>(l);
      std::vector<double> mask(m, 2.0 / count);
      mask[0] = 1.0 / count;
      if (!odd && m > 1) mask[m - 1] = 1.0 / count;
      Array ms = astype(array(mask, Shape{m}), complex_part_dtype(x.dtype()));
      return {conj(scale_complex(x, ms))};
    }
  }
  return {Array()};
}

Batched Fft::vmap(const std::vector<Array>& args, const std::vector<int>& dims) const {
  Array x = shape_rules::batch_to_front(args[0], dims[0], shape_rules::batch_size(args, dims));
  return {{lax_fft(x, type_, lengths_)}, {0}};
}

Array lax_fft(const Array& x, FftType type, const Shape& lengths) {
  return bind1(std::make_shared<const Fft>(type, lengths), {x});
}

}  // namespace graft
