// Scalar math shared by the elementwise kernels: XLA-compatible conversions, integer power,
// and the inverse error function.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "core/convert.h"
#include "core/half.h"

namespace graft::cpu {

using graft::convert_value;

template <typename T>
T int_pow(T base, T exp) {
  if constexpr (std::is_signed_v<T>) {
    if (exp < 0) return base == 1 ? 1 : (base == -1 ? ((exp & 1) ? -1 : 1) : 0);
  }
  using U = std::make_unsigned_t<T>;
  U result = 1, b = static_cast<U>(base);
  for (auto e = static_cast<U>(exp); e != 0; e >>= 1) {
    if (e & 1) result *= b;
    b *= b;
  }
  return static_cast<T>(result);
}

// erf^-1 for f32: Giles' single-precision approximation ("Approximating the erfinv
// function", GPU Computing Gems), the one XLA uses for f32.
inline float erf_inv_value(float x) {
  float w = -std::log1p(-x * x);
  float p;
  if (w < 5.0f) {
    w = w - 2.5f;
    p = 2.81022636e-08f;
    p = 3.43273939e-07f + p * w;
    p = -3.5233877e-06f + p * w;
    p = -4.39150654e-06f + p * w;
    p = 0.00021858087f + p * w;
    p = -0.00125372503f + p * w;
    p = -0.00417768164f + p * w;
    p = 0.246640727f + p * w;
    p = 1.50140941f + p * w;
  } else {
    w = std::sqrt(w) - 3.0f;
    p = -0.000200214257f;
    p = 0.000100950558f + p * w;
    p = 0.00134934322f + p * w;
    p = -0.00367342844f + p * w;
    p = 0.00573950773f + p * w;
    p = -0.0076224613f + p * w;
    p = 0.00943887047f + p * w;
    p = 1.00167406f + p * w;
    p = 2.83297682f + p * w;
  }
  if (std::fabs(x) == 1.0f) return x * std::numeric_limits<float>::infinity();
  return p * x;
}

// erf^-1 for f64: Newton-refined from the f32 estimate (two steps reach full precision).
inline double erf_inv_value(double x) {
  if (std::fabs(x) >= 1.0) {
    return std::fabs(x) == 1.0 ? x * std::numeric_limits<double>::infinity()
                               : std::numeric_limits<double>::quiet_NaN();
  }
  double y = erf_inv_value(static_cast<float>(x));
  for (int i = 0; i < 3; ++i) {
    double err = std::erf(y) - x;
    y -= err / (2.0 / std::sqrt(M_PI) * std::exp(-y * y));
  }
  return y;
}

}  // namespace graft::cpu
