// Helpers shared by the tests over meshes of virtual devices (shard_map_test, spmd_test):
// deterministic f64 inputs and an element-wise comparison naming what differs.
#pragma once

#include <string>
#include <vector>

#include "core/ops.h"
#include "gtest/gtest.h"

namespace graft::testing {

inline Array rnd(const Shape& s, double phase) {
  return reshape(sin(arange(0.0, static_cast<double>(numel(s)), 1.0, DType::kF64) * 0.7 + phase),
                 s);
}

inline void expect_near(const Array& got, const Array& want, double tol, const std::string& what) {
  ASSERT_EQ(got.shape(), want.shape()) << what;
  std::vector<double> g = got.to_vector<double>(), w = want.to_vector<double>();
  for (size_t i = 0; i < g.size(); ++i) ASSERT_NEAR(g[i], w[i], tol) << what << " at " << i;
}

}  // namespace graft::testing
