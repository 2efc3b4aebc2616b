// Rows of the op-spec table whose references came from running JAX: the edge cases where
// graft follows jax.numpy exactly (floor_divide / remainder over signed zeros, infinities,
// NaN and division by zero; clip of an integer array with float bounds; cumsum's dtype).
// Made by tools/make_jax_edge_vectors.py (JAX 0.10.2 on CPU, default config, i.e. without
// x64; the i64 rows with JAX_ENABLE_X64=1): its printed lists are pasted here unchanged.
#include "tests/core/primitives/specs/jax_parity_cases.h"

#include <cmath>
#include <cstdint>
#include <limits>

namespace graft::spec {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNan = std::numeric_limits<double>::quiet_NaN();

// clang-format off
// Every pair (x, y) of these, x major: the grid the JAX values below were computed on.
const std::vector<double> kGrid = {-kInf, -3.0, -1.0, -0.5, -0.0, 0.0, 0.5, 1.0, 3.0, kInf, kNan, 7.5,
                                   -7.5};
const std::vector<double> kGridFloorDivide =
    {kNan, kNan, kNan, kNan, kInf, -kInf, kNan, kNan, kNan, kNan, kNan, kNan, kNan, -0.0, 1.0,
     3.0, 6.0, kInf, -kInf, -6.0, -3.0, -1.0, -1.0, kNan, -1.0, -0.0, -0.0, -0.0, 1.0, 2.0, kInf,
     -kInf, -2.0, -1.0, -1.0, -1.0, kNan, -1.0, -0.0, -0.0, -0.0, -0.0, 1.0, kInf, -kInf, -1.0,
     -1.0, -1.0, -1.0, kNan, -1.0, -0.0, -0.0, -0.0, -0.0, -0.0, kNan, kNan, 0.0, 0.0, 0.0, 0.0,
     kNan, 0.0, -0.0, -0.0, -0.0, -0.0, -0.0, kNan, kNan, 0.0, 0.0, 0.0, 0.0, kNan, 0.0, -0.0,
     -1.0, -1.0, -1.0, -1.0, -kInf, kInf, 1.0, 0.0, 0.0, 0.0, kNan, 0.0, -1.0, -1.0, -1.0, -1.0,
     -2.0, -kInf, kInf, 2.0, 1.0, 0.0, 0.0, kNan, 0.0, -1.0, -1.0, -1.0, -3.0, -6.0, -kInf, kInf,
     6.0, 3.0, 1.0, 0.0, kNan, 0.0, -1.0, kNan, kNan, kNan, kNan, -kInf, kInf, kNan, kNan, kNan,
     kNan, kNan, kNan, kNan, kNan, kNan, kNan, kNan, kNan, kNan, kNan, kNan, kNan, kNan, kNan,
     kNan, kNan, -1.0, -3.0, -8.0, -15.0, -kInf, kInf, 15.0, 7.0, 2.0, 0.0, kNan, 1.0, -1.0, -0.0,
     2.0, 7.0, 15.0, kInf, -kInf, -15.0, -8.0, -3.0, -1.0, kNan, -1.0, 1.0};
const std::vector<double> kGridRemainder =
    {kNan, kNan, kNan, kNan, kNan, kNan, kNan, kNan, kNan, kNan, kNan, kNan, kNan, -3.0, -0.0,
     -0.0, -0.0, kNan, kNan, -0.0, -0.0, -0.0, kInf, kNan, 4.5, -3.0, -1.0, -1.0, -0.0, -0.0,
     kNan, kNan, -0.0, -0.0, 2.0, kInf, kNan, 6.5, -1.0, -0.5, -0.5, -0.5, -0.0, kNan, kNan, -0.0,
     0.5, 2.5, kInf, kNan, 7.0, -0.5, -0.0, -0.0, -0.0, -0.0, kNan, kNan, -0.0, -0.0, -0.0, -0.0,
     kNan, -0.0, -0.0, 0.0, 0.0, 0.0, 0.0, kNan, kNan, 0.0, 0.0, 0.0, 0.0, kNan, 0.0, 0.0, -kInf,
     -2.5, -0.5, 0.0, kNan, kNan, 0.0, 0.5, 0.5, 0.5, kNan, 0.5, -7.0, -kInf, -2.0, 0.0, 0.0,
     kNan, kNan, 0.0, 0.0, 1.0, 1.0, kNan, 1.0, -6.5, -kInf, 0.0, 0.0, 0.0, kNan, kNan, 0.0, 0.0,
     0.0, 3.0, kNan, 3.0, -4.5, kNan, kNan, kNan, kNan, kNan, kNan, kNan, kNan, kNan, kNan, kNan,
     kNan, kNan, kNan, kNan, kNan, kNan, kNan, kNan, kNan, kNan, kNan, kNan, kNan, kNan, kNan,
     -kInf, -1.5, -0.5, 0.0, kNan, kNan, 0.0, 0.5, 1.5, 7.5, kNan, 0.0, 0.0, -7.5, -1.5, -0.5,
     -0.0, kNan, kNan, -0.0, 0.5, 1.5, kInf, kNan, -0.0, -0.0};
// f32 pairs whose quotient rounds (x - fmod(x, y) is inexact), as f32 stores them.
const std::vector<double> kRoughX =
    {7.300000190734863, -7.300000190734863, 10000000.0, 5.0, -5.0, 0.30000001192092896, 1.0, -2.0,
     3.000000106112566e-07, 123456.703125};
const std::vector<double> kRoughY =
    {0.10000000149011612, 0.10000000149011612, 0.699999988079071, 0.10000000149011612,
     -0.10000000149011612, 0.10000000149011612, 0.30000001192092896, 0.6000000238418579,
     -1.0000000116860974e-07, -0.3700000047683716};
const std::vector<double> kRoughFloorDivide =
    {73.0, -74.0, 14285715.0, 49.0, 49.0, 3.0, 3.0, -4.0, -4.0, -333667.0};
const std::vector<double> kRoughRemainder =
    {8.195638656616211e-08, 0.09999991953372955, 0.37029898166656494, 0.09999992698431015,
     -0.09999992698431015, 7.450580596923828e-09, 0.09999996423721313, 0.40000009536743164,
     -9.999999406318238e-08, -0.08846604824066162};

struct IntGrid {
  DType dtype;
  std::vector<double> x, y, floor_divide, remainder;
};
// x // 0 is -1 for x == 0 and -2 otherwise (signed; all ones unsigned), x % 0 is 0.
const std::vector<IntGrid> kIntGrids = {
    {DType::kI32, {0, 1, 7, INT32_MAX, -1, -7, INT32_MIN}, {0, 1, 3, -1, -3},
     {-1, 0, 0, 0, 0, -2, 1, 0, -1, -1, -2, 7, 2, -7, -3, -2, 2147483647, 715827882, -2147483647,
      -715827883, -2, -1, -1, 1, 0, -2, -7, -3, 7, 2, -2, -2147483648, -715827883, -2147483648,
      715827882},
     {0, 0, 0, 0, 0, 0, 0, 1, 0, -2, 0, 0, 1, 0, -2, 0, 0, 1, 0, -2, 0, 0, 2, 0, -1, 0, 0, 2, 0,
      -1, 0, 0, 1, 0, -2}},
    {DType::kI64, {0, 1, 7, double(INT64_MAX), -1, -7, double(INT64_MIN)}, {0, 1, 3, -1, -3},
     {-1, 0, 0, 0, 0, -2, 1, 0, -1, -1, -2, 7, 2, -7, -3, -2, double(INT64_MAX),
      3074457345618258602.0, -double(INT64_MAX), -3074457345618258603.0, -2, -1, -1, 1, 0, -2, -7,
      -3, 7, 2, -2, double(INT64_MIN), -3074457345618258603.0, double(INT64_MIN),
      3074457345618258602.0},
     {0, 0, 0, 0, 0, 0, 0, 1, 0, -2, 0, 0, 1, 0, -2, 0, 0, 1, 0, -2, 0, 0, 2, 0, -1, 0, 0, 2, 0,
      -1, 0, 0, 1, 0, -2}},
    {DType::kU32, {0, 1, 7, UINT32_MAX}, {0, 1, 3},
     {4294967295, 0, 0, 4294967295, 1, 0, 4294967295, 7, 2, 4294967295, 4294967295, 1431655765},
     {0, 0, 0, 0, 0, 1, 0, 0, 1, 0, 0, 0}},
    {DType::kU8, {0, 1, 7, 255}, {0, 1, 3},
     {255, 0, 0, 255, 1, 0, 255, 7, 2, 255, 255, 85},
     {0, 0, 0, 0, 0, 1, 0, 0, 1, 0, 0, 0}},
};
// clang-format on

// The x-major pairs of xs and ys as two flat operands of `dtype`.
std::pair<Array, Array> pairs(const std::vector<double>& xs, const std::vector<double>& ys,
                              DType dtype) {
  std::vector<double> a, b;
  for (double x : xs) {
    for (double y : ys) {
      a.push_back(x);
      b.push_back(y);
    }
  }
  const int64_t n = static_cast<int64_t>(a.size());
  return {make(a, {n}, dtype), make(b, {n}, dtype)};
}

// op(x, y) followed by whether each result's sign bit is set (r < 0 or 1 / r < 0: -0.0 and
// negatives, not NaN), so a zero of the wrong sign fails the table's value comparison.
Case signed_case(const std::string& name, const std::vector<Array>& in,
                 std::function<Array(const Array&, const Array&)> op,
                 const std::vector<double>& want) {
  Expected e{{2 * static_cast<int64_t>(want.size())}, in[0].dtype(), want};
  for (double v : want) e.values.push_back(!std::isnan(v) && std::signbit(v) ? 1 : 0);
  Case c{name, in,
         [op](const std::vector<Array>& xs) {
           Array r = op(xs[0], xs[1]);
           Array negative = logical_or(less(r, 0), less(divide(1, r), 0));
           return concatenate({r, astype(negative, r.dtype())}, 0);
         },
         e};
  c.skip_grad = "piecewise constant or on its jumps, and at infinities and NaN";
  return c;
}

using BinaryOp = Array (*)(const Array&, const Array&);

void add_division_cases(Spec& s, BinaryOp op, const char* what,
                        const std::vector<double>& grid_want, const std::vector<double>& rough_want,
                        std::vector<double> IntGrid::*int_want) {
  for (DType d : {DType::kF32, DType::kF64, DType::kBF16, DType::kF16}) {
    auto [x, y] = pairs(kGrid, kGrid, d);
    s.cases.push_back(signed_case(std::string(dtype_name(d)) + " " + what + " JAX edge grid",
                                  {x, y}, op, grid_want));
  }
  Array rx = make(kRoughX, {static_cast<int64_t>(kRoughX.size())}, DType::kF32);
  Array ry = make(kRoughY, {static_cast<int64_t>(kRoughY.size())}, DType::kF32);
  s.cases.push_back(
      signed_case(std::string("f32 ") + what + " JAX rounding", {rx, ry}, op, rough_want));
  for (const IntGrid& g : kIntGrids) {
    auto [x, y] = pairs(g.x, g.y, g.dtype);
    const int64_t n = x.shape()[0];
    s.cases.push_back({std::string(dtype_name(g.dtype)) + " " + what + " JAX (by zero too)",
                       {x, y},
                       [op](const std::vector<Array>& in) { return op(in[0], in[1]); },
                       Expected{{n}, g.dtype, g.*int_want}});
  }
}

}  // namespace

