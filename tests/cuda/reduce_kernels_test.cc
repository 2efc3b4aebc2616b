// The CUDA reductions (core/backend/cuda/kernels/reduce.h) against graft's CPU kernels:
// reduce_{sum,prod,max,min,and,or} on every dtype the CPU accepts over shapes that hit each
// plan (contiguous rows with 1 / 32 / 256 threads per output, columns, strided alternating
// axes, split long reductions, empty and size-1 axes), argmax / argmin with ties and NaNs in
// both index dtypes, and cumsum forwards and reversed. Integer results, max / min and argmax /
// argmin must be exact; float sums within a few ulp of the sum of magnitudes. The planner runs
// on the host, so its tests run without a GPU; the rest skip without one.
#include "gtest/gtest.h"

#ifdef GRAFT_CUDA

#include <cmath>

#include "core/backend/cuda/kernels/reduce.h"
#include "core/ops.h"
#include "core/primitives/reduce.h"
#include "tests/cuda/kernels_test_util.h"

namespace graft::cuda {
namespace {

using namespace graft::cuda::testing;  // NOLINT: the test helpers
using P = PrimitiveId;
using Kind = ReducePlan::Kind;

struct Case {
  Shape shape;
  std::vector<int> axes;
};

const Case kCases[] = {
    {{1000003}, {0}},
    {{0}, {0}},
    {{3, 0, 5}, {1}},
    {{7, 1, 5}, {1}},
    {{257, 1031}, {1}},
    {{33, 5000}, {1}},
    {{100000, 7}, {1}},
    {{5000, 3}, {0}},
    {{64, 300, 70}, {1}},
    {{40, 30, 50}, {0, 2}},
    {{40, 30, 50}, {0, 1}},
    {{40, 30, 50}, {1, 2}},
    {{6, 7, 8, 9}, {0, 2}},
    {{2, 100000, 3}, {0, 2}},
    {{1}, {0}},
    {{3, 1, 4, 1, 5}, {1, 3}},
    {{9, 200000}, {0}},
    {{3, 4}, {0, 1}},
    {{1, 1000}, {0}},
    {{200, 100, 2}, {0, 2}},
};

std::string str(const Case& c) {
  std::string s = shape_str(c.shape) + " axes";
  for (int a : c.axes) s += " " + std::to_string(a);
  return s;
}

// The dtype's rounding unit for results (f16 / bf16 round an f32 accumulator once).
double out_eps(DType d) {
  switch (d) {
    case DType::kF16:
      return 0x1p-11;
    case DType::kBF16:
      return 0x1p-8;
    case DType::kF64:
      return 0x1p-53;
    default:
      return 0x1p-24;
  }
}
double acc_eps(DType d) { return d == DType::kF64 ? 0x1p-53 : 0x1p-24; }

std::vector<double> as_doubles(const Array& a) {
  const auto bytes = bytes_of(a);
  std::vector<double> v(a.size());
  for (int64_t i = 0; i < a.size(); ++i) v[i] = value_at(a.dtype(), bytes.data(), i);
  return v;
}

// Runs `launch(x, out, scratch)` on device copies and compares with `ref`.
template <typename Launch>
void expect_gpu_matches(const std::vector<uint8_t>& x, const Array& ref, size_t scratch_bytes,
                        Tol tol, const std::vector<double>* scale, Launch launch) {
  DeviceBuffer dx(x), dy(byte_size(ref.dtype(), ref.size())), scratch(scratch_bytes);
  launch(dx.get(), dy.get(), scratch_bytes ? scratch.get() : nullptr);
  const auto want = bytes_of(ref);
  EXPECT_TRUE(agree(ref.dtype(), dy.download().data(), want.data(), ref.size(), tol, scale));
}

bool accepts(P op, DType d) {
  if (op == P::kReduceSum || op == P::kReduceProd) return d != DType::kBool;
  if (op == P::kReduceAnd || op == P::kReduceOr) return d == DType::kBool || is_integral(d);
  return true;
}

TEST(CudaReduce, MatchesCpu) {
  GRAFT_REQUIRE_GPUS(1);
  for (P op :
       {P::kReduceSum, P::kReduceProd, P::kReduceMax, P::kReduceMin, P::kReduceAnd, P::kReduceOr}) {
    for (DType d : kAllDTypes) {
      if (!accepts(op, d)) continue;
      for (const Case& c : kCases) {
        const int64_t n = numel(c.shape);
        int64_t n_red = 1;
        for (int a : c.axes) n_red *= c.shape[a];
        const bool prod = op == P::kReduceProd;
        if (prod && is_floating(d) && n_red > 10000) continue;  // under- / overflows
        SCOPED_TRACE(std::string(kPrimitiveNames[int(op)]) + " " + dtype_name(d) + " " + str(c));
        const Domain dom = prod ? Domain{0.95, 1.05, 1, 3} : Domain{};
        const auto x = make_values(d, n, dom, 11, /*edges=*/false);
        const Array xa = host_array(x, c.shape, d);
        const Array ref = reduce(op, xa, c.axes);
        Tol tol{1e-300, 0};  // max / min: the same value (+0 and -0 may differ)
        std::vector<double> scale;
        if (is_floating(d) && op == P::kReduceSum) {
          // |error| <= c * eps * sum |x|, plus the result's rounding.
          scale = as_doubles(reduce(P::kReduceSum, astype(abs(xa), DType::kF64), c.axes));
          const double k = 64 * acc_eps(d) / (2 * out_eps(d));
          for (double& s : scale) s *= k;
          tol = {2 * out_eps(d), 0};
        } else if (is_floating(d) && prod) {
          tol = {4 * std::sqrt(static_cast<double>(n_red)) * acc_eps(d) + 2 * out_eps(d), 0};
        } else if (!is_floating(d)) {
          tol = {};
        }
        const ReducePlan plan = plan_reduce(c.shape, c.axes, d);
        expect_gpu_matches(
            x, ref, plan.scratch_bytes, tol, scale.empty() ? nullptr : &scale,
            [&](void* dx, void* dy, void* s) { launch_reduce(op, d, plan, dx, dy, s, nullptr); });
      }
    }
  }
}

// n values from {-3, ..., 3} (many ties), with NaNs (floats) at rate `nan_rate`.
std::vector<uint8_t> tie_values(DType d, int64_t n, double nan_rate, uint64_t seed) {
  std::vector<uint8_t> bytes(byte_size(d, n));
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u;
  dispatch_dtype(d, [&]<typename T>() {
    for (int64_t i = 0; i < n; ++i) {
      double v = static_cast<double>(rng() % 7) - 3;
      if constexpr (std::is_same_v<T, bool>) {
        put<T>(bytes, i, v > 0);
      } else if constexpr (std::is_integral_v<T>) {
        put<T>(bytes, i, static_cast<T>(v));
      } else {
        if (u(rng) < nan_rate) v = NAN;
        if constexpr (std::is_same_v<T, double>) {
          put<T>(bytes, i, v);
        } else {
          put<T>(bytes, i, T(static_cast<float>(v)));
        }
      }
    }
  });
  return bytes;
}

struct AxisCase {
  Shape shape;
  int axis;
};

const AxisCase kAxisCases[] = {
    {{1000003}, 0},      {{257, 1031}, 1}, {{1031, 257}, 0}, {{5, 7, 9}, 0},
    {{5, 7, 9}, 1},      {{5, 7, 9}, 2},   {{1}, 0},         {{3, 0}, 0},
    {{2, 100000, 3}, 1}, {{100000, 2}, 0}, {{40, 30}, 1},    {{4, 3000}, 1},
};

TEST(CudaReduce, ArgMatchesCpu) {
  GRAFT_REQUIRE_GPUS(1);
  for (P op : {P::kArgmax, P::kArgmin}) {
    for (DType index : {DType::kI32, DType::kI64}) {
      for (DType d : kAllDTypes) {
        for (const AxisCase& c : kAxisCases) {
          SCOPED_TRACE(std::string(kPrimitiveNames[int(op)]) + " " + dtype_name(d) + " " +
                       shape_str(c.shape) + " axis " + std::to_string(c.axis) + " -> " +
                       dtype_name(index));
          const int64_t len = c.shape[c.axis];
          const auto x = tie_values(d, numel(c.shape), 0.5 / std::max<int64_t>(len, 1), 12);
          const Array ref = arg_reduce(op, host_array(x, c.shape, d), c.axis, index);
          const ReducePlan plan = plan_arg(c.shape, c.axis);
          expect_gpu_matches(x, ref, plan.scratch_bytes, {}, nullptr,
                             [&](void* dx, void* dy, void* s) {
                               launch_arg(op, d, index, plan, dx, dy, s, nullptr);
                             });
        }
      }
    }
  }
}

// NaN propagation of max / min and of sums, on rows and columns.
TEST(CudaReduce, NaNsPropagate) {
  GRAFT_REQUIRE_GPUS(1);
  for (DType d : {DType::kF16, DType::kBF16, DType::kF32, DType::kF64}) {
    for (const Case& c : {Case{{6, 5000}, {1}}, Case{{5000, 6}, {0}}, Case{{1000003}, {0}}}) {
      for (P op : {P::kReduceMax, P::kReduceMin, P::kReduceSum}) {
        SCOPED_TRACE(std::string(kPrimitiveNames[int(op)]) + " " + dtype_name(d) + " " + str(c));
        const auto x = tie_values(d, numel(c.shape), 1e-4, 13);
        const Array ref = reduce(op, host_array(x, c.shape, d), c.axes);
        const ReducePlan plan = plan_reduce(c.shape, c.axes, d);
        expect_gpu_matches(
            x, ref, plan.scratch_bytes, {1e-300, 0}, nullptr,
            [&](void* dx, void* dy, void* s) { launch_reduce(op, d, plan, dx, dy, s, nullptr); });
      }
    }
  }
}

TEST(CudaReduce, CumsumMatchesCpu) {
  GRAFT_REQUIRE_GPUS(1);
  const AxisCase cases[] = {
      {{1000003}, 0}, {{1000, 1031}, 1}, {{1031, 1000}, 0}, {{3, 200000, 2}, 1}, {{5, 7, 9}, 0},
      {{5, 7, 9}, 1}, {{5, 7, 9}, 2},    {{0}, 0},          {{4, 0}, 1},         {{4, 0}, 0},
      {{1}, 0},       {{100000, 3}, 0},  {{2, 300000}, 1},
  };
  for (DType d : kAllDTypes) {
    if (d == DType::kBool) continue;
    for (const AxisCase& c : cases) {
      for (bool reverse : {false, true}) {
        SCOPED_TRACE(std::string("cumsum ") + dtype_name(d) + " " + shape_str(c.shape) + " axis " +
                     std::to_string(c.axis) + (reverse ? " reversed" : ""));
        const auto x = make_values(d, numel(c.shape), {}, 14, /*edges=*/false);
        const Array xa = host_array(x, c.shape, d);
        const Array ref = cumsum_along(xa, c.axis, reverse);
        Tol tol;
        std::vector<double> scale;
        if (is_floating(d)) {
          scale = as_doubles(cumsum_along(astype(abs(xa), DType::kF64), c.axis, reverse));
          const double k = 64 * acc_eps(d) / (2 * out_eps(d));
          for (double& s : scale) s *= k;
          tol = {2 * out_eps(d), 0};
        }
        const CumsumPlan plan = plan_cumsum(c.shape, c.axis, reverse, d);
        expect_gpu_matches(
            x, ref, plan.scratch_bytes, tol, scale.empty() ? nullptr : &scale,
            [&](void* dx, void* dy, void* s) { launch_cumsum(d, plan, dx, dy, s, nullptr); });
      }
    }
  }
}

// ---- the planner and the launchers' checks: host code, no GPU needed ----

TEST(CudaReducePlan, PicksTheLayout) {
  ReducePlan p = plan_reduce({2, 3, 4}, {0, 1, 2}, DType::kF32);
  EXPECT_EQ(p.kind, Kind::kRows);
  EXPECT_TRUE(p.contiguous);
  EXPECT_EQ(p.n_out, 1);
  EXPECT_EQ(p.n, 24);
  EXPECT_EQ(plan_reduce({0}, {0}, DType::kF32).kind, Kind::kFill);
  EXPECT_EQ(plan_reduce({3, 0}, {0}, DType::kF32).kind, Kind::kNone);
  EXPECT_EQ(plan_reduce({7, 1, 5}, {1}, DType::kF32).kind, Kind::kCopy);
  EXPECT_EQ(plan_reduce({3, 1, 4, 1, 5}, {1, 3}, DType::kF32).kind, Kind::kCopy);

  p = plan_reduce({64, 300, 70}, {1}, DType::kF32);
  EXPECT_EQ(p.kind, Kind::kCols);
  EXPECT_EQ(p.outer, 64);
  EXPECT_EQ(p.inner, 70);
  EXPECT_EQ(p.bx, 32);
  p = plan_reduce({5000, 3}, {0}, DType::kF32);
  EXPECT_EQ(p.kind, Kind::kCols);
  EXPECT_EQ(p.bx, 4);
  p = plan_reduce({6, 1, 8}, {0, 1}, DType::kF32);  // the size-1 axis does not matter
  EXPECT_EQ(p.kind, Kind::kCols);
  EXPECT_EQ(p.outer, 1);
  EXPECT_EQ(p.inner, 8);

  p = plan_reduce({40, 30, 50}, {0, 2}, DType::kF32);
  EXPECT_EQ(p.kind, Kind::kRows);
  EXPECT_FALSE(p.contiguous);
  ASSERT_EQ(p.kept_nd, 1);
  ASSERT_EQ(p.red_nd, 2);
  EXPECT_EQ(p.kept_size[0], 30);
  EXPECT_EQ(p.kept_stride[0], 50);
  EXPECT_EQ(p.red_size[0], 40);
  EXPECT_EQ(p.red_stride[0], 1500);
  EXPECT_EQ(p.red_size[1], 50);
  EXPECT_EQ(p.red_stride[1], 1);
}

TEST(CudaReducePlan, SplitsLongReductionsIntoScratch) {
  ReducePlan p = plan_reduce({1000003}, {0}, DType::kF16);
  EXPECT_EQ(p.tpo, 256);
  EXPECT_GT(p.splits, 1);
  EXPECT_EQ(p.acc_bytes, 4);  // f16 accumulates in f32
  EXPECT_EQ(p.scratch_bytes, static_cast<size_t>(p.splits) * 4);
  p = plan_reduce({257, 1031}, {1}, DType::kF32);
  EXPECT_EQ(p.tpo, 32);
  EXPECT_EQ(p.splits, 1);
  EXPECT_EQ(p.scratch_bytes, 0u);
  p = plan_arg({1031, 257}, 0);
  EXPECT_EQ(p.kind, Kind::kCols);
  EXPECT_EQ(p.acc_bytes, 16);
  const CumsumPlan c = plan_cumsum({1000003}, 0, true, DType::kI32);
  EXPECT_GT(c.chunks, 1);
  EXPECT_EQ(c.scratch_bytes, static_cast<size_t>(c.chunks) * 4);
  EXPECT_EQ(plan_cumsum({4, 5}, 1, false, DType::kF32).chunks, 1);
}

TEST(CudaReducePlan, LaunchersRejectWhatTheCpuRejects) {
  const ReducePlan p = plan_reduce({4}, {0}, DType::kF32);
  EXPECT_THROW(launch_reduce(P::kReduceSum, DType::kBool, p, nullptr, nullptr, nullptr, nullptr),
               Error);
  EXPECT_THROW(launch_reduce(P::kReduceAnd, DType::kF32, p, nullptr, nullptr, nullptr, nullptr),
               Error);
  EXPECT_THROW(launch_arg(P::kArgmax, DType::kF32, DType::kF32, plan_arg({4}, 0), nullptr, nullptr,
                          nullptr, nullptr),
               Error);
  EXPECT_THROW(launch_cumsum(DType::kBool, plan_cumsum({4}, 0, false, DType::kBool), nullptr,
                             nullptr, nullptr, nullptr),
               Error);
  EXPECT_THROW(plan_arg({3, 0}, 1), Error);  // an empty axis with outputs
}

}  // namespace
}  // namespace graft::cuda

#else  // !GRAFT_CUDA

TEST(CudaReduce, NeedsCuda) { GTEST_SKIP() << "built without CUDA (--config=cuda)"; }

#endif  // GRAFT_CUDA
