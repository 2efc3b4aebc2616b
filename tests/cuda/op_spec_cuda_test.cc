// The op-spec table (tests/core/primitives/specs) on the GPU: every case of every primitive runs with its
// inputs device_put on cuda:0 (so eval routes each op to the CUDA backend) and is compared with
// the same case on the CPU, by a normalized error per dtype (exact for integers and bools).
// A primitive without a CUDA kernel fails here. Skips without a GPU, or in a build without
// CUDA (--config=cuda).
#include <algorithm>
#include <cmath>
#include <string>

#include "core/backend/cuda/device.h"
#include "core/device/device.h"
#include "core/sharding/device_put.h"
#include "gtest/gtest.h"
#include "tests/core/primitives/specs/spec.h"
#include "tests/cuda/gpu_skip.h"

namespace graft::spec {
namespace {

// max |gpu - cpu| / max(max |cpu|, 1) allowed per result dtype: the GPU may order sums and
// pick transcendental implementations differently, never more than this.
double tolerance(DType d) {
  switch (d) {
    case DType::kF64:
      return 1e-12;
    case DType::kF32:
      return 2e-5;
    case DType::kF16:
      return 2e-3;
    case DType::kBF16:
      return 1.6e-2;
    default:
      return 0;  // integers, bools: exact
  }
}

TEST(OpSpecCudaTest, EveryCaseMatchesTheCpu) {
  GRAFT_REQUIRE_GPUS(1);
  const Device gpu = devices("cuda")[0];
  int checked = 0;
  for (const auto& [id, make_spec] : registry()) {
    Spec s = make_spec();
    for (Case& c : s.cases) {
      SCOPED_TRACE(std::string(kPrimitiveNames[static_cast<int>(id)]) + " / " + c.name);
      std::vector<Array> on_gpu;
      for (const Array& a : c.inputs) on_gpu.push_back(device_put(a, gpu));
      Array want = c.fn(c.inputs);
      Array got;
      try {
        got = c.fn(on_gpu);
        got.buffer();
      } catch (const Error& e) {
        ADD_FAILURE() << "on the GPU: " << e.what();
        continue;
      }
      ASSERT_EQ(got.shape(), want.shape());
      ASSERT_EQ(got.dtype(), want.dtype());
      std::vector<double> g = values_of(got), w = values_of(want);
      double scale = 1, err = 0;
      for (double v : w) {
        if (std::isfinite(v)) scale = std::max(scale, std::abs(v));
      }
      for (size_t i = 0; i < w.size(); ++i) {
        if (std::isnan(w[i]) || std::isinf(w[i])) {
          EXPECT_TRUE(std::isnan(w[i]) ? std::isnan(g[i]) : g[i] == w[i]) << "element " << i;
          continue;
        }
        err = std::max(err, std::abs(g[i] - w[i]) / scale);
      }
      EXPECT_LE(err, tolerance(want.dtype())) << "normalized error against the CPU";
      ++checked;
    }
  }
  EXPECT_GT(checked, 0);
}

}  // namespace
}  // namespace graft::spec