void add_jax_floor_divide_cases(Spec& s) {
  add_division_cases(s, &floor_divide, "floor_divide", kGridFloorDivide, kRoughFloorDivide,
                     &IntGrid::floor_divide);
}

void add_jax_remainder_cases(Spec& s) {
  add_division_cases(s, &remainder, "remainder", kGridRemainder, kRoughRemainder,
                     &IntGrid::remainder);
}

void add_jax_promotion_cases(Spec& s) {
  // jnp.clip(i32 [-3, 0, 1, 2, 5], 0.5, 2.5): f32 (the weak float bound makes the default
  // float, weak, and the second bound keeps it f32).
  Array x = make({-3, 0, 1, 2, 5}, {5}, DType::kI32);
  s.cases.push_back({"i32 clip with C++ double bounds is f32 (JAX)",
                     {x},
                     [](const std::vector<Array>& in) { return clip(in[0], 0.5, 2.5); },
                     Expected{{5}, DType::kF32, {0.5, 0.5, 1.0, 2.0, 2.5}}});
  // u8 [0, 3, 9] + 2.5 + 0.1 in jnp: f32 [2.6, 5.6, 11.6] (f32 sums of f32-rounded terms).
  s.cases.push_back(
      {"u8 + 2.5 + 0.1 is f32 (JAX)",
       {make({0, 3, 9}, {3}, DType::kU8)},
       [](const std::vector<Array>& in) { return in[0] + 2.5 + 0.1; },
       Expected{
           {3}, DType::kF32, {double(2.5f + 0.1f), double(5.5f + 0.1f), double(11.5f + 0.1f)}}});
}

void add_jax_cumsum_cases(Spec& s) {
  // jnp.cumsum(u8 [200, 100, 50, 6, 255]) stays u8 and wraps (jnp.sum of it is u32: 611).
  s.cases.push_back({"u8 cumsum stays u8 and wraps (JAX)",
                     {make({200, 100, 50, 6, 255}, {5}, DType::kU8)},
                     [](const std::vector<Array>& in) { return cumsum(in[0]); },
                     Expected{{5}, DType::kU8, {200, 44, 94, 100, 99}}});
  s.cases.push_back({"bool cumsum is i32 (JAX)",
                     {make({1, 1, 0, 1}, {4}, DType::kBool)},
                     [](const std::vector<Array>& in) { return cumsum(in[0]); },
                     Expected{{4}, DType::kI32, {1, 2, 2, 3}}});
}

}  // namespace graft::spec
