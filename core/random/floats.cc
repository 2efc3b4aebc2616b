// Float samplers of jax.random: uniform, normal, truncated_normal, gumbel, bernoulli.
// Floats in [0, 1) come from random bits by the exponent trick, exactly as JAX forms them.
// XLA:CPU contracts uniform's f * span + minval into one FMA for f32 / f64; graft has no fma
// op, so graft::detail::fma (core/lax/exact_fma.h) rebuilds a correctly rounded one wherever
// the product is not known to be exact.
#include <cmath>
#include <limits>

#include "core/error.h"
#include "core/ops.h"
#include "core/lax/exact_fma.h"
#include "core/random/random.h"
#include "core/random/internal.h"

namespace graft::random {

using namespace internal;  // NOLINT: the family's own helpers

namespace internal {
void check_float(std::string_view op, DType dtype) {
  if (!is_floating(dtype)) fail(op, "dtype must be floating, got ", dtype_name(dtype));
}
}  // namespace internal

namespace {

constexpr double kSqrt2 = 1.41421356237309504880;

Array f64(double v) { return scalar(v, DType::kF64); }

}  // namespace

namespace internal {

// Floats in [0, 1) of `dtype` from the top mantissa bits (JAX's _uniform before the
// affine step). f16 / bf16 draws are assembled in f32 and converted exactly: graft has no
// 16-bit integer dtype to bitcast from, and the values are representable either way.
Array unit_float_words(const Array& y1, const Array& y2, DType dtype) {
  switch (dtype) {
    case DType::kF32: {
      Array m = shift_right_logical(y1 ^ y2, u32(9)) | u32(0x3F800000);
      return bitcast_convert_type(m, DType::kF32) - scalar(1, DType::kF32);
    }
    case DType::kF64: {
      // ((y1 << 32 | y2) >> 12) = (y1 << 20) | (y2 >> 12): no bit leaves the 64.
      Array m = shift_left(astype(y1, DType::kI64), i64(20)) |
                astype(shift_right_logical(y2, u32(12)), DType::kI64) | i64(0x3FF0000000000000);
      return bitcast_convert_type(m, DType::kF64) - f64(1);
    }
    case DType::kF16: {
      // 16 random bits; the top 10 become the f16 mantissa (f32 bits 22..13).
      Array m = shift_left((y1 ^ y2) & u32(0xFFC0), u32(7)) | u32(0x3F800000);
      return astype(bitcast_convert_type(m, DType::kF32) - scalar(1, DType::kF32), dtype);
    }
    case DType::kBF16: {
      // JAX draws only 8 bits for bf16 (its mantissa has 7 < 8 bits); the top 7 are used.
      Array m = shift_left((y1 ^ y2) & u32(0xFE), u32(15)) | u32(0x3F800000);
      return astype(bitcast_convert_type(m, DType::kF32) - scalar(1, DType::kF32), dtype);
    }
    default:
      fail("uniform", "dtype must be floating, got ", dtype_name(dtype));
  }
}

Array unit_float(const Array& key, const Shape& shape, DType dtype) {
  check_float("uniform", dtype);
  auto [y1, y2] = block(key, shape);
  return unit_float_words(y1, y2, dtype);
}

}  // namespace internal


namespace internal {

double host_round(double v, DType dtype) { return scalar(v, dtype).item<double>(); }

// One ulp from v (a value of dtype) toward `dir`.
double next_toward(double v, DType dtype, double dir) {
  switch (dtype) {
    case DType::kF64:
      return std::nextafter(v, dir);
    case DType::kF32:
      return std::nextafter(static_cast<float>(v), static_cast<float>(dir));
    default: {
      // f16 / bf16: step the 16-bit pattern (sign-magnitude).
      bool half = dtype == DType::kF16;
      float f = static_cast<float>(v);
      uint16_t b = half ? f16(f).bits : bf16(f).bits;
      if (v == dir || std::isnan(v)) return v;
      if (v == 0) {
        b = static_cast<uint16_t>((dir < 0 ? 0x8000 : 0) | 1);
      } else {
        b = static_cast<uint16_t>(((v < dir) == (v > 0)) ? b + 1 : b - 1);
      }
      return half ? static_cast<float>(f16::from_bits(b)) : static_cast<float>(bf16::from_bits(b));
    }
  }
}

}  // namespace internal


namespace internal {

Array uniform_between(const Array& key, const Shape& shape, DType dtype, const Array& minval,
                      const Array& maxval, bool exact_product) {
  Array f = unit_float(key, shape, dtype);
  Array span = maxval - minval;
  Array r;
  if (dtype == DType::kF16 || dtype == DType::kBF16 || exact_product) {
    r = f * span + minval;  // f16 / bf16: each op rounds, XLA fuses nothing across that
  } else {
    r = graft::detail::fma(f, broadcast_to(span, shape), broadcast_to(minval, shape));
  }
  return maximum(minval, r);
}

}  // namespace internal

Array uniform(const Array& key, const Shape& shape, DType dtype, double minval, double maxval) {
  check_key("uniform", key);
  check_shape("uniform", shape);
  check_float("uniform", dtype);
  double lo = host_round(minval, dtype), hi = host_round(maxval, dtype);
  if (lo == 0 && hi == 1 && !std::signbit(lo)) return unit_float(key, shape, dtype);
  // The product f * span is exact when span is 0 or a (not tiny) power of two, and when it
  // is not finite the fused and unfused forms agree too; then no FMA emulation is needed.
  double span = dtype == DType::kF32
                    ? static_cast<float>(static_cast<float>(hi) - static_cast<float>(lo))
                    : hi - lo;
  // (f = m * 2^-23 or m * 2^-52 with m < 2^23 or 2^52, so the product must not go below
  // the smallest subnormal's weight.)
  int exp = 0;
  int min_exp = dtype == DType::kF32 ? -125 : -1021;
  bool exact = span == 0 || !std::isfinite(span) ||
               (std::frexp(span, &exp) == (span > 0 ? 0.5 : -0.5) && exp >= min_exp);
  return uniform_between(key, shape, dtype, scalar(lo, dtype), scalar(hi, dtype), exact);
}

Array uniform(const Array& key, const Shape& shape, DType dtype, const Array& minval,
              const Array& maxval) {
  check_key("uniform", key);
  check_shape("uniform", shape);
  check_float("uniform", dtype);
  param_shape("uniform", shape, {&minval, &maxval});  // the bounds must broadcast into shape
  const Array lo = broadcast_to(param("uniform", minval, dtype), shape);
  const Array hi = broadcast_to(param("uniform", maxval, dtype), shape);
  // XLA fuses f * span + lo into one FMA (f32, f64); where the product is exact, as the
  // scalar form checks, both agree, so the fused form is right for every element.
  return uniform_between(key, shape, dtype, lo, hi, /*exact_product=*/false);
}

Array normal(const Array& key, const Shape& shape, DType dtype) {
  check_key("normal", key);
  check_shape("normal", shape);
  check_float("normal", dtype);
  // u in (-1, 1): minval is nextafter(-1, 0) in dtype, so the span 1 - minval rounds to 2.
  double lo = next_toward(-1.0, dtype, 0.0);
  Array u = uniform_between(key, shape, dtype, scalar(lo, dtype), scalar(1, dtype), true);
  return scalar(kSqrt2, dtype) * erf_inv(u);
}

Array truncated_normal(const Array& key, double lower, double upper, const Shape& shape,
                       DType dtype) {
  check_key("truncated_normal", key);
  check_shape("truncated_normal", shape);
  check_float("truncated_normal", dtype);
  if (std::isnan(lower) || std::isnan(upper)) fail("truncated_normal", "bounds must not be NaN");
  Array sqrt2 = scalar(kSqrt2, dtype);
  Array lo = scalar(lower, dtype), hi = scalar(upper, dtype);
  // XLA rewrites x / sqrt2 as x * (1 / sqrt2); the two differ by an ulp for some x.
  Array inv_sqrt2 = scalar(1, dtype) / sqrt2;
  Array a = erf(lo * inv_sqrt2), b = erf(hi * inv_sqrt2);
  Array u = uniform_between(key, shape, dtype, a, b, false);
  Array out = sqrt2 * erf_inv(u);
  // The open interval: clip into (lower, upper) one ulp inside each bound.
  double l = host_round(lower, dtype), h = host_round(upper, dtype);
  return clip(out, scalar(next_toward(l, dtype, INFINITY), dtype),
              scalar(next_toward(h, dtype, -INFINITY), dtype));
}

namespace internal {

Array uniform_tiny_to_one(const Array& key, const Shape& shape, DType dtype) {
  // JAX draws u = uniform(tiny, 1): the span 1 - tiny rounds to 1, and with these constants
  // XLA folds (f - 1) + tiny into f + rnd(tiny - 1) = f, so u = max(tiny, f). (Computing
  // f + tiny instead would differ for f16, where tiny = 2^-14 is not negligible.)
  double tiny = dispatch_dtype(dtype, []<typename T>() -> double {
    if constexpr (std::is_same_v<T, f16>) {
      return std::ldexp(1.0, -14);
    } else if constexpr (std::is_same_v<T, bf16>) {
      return std::ldexp(1.0, -126);
    } else {
      return static_cast<double>(std::numeric_limits<T>::min());
    }
  });
  return maximum(scalar(tiny, dtype), unit_float(key, shape, dtype));
}

}  // namespace internal

Array gumbel(const Array& key, const Shape& shape, DType dtype) {
  check_key("gumbel", key);
  check_shape("gumbel", shape);
  check_float("gumbel", dtype);
  return -log(-log(uniform_tiny_to_one(key, shape, dtype)));
}

Array bernoulli(const Array& key, double p, const Shape& shape) {
  check_key("bernoulli", key);
  check_shape("bernoulli", shape);
  // A C++ double p is a weak f32 in JAX: the draw is an f32 uniform compared with f32(p).
  return unit_float(key, shape, DType::kF32) < scalar(p, DType::kF32);
}

Array bernoulli(const Array& key, const Array& p, const std::optional<Shape>& shape) {
  check_key("bernoulli", key);
  if (!p.valid()) fail("bernoulli", "got an empty Array handle as p");
  if (!is_floating(p.dtype())) {
    fail("bernoulli", "p must be a floating array, got ", p.aval().str());
  }
  const Shape s = param_shape("bernoulli", shape, {&p});
  const DType d = p.weak_type() ? DType::kF32 : p.dtype();
  return unit_float(key, s, d) < astype(p, d);
}

}  // namespace graft::random
