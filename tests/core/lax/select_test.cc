// lax.select_n with n cases (core/lax/select.h): values against a plain loop, the cases'
// gradient (the selection mask), jit against eager, vmap against a loop over rows, errors.
#include <vector>

#include "core/error.h"
#include "core/ops.h"
#include "gtest/gtest.h"
#include "tests/core/numpy/jnp_array_vectors.h"
#include "transforms/autodiff.h"
#include "transforms/jit.h"
#include "transforms/vmap.h"

namespace graft {
namespace {

using jnp_vectors::expect_error;

const std::vector<int32_t> kWhich = {0, 2, 1, 3, -1, 7, 2, 0};  // -1 and 7: out of range
std::vector<Array> three_cases() {
  return {arange(0.0, 8.0, 1.0), arange(10.0, 18.0, 1.0), arange(100.0, 108.0, 1.0),
          arange(1000.0, 1008.0, 1.0)};
}

// The plain-loop reference (out-of-range indices clamped, as the header says).
std::vector<float> reference(const std::vector<int32_t>& which, const std::vector<Array>& cases) {
  std::vector<float> out;
  for (size_t i = 0; i < which.size(); ++i) {
    const int k = std::min<int>(std::max<int>(which[i], 0), int(cases.size()) - 1);
    out.push_back(cases[k].to_vector<float>()[i]);
  }
  return out;
}

TEST(SelectN, IntegerWhichPicksEachCaseLikeALoop) {
  const std::vector<Array> cases = three_cases();
  Array got = select_n(array(kWhich), cases);
  EXPECT_EQ(got.to_vector<float>(), reference(kWhich, cases));
  // A scalar which picks one case everywhere.
  EXPECT_EQ(select_n(Array(2), cases).to_vector<float>(), cases[2].to_vector<float>());
  // One case: itself.
  EXPECT_EQ(select_n(array(kWhich), {cases[1]}).to_vector<float>(), cases[1].to_vector<float>());
}

TEST(SelectN, BoolWhichPicksTrueFromTheSecondCase) {
  Array which = array<bool>({true, false, false, true});
  Array a = array<float>({1, 2, 3, 4}), b = array<float>({-1, -2, -3, -4});
  EXPECT_EQ(select_n(which, {a, b}).to_vector<float>(), (std::vector<float>{-1, 2, 3, -4}));
}

TEST(SelectN, GradientOfTheCasesIsTheSelectionMask) {
  const std::vector<Array> cases = three_cases();
  const Array weights = arange(1.0, 9.0, 1.0);
  auto loss = [&](const std::vector<Array>& cs) {
    return sum(select_n(array(kWhich), cs) * weights);
  };
  std::vector<Array> g = grad(loss)(cases);
  ASSERT_EQ(g.size(), cases.size());
  const std::vector<float> w = weights.to_vector<float>();
  for (size_t k = 0; k < cases.size(); ++k) {
    for (size_t i = 0; i < kWhich.size(); ++i) {
      const int picked = std::min<int>(std::max<int>(kWhich[i], 0), int(cases.size()) - 1);
      EXPECT_EQ(g[k].to_vector<float>()[i], picked == int(k) ? w[i] : 0.0f) << k << ", " << i;
    }
  }
}

TEST(SelectN, JitMatchesEagerAndVmapMatchesALoop) {
  const std::vector<Array> cases = three_cases();
  auto f = [](const Array& which, const Array& a, const Array& b, const Array& c) {
    return select_n(which, {a, b, c});
  };
  Array eager = f(array(kWhich), cases[0], cases[1], cases[2]);
  Array jitted = jit(f)(array(kWhich), cases[0], cases[1], cases[2]);
  EXPECT_EQ(jitted.to_vector<float>(), eager.to_vector<float>());

  // Rows of which [2, 4] against cases [2, 4]; each row as its own call.
  Array which = reshape(array(kWhich), {2, 4});
  Array a = reshape(cases[0], {2, 4}), b = reshape(cases[1], {2, 4}), c = reshape(cases[2], {2, 4});
  Array batched = vmap(f)(which, a, b, c);
  auto row = [](const Array& x, int64_t r) { return reshape(slice(x, {r, 0}, {r + 1, 4}), {4}); };
  for (int64_t r = 0; r < 2; ++r) {
    Array want = f(row(which, r), row(a, r), row(b, r), row(c, r));
    EXPECT_EQ(row(batched, r).to_vector<float>(), want.to_vector<float>()) << r;
  }
}

TEST(SelectN, BadInputsAreErrorsNamingTheOp) {
  const std::vector<Array> cases = three_cases();
  expect_error([&] { select_n(array(kWhich), {}); }, "[select_n]");
  expect_error([&] { select_n(array(kWhich), {cases[0], astype(cases[1], DType::kF64)}); },
               "[select_n]");
  expect_error([&] { select_n(array(kWhich), {cases[0], reshape(cases[1], {2, 4})}); },
               "[select_n]");
  expect_error([&] { select_n(array<int32_t>({0, 1}), cases); }, "[select_n]");  // shape
  expect_error([&] { select_n(astype(array(kWhich), DType::kF32), cases); }, "[select_n]");
  expect_error([&] { select_n(Array(true), cases); }, "[select_n]");  // bool, 4 cases
}

}  // namespace
}  // namespace graft
