// Shared pieces of the collectives' GPU tests (collectives_gpu_test: 2 GPUs of one process;
// mpi_gpu_test: one GPU on each of 2 processes): inputs, and a program run with its operands
// on cuda:0 compared with the same program on the CPU's virtual devices.
#pragma once

#include <string>
#include <vector>

#include "core/device.h"
#include "core/ops.h"
#include "gtest/gtest.h"

namespace graft::cuda_testing {

inline Array rnd(const Shape& s, double phase) {
  return reshape(sin(arange(0.0, static_cast<double>(numel(s)), 1.0, DType::kF32) * 0.7 + phase),
                 s);
}

inline Array on_gpu(const Array& x) { return device_put(x, devices("cuda")[0]); }

inline void expect_close(const Array& got, const Array& want, const std::string& what) {
  ASSERT_EQ(got.shape(), want.shape()) << what;
  std::vector<double> g = got.to_vector<double>(), w = want.to_vector<double>();
  for (size_t i = 0; i < g.size(); ++i) ASSERT_NEAR(g[i], w[i], 1e-5) << what << " at " << i;
}

// f(x) on the GPUs (x device_put on cuda:0) and on the CPU's virtual devices.
template <typename F>
void expect_gpu_matches_cpu(F f, const Array& x, const std::string& what) {
  Array gpu = f(on_gpu(x));
  EXPECT_FALSE(gpu.buffer()->on_host()) << what << ": the result should stay on the GPU";
  expect_close(gpu, f(x), what);
}

}  // namespace graft::cuda_testing
