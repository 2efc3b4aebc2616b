// f32 exp shared by the eager and fused kernels, so both give the same bits.
//
// Eigen 3.4's vectorized f32 exp clamps its input at about -88.4 (exp(-inf) would be 2.9e-39
// instead of 0, breaking masked softmax), so the rare elements whose result is subnormal
// (x < -87) are recomputed in f64 after the vectorized pass.
#pragma once

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

namespace graft::cpu {

// y = exp(x) for n floats; x and y may be the same buffer.
inline void exp_f32(const float* x, float* y, int64_t n) {
  constexpr int64_t kBlock = 256;
  float tmp[kBlock];
  for (int64_t s = 0; s < n; s += kBlock) {
    const int64_t len = std::min(kBlock, n - s);
    std::memcpy(tmp, x + s, sizeof(float) * len);
    Eigen::Map<Eigen::ArrayXf>(y + s, len) = Eigen::Map<const Eigen::ArrayXf>(tmp, len).exp();
    for (int64_t i = 0; i < len; ++i) {
      if (tmp[i] < -87.0f) y[s + i] = static_cast<float>(std::exp(static_cast<double>(tmp[i])));
    }
  }
}

}  // namespace graft::cpu
