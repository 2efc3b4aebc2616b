// lax.map (transforms/lax_map.h): against a loop over the slices, with pytree xs and results,
// with batch_size dividing n, leaving a remainder and exceeding n; under grad, jit and vmap.
#include "transforms/lax_map.h"

#include <cmath>
#include <utility>
#include <vector>

#include "core/ops.h"
#include "gtest/gtest.h"
#include "tests/transforms/expect_util.h"
#include "transforms/autodiff.h"
#include "transforms/jit.h"

namespace graft {
namespace {

using testing_util::expect_error;
using testing_util::expect_near;
using testing_util::vals;

// f(row) = (sum(row^2), row * row[0]): a scalar and a vector per slice.
std::pair<Array, Array> f(const Array& row) {
  return {sum(row * row), row * slice_axis(row, 0, 0, 1)};
}

// The loop reference, from the values.
std::pair<std::vector<double>, std::vector<double>> reference(const Array& m) {
  std::vector<double> v = vals(m), s, p;
  const int64_t n = m.shape()[0], k = m.shape()[1];
  for (int64_t i = 0; i < n; ++i) {
    double acc = 0;
    for (int64_t j = 0; j < k; ++j) acc += v[i * k + j] * v[i * k + j];
    s.push_back(acc);
    for (int64_t j = 0; j < k; ++j) p.push_back(v[i * k + j] * v[i * k]);
  }
  return {s, p};
}

TEST(LaxMap, MatchesALoopForEveryBatchSize) {
  Array m = reshape(arange(15.0) * 0.5 - 3.0, {5, 3});
  auto [s, p] = reference(m);
  for (std::optional<int64_t> b :
       {std::optional<int64_t>(), std::optional<int64_t>(1), std::optional<int64_t>(2),
        std::optional<int64_t>(5), std::optional<int64_t>(7)}) {
    SCOPED_TRACE(b ? *b : 0);
    auto [got_s, got_p] = map(f, m, b);
    EXPECT_EQ(got_s.shape(), (Shape{5}));
    EXPECT_EQ(got_p.shape(), (Shape{5, 3}));
    expect_near(got_s, s, 1e-12);
    expect_near(got_p, p, 1e-12);
  }
}

TEST(LaxMap, PytreeXs) {
  Array a = reshape(arange(6.0), {3, 2}), w = array<double>({1, -1, 2});
  Array y = map([](const std::pair<Array, Array>& x) { return sum(x.first) * x.second; },
                std::pair{a, w}, 2);
  expect_near(y, {1.0, -5.0, 18.0});
}

TEST(LaxMap, GradJitAndVmap) {
  Array m = reshape(astype(arange(12.0), DType::kF64) * 0.25, {4, 3});  // f64: 1e-12 tolerances
  auto loss = [](const Array& x) {
    return sum(map([](const Array& r) { return sin(r) * r; }, x, 3));
  };
  // d/dx sum(sin(x) x) = cos(x) x + sin(x).
  std::vector<double> want;
  for (double v : vals(m)) want.push_back(std::cos(v) * v + std::sin(v));
  expect_near(grad(loss)(m), want, 1e-12);
  expect_near(jit(loss)(m), {vals(loss(m))[0]}, 1e-12);
  // vmap over a batch of matrices equals mapping each.
  Array batch = stack({m, m * 2.0});
  Array per =
      vmap([&](const Array& x) { return map([](const Array& r) { return sum(r); }, x, 3); })(batch);
  expect_near(per, {0.75, 3.0, 5.25, 7.5, 1.5, 6.0, 10.5, 15.0}, 1e-12);
}

TEST(LaxMap, Errors) {
  expect_error([] { map([](const Array& r) { return r; }, zeros({3}), 0); }, "[map]",
               "batch_size must be positive");
  expect_error([] { map([](const Array& r) { return r; }, zeros({}), 2); }, "[map]",
               "leading axis");
}

}  // namespace
}  // namespace graft
