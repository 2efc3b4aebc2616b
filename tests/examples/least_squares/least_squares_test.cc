// examples/least_squares: the three fits against the normal equations solved by a plain
// Gaussian elimination in double, and the residual's gradient against its closed form
// 2 (y - A c).
#include <cmath>
#include <vector>

#include "examples/least_squares/least_squares.h"
#include "gtest/gtest.h"

namespace graft::examples {
namespace {

// (A^T A) c = A^T y by Gaussian elimination with partial pivoting, in double.
std::vector<double> reference_fit(const std::vector<double>& a, const std::vector<double>& y,
                                  int64_t n, int64_t k) {
  std::vector<double> m(k * (k + 1), 0.0);
  for (int64_t i = 0; i < k; ++i) {
    for (int64_t j = 0; j < k; ++j)
      for (int64_t r = 0; r < n; ++r) m[i * (k + 1) + j] += a[r * k + i] * a[r * k + j];
    for (int64_t r = 0; r < n; ++r) m[i * (k + 1) + k] += a[r * k + i] * y[r];
  }
  for (int64_t c = 0; c < k; ++c) {
    int64_t p = c;
    for (int64_t r = c + 1; r < k; ++r)
      if (std::fabs(m[r * (k + 1) + c]) > std::fabs(m[p * (k + 1) + c])) p = r;
    for (int64_t j = 0; j <= k; ++j) std::swap(m[c * (k + 1) + j], m[p * (k + 1) + j]);
    for (int64_t r = 0; r < k; ++r) {
      if (r == c) continue;
      const double f = m[r * (k + 1) + c] / m[c * (k + 1) + c];
      for (int64_t j = 0; j <= k; ++j) m[r * (k + 1) + j] -= f * m[c * (k + 1) + j];
    }
  }
  std::vector<double> c(k);
  for (int64_t i = 0; i < k; ++i) c[i] = m[i * (k + 1) + k] / m[i * (k + 1) + i];
  return c;
}

TEST(LeastSquaresTest, EveryMethodMatchesTheNormalEquations) {
  const int64_t n = 30, degree = 3, k = degree + 1;
  std::vector<double> xs(n), ys(n);
  for (int64_t i = 0; i < n; ++i) {
    xs[i] = -1.0 + 2.0 * static_cast<double>(i) / (n - 1);
    ys[i] = std::sin(3 * xs[i]) + 0.1 * std::cos(17.0 * i);  // a deterministic "noise"
  }
  Array x = array<double>(xs, Shape{n}), y = array<double>(ys, Shape{n});
  Array a = design_matrix(x, degree);
  ASSERT_EQ(a.shape(), (Shape{n, k}));
  std::vector<double> want = reference_fit(a.to_vector<double>(), ys, n, k);
  for (const Array& c : {fit_lstsq(a, y), fit_normal_equations(a, y), fit_qr(a, y)}) {
    std::vector<double> got = c.to_vector<double>();
    ASSERT_EQ(got.size(), static_cast<size_t>(k));
    for (int64_t i = 0; i < k; ++i) EXPECT_NEAR(got[i], want[i], 1e-9) << i;
  }
  // d/dy |A c(y) - y|^2 = 2 (y - A c): the fit's own derivative drops out at the optimum.
  std::vector<double> g = residual_gradient(a, y).to_vector<double>();
  std::vector<double> fitted = matmul(a, array<double>(want, Shape{k})).to_vector<double>();
  for (int64_t i = 0; i < n; ++i) EXPECT_NEAR(g[i], 2 * (ys[i] - fitted[i]), 1e-9) << i;
}

}  // namespace
}  // namespace graft::examples
