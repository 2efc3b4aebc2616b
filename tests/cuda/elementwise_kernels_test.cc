// The CUDA elementwise launchers (core/backend/cuda/kernels/elementwise.h) against graft's CPU
// kernels: every unary and binary primitive on every dtype it accepts, select_n and every
// convert_element_type pair, on 0, 1 and 1000003 elements (edge cases first: signed zeros,
// infinities, NaN, subnormals, f16 overflow, halves, integer MIN / MAX / 0 / -1, shift widths),
// also from a misaligned start (the scalar path) and in place. Exact ops must give the CPU's
// bits (any NaN matching any NaN); transcendental ones agree within a few ulp (per-dtype
// tolerances below). The GPU tests skip without a device; without --config=cuda the file is one
// skipping test.
#include "gtest/gtest.h"

#ifdef GRAFT_CUDA

#include <cmath>

#include "core/backend/cuda/kernels/elementwise.h"
#include "core/dtype/convert.h"
#include "core/primitives/elementwise.h"
#include "tests/cuda/kernels_test_util.h"

namespace graft::cuda {
namespace {

using namespace graft::cuda::testing;  // NOLINT: the test helpers
using P = PrimitiveId;

#define GRAFT_ID(name) P::k##name,
#define GRAFT_NONE(name)
#define GRAFT_UNARY_ROW(name, str, family, kind, ...) GRAFT_IF_##kind(GRAFT_ID, GRAFT_NONE, name)
#define GRAFT_BINARY_ROW(name, str, family, kind, ...) GRAFT_IF_##kind(GRAFT_NONE, GRAFT_ID, name)
constexpr P kUnaryOps[] = {GRAFT_PRIMITIVES(GRAFT_UNARY_ROW)};
constexpr P kBinaryOps[] = {GRAFT_PRIMITIVES(GRAFT_BINARY_ROW)};
#undef GRAFT_BINARY_ROW
#undef GRAFT_UNARY_ROW
#undef GRAFT_NONE
#undef GRAFT_ID

constexpr int64_t kSizes[] = {0, 1, 1000003};

std::string name_of(P op) { return kPrimitiveNames[static_cast<int>(op)]; }

// Ops the CPU computes exactly (or, for f32 / f16 / bf16, with XLA's algorithms, which the GPU
// ports op for op): the GPU must give the same bits.
bool exact(P op, DType d) {
  switch (op) {
    case P::kLog:
    case P::kLog1p:
    case P::kErf:
    case P::kErfInv:
      return d != DType::kF64;
    case P::kExp:
    case P::kExpm1:
    case P::kSin:
    case P::kCos:
    case P::kTan:
    case P::kAtan:
    case P::kAsin:
    case P::kAcos:
    case P::kSinh:
    case P::kCosh:
    case P::kAsinh:
    case P::kAcosh:
    case P::kAtanh:
    case P::kTanh:
    case P::kLogistic:
    case P::kPow:
      return !is_floating(d);
    default:
      return true;
  }
}

// Transcendental results: a few ulp of the result's dtype (f16 / bf16: one rounding flip of
// the f32 value), plus an absolute term where the CPU is accurate in absolute terms only: sin
// and cos (argument reduction), and f32 logistic, which the CPU computes with Eigen's rational
// approximation (about 3e-8 absolute: 5e-5 relative near x = -7), where the GPU computes
// e^x / (1 + e^x) to a few ulp.
Tol tolerance(P op, DType d) {
  if (exact(op, d)) return {};
  const bool trig = op == P::kSin || op == P::kCos;
  const bool absolute = trig || op == P::kLogistic;
  switch (d) {
    case DType::kF16:
      return {2e-3, absolute ? 2e-6 : 1.2e-7};
    case DType::kBF16:
      return {1.6e-2, absolute ? 2e-6 : 1e-30};
    case DType::kF32:
      return {4e-6, absolute ? 2e-7 : 1e-30};
    default:  // f64; erf_inv near +-1 is ill-conditioned (the CPU and GPU refine differently)
      return {op == P::kErfInv ? 1e-9 : 1e-13, trig ? 1e-14 : 1e-300};
  }
}

Domain unary_domain(P op) {
  switch (op) {
    case P::kLog:
    case P::kSqrt:
    case P::kRsqrt:
      return {0, 1e4};
    case P::kLog1p:
      return {-1, 10};
    case P::kAsin:
    case P::kAcos:
    case P::kAtanh:
    case P::kErfInv:
      return {-1, 1};
    case P::kAcosh:
      return {1, 100};
    case P::kExp:
    case P::kExpm1:
      return {-100, 100};
    case P::kSinh:
    case P::kCosh:
      return {-90, 90};
    default:
      return {};
  }
}

// Runs `launch(x_offset, y_offset, count, in_place)` three ways and compares each with `want`:
// from element 0, from element 1 (misaligned: the scalar path), and in place when the output
// dtype is the input's. `inputs` are the device inputs (the first is overwritten in place).
template <typename Launch>
void run_three_ways(DType out_dtype, DType in_dtype, int64_t n, const std::vector<uint8_t>& want,
                    Tol tol, DeviceBuffer& first_input, Launch launch) {
  DeviceBuffer dy(byte_size(out_dtype, n));
  launch(dy.get(), 0, n);
  EXPECT_TRUE(agree(out_dtype, dy.download().data(), want.data(), n, tol)) << "aligned";
  if (n < 2) return;
  const int64_t ow = dtype_size(out_dtype);
  launch(dy.get(), 1, n - 1);
  EXPECT_TRUE(agree(out_dtype, dy.download().data() + ow, want.data() + ow, n - 1, tol))
      << "from element 1";
  if (out_dtype == in_dtype) {
    launch(first_input.get(), 0, n);
    EXPECT_TRUE(agree(out_dtype, first_input.download().data(), want.data(), n, tol)) << "in place";
  }
}

TEST(CudaElementwise, UnaryMatchesCpu) {
  GRAFT_REQUIRE_GPUS(1);
  for (P op : kUnaryOps) {
    for (DType d : kAllDTypes) {
      if (!dtype_in_class(primitive_facts(op).dtypes, d)) continue;
      for (int64_t n : kSizes) {
        SCOPED_TRACE(name_of(op) + " " + dtype_name(d) + "[" + std::to_string(n) + "]");
        const auto x = make_values(d, n, unary_domain(op), 1);
        const Array ref = unary(op, host_array(x, {n}, d));
        auto want = bytes_of(ref);
        if (op == P::kLog && d == DType::kF64) {
          // The CPU's Eigen log clamps f64 subnormals to the smallest normal (log(1e-310) =
          // -708.4, not -713.8); the GPU computes them: compare those with libm.
          for (int64_t i = 0; i < n; ++i) {
            const double v = value_at(d, x.data(), i);
            if (v > 0 && v < std::numeric_limits<double>::min()) put<double>(want, i, std::log(v));
          }
        }
        DeviceBuffer dx(x);
        run_three_ways(ref.dtype(), d, n, want, tolerance(op, d), dx,
                       [&](void* y, int64_t off, int64_t count) {
                         const int64_t iw = dtype_size(d), ow = dtype_size(ref.dtype());
                         void* out = y == dx.get() ? y : static_cast<char*>(y) + off * ow;
                         launch_unary(op, d, dx.as<char>(off * iw), out, count, nullptr);
                       });
      }
    }
  }
}

Domain binary_domain(P op, DType d, int operand) {
  if (op == P::kPow) {
    if (is_floating(d)) return operand == 0 ? Domain{0, 4} : Domain{-4, 4};
    return operand == 0 ? Domain{-10, 10, -5, 5} : Domain{-10, 10, -3, 12};
  }
  if ((op == P::kShiftLeft || op == P::kShiftRightLogical) && operand == 1) {
    return {-10, 10, -3, 8 * dtype_size(d) + 3};
  }
  return {};
}

// Integer pairs XLA pins down: MIN / -1, x / 0, x % 0, signs of remainders.
void set_int_pairs(DType d, std::vector<uint8_t>& a, std::vector<uint8_t>& b, int64_t n) {
  if (!is_integral(d) || n < 40) return;
  dispatch_dtype(d, [&]<typename T>() {
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
      const T lo = std::numeric_limits<T>::min(), hi = std::numeric_limits<T>::max();
      const T pairs[][2] = {{lo, T(-1)},   {lo, T(0)},    {T(-7), T(2)}, {T(7), T(-2)},
                            {hi, T(-1)},   {T(0), T(0)},  {T(-7), T(0)}, {lo, lo},
                            {T(3), T(40)}, {T(-3), T(-3)}};
      for (int k = 0; k < 10; ++k) {
        put<T>(a, 30 + k, pairs[k][0]);
        put<T>(b, 30 + k, pairs[k][1]);
      }
    }
  });
}

TEST(CudaElementwise, BinaryMatchesCpu) {
  GRAFT_REQUIRE_GPUS(1);
  for (P op : kBinaryOps) {
    for (DType d : kAllDTypes) {
      if (!dtype_in_class(primitive_facts(op).dtypes, d)) continue;
      for (int64_t n : kSizes) {
        SCOPED_TRACE(name_of(op) + " " + dtype_name(d) + "[" + std::to_string(n) + "]");
        auto a = make_values(d, n, binary_domain(op, d, 0), 2);
        auto b = make_values(d, n, binary_domain(op, d, 1), 3);
        // Pair each edge case with the next one (max(0, -0), inf - inf, 1 / 0, ...).
        const int64_t w = dtype_size(d), edges = std::min<int64_t>(n, 25);
        if (edges > 1) std::rotate(b.begin(), b.begin() + w, b.begin() + edges * w);
        set_int_pairs(d, a, b, n);
        const Array ref = binary(op, host_array(a, {n}, d), host_array(b, {n}, d));
        const auto want = bytes_of(ref);
        DeviceBuffer da(a), db(b);
        run_three_ways(ref.dtype(), d, n, want, tolerance(op, d), da,
                       [&](void* y, int64_t off, int64_t count) {
                         const int64_t ow = dtype_size(ref.dtype());
                         void* out = y == da.get() ? y : static_cast<char*>(y) + off * ow;
                         launch_binary(op, d, da.as<char>(off * w), db.as<char>(off * w), out,
                                       count, nullptr);
                       });
      }
    }
  }
}

TEST(CudaElementwise, SelectMatchesCpu) {
  GRAFT_REQUIRE_GPUS(1);
  for (DType d : kAllDTypes) {
    for (int64_t n : kSizes) {
      SCOPED_TRACE(std::string(dtype_name(d)) + "[" + std::to_string(n) + "]");
      const auto pred = make_values(DType::kBool, n, {}, 4);
      const auto f = make_values(d, n, {}, 5), t = make_values(d, n, {}, 6);
      const Array ref = bind1(
          std::make_shared<const SelectN>(),
          {host_array(pred, {n}, DType::kBool), host_array(f, {n}, d), host_array(t, {n}, d)});
      const auto want = bytes_of(ref);
      DeviceBuffer dp(pred), df(f), dt(t);
      const int64_t w = dtype_size(d);
      run_three_ways(d, DType::kBool, n, want, {}, df, [&](void* y, int64_t off, int64_t count) {
        void* out = y == df.get() ? y : static_cast<char*>(y) + off * w;
        launch_select(d, dp.as<bool>(off), df.as<char>(off * w), dt.as<char>(off * w), out, count,
                      nullptr);
      });
    }
  }
}

// Every (from, to) pair against core/dtype/convert.h's convert_value, which the CPU kernel applies:
// saturation of out-of-range floats, NaN -> 0, wrapping integers, f16 / bf16 rounding.
TEST(CudaElementwise, ConvertMatchesCpu) {
  GRAFT_REQUIRE_GPUS(1);
  for (DType from : kAllDTypes) {
    for (DType to : kAllDTypes) {
      for (int64_t n : {int64_t{1}, int64_t{1000003}}) {
        SCOPED_TRACE(std::string(dtype_name(from)) + " -> " + dtype_name(to) + "[" +
                     std::to_string(n) + "]");
        const auto x = make_values(from, n, {-3e9, 3e9}, 7);
        std::vector<uint8_t> want(byte_size(to, n));
        dispatch_dtype(from, [&]<typename S>() {
          dispatch_dtype(to, [&]<typename D>() {
            const S* xs = reinterpret_cast<const S*>(x.data());
            for (int64_t i = 0; i < n; ++i) put<D>(want, i, convert_value<S, D>(xs[i]));
          });
        });
        DeviceBuffer dx(x), dy(want.size());
        launch_convert(from, to, dx.get(), dy.get(), n, nullptr);
        EXPECT_TRUE(agree(to, dy.download().data(), want.data(), n, {}));
      }
    }
  }
}

// Rejections happen on the host, before any launch: no GPU needed.
TEST(CudaElementwise, RejectsOpsAndDtypesTheCpuRejects) {
  EXPECT_THROW(launch_unary(P::kExp, DType::kI32, nullptr, nullptr, 4, nullptr), Error);
  EXPECT_THROW(launch_unary(P::kNot, DType::kF32, nullptr, nullptr, 4, nullptr), Error);
  EXPECT_THROW(launch_unary(P::kNeg, DType::kBool, nullptr, nullptr, 4, nullptr), Error);
  EXPECT_THROW(launch_unary(P::kAdd, DType::kF32, nullptr, nullptr, 4, nullptr), Error);
  EXPECT_THROW(launch_binary(P::kAnd, DType::kF32, nullptr, nullptr, nullptr, 4, nullptr), Error);
  EXPECT_THROW(launch_binary(P::kShiftLeft, DType::kBool, nullptr, nullptr, nullptr, 4, nullptr),
               Error);
  EXPECT_THROW(launch_binary(P::kExp, DType::kF32, nullptr, nullptr, nullptr, 4, nullptr), Error);
  // Nothing to do is not an error, and launches nothing.
  EXPECT_NO_THROW(launch_unary(P::kExp, DType::kF32, nullptr, nullptr, 0, nullptr));
}

}  // namespace
}  // namespace graft::cuda

#else  // !GRAFT_CUDA

TEST(CudaElementwise, NeedsCuda) { GTEST_SKIP() << "built without CUDA (--config=cuda)"; }

#endif  // GRAFT_CUDA
