// linear_transpose against hand-computed transposes (matmul -> matmul by the transpose,
// slicing -> padding, sum -> broadcast, a pytree of two arguments), and JAX's errors.
#include "transforms/linear_transpose.h"

#include <string>
#include <vector>

#include "core/ops.h"
#include "gtest/gtest.h"
#include "tests/transforms/expect_util.h"

namespace graft {
namespace {

using testing_util::vals;

void expect_near(const Array& a, const std::vector<double>& want) {
  testing_util::expect_near(a, want, 1e-12);
}

template <typename F>
void expect_error(F f, const std::string& part) {
  testing_util::expect_error(f, "[linear_transpose]", part);
}

const Array kA = array<double>({1, 2, 3, 4, 5, 6}, Shape{2, 3});

TEST(LinearTransposeTest, MatmulTransposesToTheTransposedMatrix) {
  auto f = [](const Array& x) { return matmul(kA, x); };  // (3,) -> (2,)
  auto ft = linear_transpose(f, zeros({3}, DType::kF64));
  auto [ct] = ft(array<double>({1.0, -2.0}));
  // A^T c = (1 - 8, 2 - 10, 3 - 12).
  expect_near(ct, {-7, -8, -9});
}

TEST(LinearTransposeTest, SliceSumAndScaleWithTwoArguments) {
  // f(x, y) = (x[1:3] * 2, sum(y) - x[0]): its transpose maps (c1 (2,), c2 ()) to
  // (x: (-c2, 2 c1[0], 2 c1[1], 0), y: broadcast c2).
  auto f = [](const Array& x, const Array& y) {
    return std::pair{slice(x, {1}, {3}) * 2.0,
                     sum(y) - reshape(slice(x, {0}, {1}), Shape{})};
  };
  auto ft = linear_transpose(f, zeros({4}, DType::kF64), zeros({2, 2}, DType::kF64));
  auto [cx, cy] = ft(std::pair{array<double>({3.0, -1.0}), array<double>({0.5}, Shape{})});
  expect_near(cx, {-0.5, 6.0, -2.0, 0.0});
  expect_near(cy, {0.5, 0.5, 0.5, 0.5});
  ASSERT_EQ(shape_str(cy.shape()), "(2, 2)");
  // The transpose of the transpose is f again: <f(x), c> = <x, ft(c)> for any x and c.
  Array x = array<double>({1, 2, 3, 4}), y = array<double>({1, -1, 2, 0.5}, Shape{2, 2});
  auto [o1, o2] = f(x, y);
  double lhs = vals(sum(o1 * array<double>({3.0, -1.0})))[0] + o2.item<double>() * 0.5;
  double rhs = vals(sum(x * cx))[0] + vals(sum(y * cy))[0];
  EXPECT_NEAR(lhs, rhs, 1e-12);
}

TEST(LinearTransposeTest, ErrorsAsJax) {
  auto f = [](const Array& x) { return matmul(kA, x); };
  auto ft = linear_transpose(f, zeros({3}, DType::kF64));
  expect_error([&] { ft(zeros({3}, DType::kF64)); }, "cotangent type does not match");
  expect_error([&] { ft(zeros({2}, DType::kF32)); }, "cotangent type does not match");
  auto g = [](const Array& x) { return std::pair{x, x}; };
  auto gt = linear_transpose(g, zeros({3}, DType::kF64));
  auto [c] = gt(std::pair{ones({3}, DType::kF64), ones({3}, DType::kF64)});
  expect_near(c, {2, 2, 2});
  expect_error([&] { linear_transpose([](const Array& x) { return sin(x); }, zeros({3})); },
               "not linear");
  expect_error([&] { linear_transpose([](const Array& x) { return x * x; }, zeros({3})); },
               "not linear");
  expect_error([&] { linear_transpose([](const Array& x) { return x * 2; }, zeros({3}, DType::kI32)); },
               "only supports [float] -> [float]");
}

}  // namespace
}  // namespace graft
