// vjp with has_aux against a hand-derived pullback, and eval_shape (shapes and dtypes only).
#include <cmath>
#include <utility>
#include <vector>

#include "core/ops.h"
#include "gtest/gtest.h"
#include "transforms/autodiff.h"
#include "transforms/eval_shape.h"

namespace graft {
namespace {

TEST(VjpHasAux, PullbackIgnoresAuxAndMatchesHandDerivative) {
  Array x = array(std::vector<float>{0.5f, -1.0f, 2.0f});
  Array y = array(std::vector<float>{0.3f, 1.2f, -0.7f});
  // f(x, y) = x * sin(y), aux = {x + 1, sum(y)}; d/dx = ct sin(y), d/dy = ct x cos(y).
  auto f = [](const Array& a, const Array& b) {
    return std::pair{a * sin(b), std::vector<Array>{a + 1.0, sum(b)}};
  };
  auto [out, pullback, aux] = vjp(f, has_aux, x, y);
  Array ct = array(std::vector<float>{1.0f, 2.0f, -3.0f});
  auto [gx, gy] = pullback(ct);
  std::vector<float> xs = x.to_vector<float>(), ys = y.to_vector<float>(),
                     cs = ct.to_vector<float>();
  std::vector<float> o = out.to_vector<float>(), ax = gx.to_vector<float>(),
                     ay = gy.to_vector<float>(), a0 = aux[0].to_vector<float>();
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_NEAR(o[i], xs[i] * std::sin(ys[i]), 1e-6);
    EXPECT_NEAR(ax[i], cs[i] * std::sin(ys[i]), 1e-6);
    EXPECT_NEAR(ay[i], cs[i] * xs[i] * std::cos(ys[i]), 1e-6);
    EXPECT_NEAR(a0[i], xs[i] + 1.0f, 1e-6);
  }
  EXPECT_NEAR(aux[1].item<float>(), 0.3f + 1.2f - 0.7f, 1e-6);
  EXPECT_THROW(pullback(ones({4})), Error);  // wrong cotangent shape
}

TEST(EvalShape, GivesShapesAndDtypesWithoutValues) {
  Array x = ones({2, 3}), y = ones({3, 4}, DType::kF64);
  auto r = eval_shape(
      [](const Array& a, const Array& b) {
        return std::pair{matmul(a, b), astype(sum(a), DType::kI32)};
      },
      x, y);
  EXPECT_EQ(r.first.shape(), (Shape{2, 4}));
  EXPECT_EQ(r.first.dtype(), DType::kF64);
  EXPECT_EQ(r.second.shape(), Shape{});
  EXPECT_EQ(r.second.dtype(), DType::kI32);
  EXPECT_THROW(r.first.to_vector<double>(), Error);  // no value, like a ShapeDtypeStruct
  try {
    eval_shape([](const Array& a, const Array& b) { return matmul(a, b); }, x, ones({4, 4}));
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("matmul"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace graft
