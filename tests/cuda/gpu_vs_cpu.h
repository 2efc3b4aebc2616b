// Shared pieces of the GPU tests that run a public op on cuda:0 and on the CPU and compare:
// the skip without a device (or without --config=cuda), cuda:0, and the normalized error.
#pragma once

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/array.h"
#include "core/device/device.h"
#include "core/sharding/device_put.h"
#include "gtest/gtest.h"
#include "tests/cuda/gpu_skip.h"
#ifdef GRAFT_CUDA
#include "core/backend/cuda/device.h"
#endif

namespace graft::cuda_testing {

inline Device gpu() { return devices("cuda")[0]; }

// max |got - want| / max(1, max |want|); NaN where want is NaN must be NaN in got (else inf).
inline double normalized_error(const Array& got, const Array& want) {
  if (got.shape() != want.shape()) return INFINITY;
  const std::vector<double> g = got.to_vector<double>(), w = want.to_vector<double>();
  double scale = 1, err = 0;
  for (double v : w) {
    if (std::isfinite(v)) scale = std::max(scale, std::abs(v));
  }
  for (size_t i = 0; i < w.size(); ++i) {
    if (std::isnan(w[i]) || std::isnan(g[i])) {
      if (std::isnan(w[i]) != std::isnan(g[i])) return INFINITY;
      continue;
    }
    err = std::max(err, std::abs(g[i] - w[i]) / scale);
  }
  return err;
}

}  // namespace graft::cuda_testing
