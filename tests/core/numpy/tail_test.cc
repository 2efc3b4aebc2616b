// The later jax.numpy functions (core/numpy/reductions.h, core/numpy/searching.h,
// core/numpy/array_creation.h, core/numpy/shapes.h, core/numpy/polynomial.h) against JAX.
//
// How the vectors were made: tests/core/testdata/jnp_tail_vectors.txt was written by
// tools/make_jnp_tail_vectors.py, run with JAX / jaxlib 0.10.2 on CPU (default flags, x64
// off): each case's inputs, JAX's outputs and, for the differentiable cases, jax.grad of
// sum(out0 * ct) with ct = 1 + 0.25 * arange(out0.size). Each case below repeats the JAX call
// of the same name. Checked: shapes and dtypes exactly, values (NaN matches NaN) and
// gradients to 1e-5 absolute + 2e-5 relative, jit against eager, and the error cases.
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/ops.h"
#include "gtest/gtest.h"
#include "tests/core/numpy/jnp_array_vectors.h"
#include "transforms/autodiff.h"
#include "transforms/jit.h"

namespace graft {
namespace {

using Fn = jnp_vectors::CaseFn;

const jnp_vectors::VectorFile& vectors() {
  static const auto* f = new jnp_vectors::VectorFile("tests/core/testdata/jnp_tail_vectors.txt");
  return *f;
}
std::vector<Array> inputs(const std::string& name) { return vectors().inputs(name); }
void expect_matches(const Array& got, const std::string& key) { vectors().expect_matches(got, key); }
double tol(const std::string&) { return 1e-5; }

std::vector<Array> one(const Array& a) { return {a}; }
std::vector<Array> two(const std::pair<Array, Array>& p) { return {p.first, p.second}; }
Array q3(const std::vector<Array>& x) { return x[1]; }

// Each case: the graft call matching tools/make_jnp_tail_vectors.py's case of that name.
const std::map<std::string, Fn>& cases() {
  static const auto* c = new std::map<std::string, Fn>{
      // statistics
      {"std", [](auto& x) { return one(std(x[0], {1})); }},
      {"std_ddof", [](auto& x) { return one(std(x[0], {}, false, 1)); }},
      {"nansum", [](auto& x) { return one(nansum(x[0], {1})); }},
      {"nanprod", [](auto& x) { return one(nanprod(x[0], {0})); }},
      {"nanmax", [](auto& x) { return one(nanmax(x[0], {1})); }},
      {"nanmin", [](auto& x) { return one(nanmin(x[0], {1}, true)); }},
      {"nanmean", [](auto& x) { return one(nanmean(x[0], {1})); }},
      {"nanmean_all", [](auto& x) { return one(nanmean(x[0])); }},
      {"nanvar", [](auto& x) { return one(nanvar(x[0], {1})); }},
      {"nanstd_ddof", [](auto& x) { return one(nanstd(x[0], {0}, false, 1)); }},
      {"nanargmax", [](auto& x) { return one(nanargmax(x[0], 1)); }},
      {"nanargmin", [](auto& x) { return one(nanargmin(x[0])); }},
      {"nansum_int", [](auto& x) { return one(nansum(x[0])); }},
      {"count_nonzero", [](auto& x) { return one(count_nonzero(x[0], {0})); }},
      {"quantile_linear", [](auto& x) { return one(quantile(x[0], q3(x))); }},
      {"quantile_axis", [](auto& x) { return one(quantile(x[0], q3(x), 1)); }},
      {"quantile_keep", [](auto& x) { return one(quantile(x[0], Array(0.4), 0, "linear", true)); }},
      {"quantile_lower", [](auto& x) { return one(quantile(x[0], q3(x), {}, "lower")); }},
      {"quantile_higher", [](auto& x) { return one(quantile(x[0], q3(x), {}, "higher")); }},
      {"quantile_nearest",
       [](auto& x) { return one(quantile(x[0], array<float>({0.25f, 0.5f, 0.8f}), {}, "nearest")); }},
      {"quantile_midpoint", [](auto& x) { return one(quantile(x[0], q3(x), {}, "midpoint")); }},
      {"quantile_nan", [](auto& x) { return one(quantile(x[0], Array(0.5), 1)); }},
      {"nanquantile", [](auto& x) { return one(nanquantile(x[0], q3(x), 1)); }},
      {"percentile",
       [](auto& x) { return one(percentile(x[0], array<float>({10.0f, 50.0f, 90.0f}))); }},
      {"nanpercentile", [](auto& x) { return one(nanpercentile(x[0], Array(30.0))); }},
      {"median", [](auto& x) { return one(median(x[0], 1)); }},
      {"median_int", [](auto& x) { return one(median(x[0])); }},
      {"nanmedian", [](auto& x) { return one(nanmedian(x[0], 1)); }},
      {"cov", [](auto& x) { return one(cov(x[0])); }},
      {"cov_y", [](auto& x) { return one(cov(x[0], x[1])); }},
      {"cov_cols", [](auto& x) { return one(cov(x[0], std::nullopt, false, true)); }},
      {"cov_one", [](auto& x) { return one(cov(x[0])); }},
      {"corrcoef", [](auto& x) { return one(corrcoef(x[0])); }},
      // searching and counting
      {"searchsorted_left", [](auto& x) { return one(searchsorted(x[0], x[1])); }},
      {"searchsorted_right", [](auto& x) { return one(searchsorted(x[0], x[1], "right")); }},
      {"digitize", [](auto& x) { return one(digitize(x[0], x[1])); }},
      {"digitize_right_desc", [](auto& x) { return one(digitize(x[0], flip(x[1]), true)); }},
      {"bincount", [](auto& x) { return one(bincount(x[0], 6)); }},
      {"bincount_w", [](auto& x) { return one(bincount(x[0], 5, x[1])); }},
      {"isin", [](auto& x) { return one(isin(x[0], x[1])); }},
      {"isin_invert", [](auto& x) { return one(isin(x[0], x[1], true)); }},
      {"nonzero", [](auto& x) { return nonzero(x[0], 5, -1); }},
      {"flatnonzero", [](auto& x) { return one(flatnonzero(x[0], 3)); }},
      {"argwhere", [](auto& x) { return one(argwhere(x[0], 4)); }},
      {"lexsort", [](auto& x) { return one(lexsort({x[1], x[0]})); }},
      {"histogram_bin_edges", [](auto& x) { return one(histogram_bin_edges(x[0], 4)); }},
      {"histogram", [](auto& x) { return two(histogram(x[0], 4)); }},
      {"histogram_range",
       [](auto& x) { return two(histogram(x[0], 3, std::pair{0.0, 3.0}, x[1], true)); }},
      // construction
      {"tril_indices", [](auto&) { return two(tril_indices(3, -1, 4)); }},
      {"triu_indices", [](auto&) { return two(triu_indices(4, 1)); }},
      {"triu_indices_from", [](auto& x) { return two(triu_indices_from(x[0], 2)); }},
      {"diag_indices_from", [](auto& x) { return diag_indices_from(x[0]); }},
      {"indices", [](auto&) { return one(indices({2, 3})); }},
      {"logspace", [](auto&) { return one(logspace(0.0, 2.0, 5)); }},
      {"logspace_base", [](auto&) { return one(logspace(1.0, 3.0, 4, false, 2.0)); }},
      {"geomspace", [](auto&) { return one(geomspace(1.0, 1000.0, 4)); }},
      {"geomspace_neg", [](auto&) { return one(geomspace(-2.0, -32.0, 5)); }},
      {"vander", [](auto& x) { return one(vander(x[0])); }},
      {"vander_inc", [](auto& x) { return one(vander(x[0], 3, true)); }},
      {"diagflat", [](auto& x) { return one(diagflat(x[0], 1)); }},
      {"bartlett", [](auto&) { return one(bartlett(7)); }},
      {"blackman", [](auto&) { return one(blackman(6)); }},
      {"hamming", [](auto&) { return one(hamming(5)); }},
      {"hanning", [](auto&) { return one(hanning(8)); }},
      // shapes
      {"array_split", [](auto& x) { return array_split(x[0], 3); }},
      {"array_split_axis", [](auto& x) { return array_split(x[0], 3, 1); }},
      {"hsplit", [](auto& x) { return hsplit(x[0], 2); }},
      {"vsplit", [](auto& x) { return vsplit(x[0], 3); }},
      {"unstack", [](auto& x) { return unstack(x[0], 1); }},
      {"broadcast_arrays", [](auto& x) { return broadcast_arrays({x[0], x[1]}); }},
      {"rollaxis", [](auto& x) { return one(rollaxis(x[0], 2, 0)); }},
      {"append", [](auto& x) { return one(append(x[0], x[1])); }},
      {"append_axis", [](auto& x) { return one(append(x[0], x[1], 0)); }},
      {"delete", [](auto& x) { return one(delete_(x[0], {0, -1, 2}, 1)); }},
      {"delete_flat", [](auto& x) { return one(delete_(x[0], {3})); }},
      {"resize", [](auto& x) { return one(resize(x[0], {3, 5})); }},
      {"select",
       [](auto& x) {
         const Array& a = x[0];
         return one(select({a < 0.0, a > 3.0}, {a * 2.0, a - 10.0}, Array(-1.0)));
       }},
      {"array_equal", [](auto& x) { return one(array_equal(x[0], x[0])); }},
      {"array_equal_nan", [](auto& x) { return one(array_equal(x[0], x[0], true)); }},
      {"array_equiv",
       [](auto& x) { return one(array_equiv(x[0], slice(x[0], {0, 0}, {1, 4}))); }},
      // polynomials and integration
      {"polyval", [](auto& x) { return one(polyval(x[0], x[1])); }},
      {"polyadd", [](auto& x) { return one(polyadd(x[0], x[1])); }},
      {"polysub", [](auto& x) { return one(polysub(x[0], x[1])); }},
      {"polymul", [](auto& x) { return one(polymul(x[0], x[1])); }},
      {"polyder", [](auto& x) { return one(polyder(x[0], 2)); }},
      {"polyint", [](auto& x) { return one(polyint(x[0], 2, {1.0, -2.0})); }},
      {"trapezoid", [](auto& x) { return one(trapezoid(x[0], std::nullopt, 0.5)); }},
      {"trapezoid_x", [](auto& x) { return one(trapezoid(x[0], x[1], 1.0, 0)); }},
      {"interp", [](auto& x) { return one(interp(x[0], x[1], x[2])); }},
      {"interp_lr", [](auto& x) { return one(interp(x[0], x[1], x[2], -7.0, 7.0)); }},
  };
  return *c;
}

TEST(NumpyTailVectors, EveryRecordedCaseHasACall) {
  for (const auto& [key, v] : vectors().all()) {
    const std::string name = key.substr(0, key.rfind('.'));
    EXPECT_TRUE(cases().count(name)) << "no C++ case for " << name;
  }
  EXPECT_GE(cases().size(), 90u);
}

TEST(NumpyTailVectors, ValuesMatchJax) { vectors().expect_outputs_match(cases(), tol); }

TEST(NumpyTailVectors, GradientsMatchJax) { EXPECT_GE(vectors().expect_gradients_match(cases(), tol), 30); }

TEST(NumpyTailVectors, JitMatchesEager) {
  for (const char* name : {"nanvar", "quantile_axis", "nanquantile", "cov_y", "searchsorted_left",
                           "bincount_w", "nonzero", "lexsort", "histogram_range", "polymul",
                           "interp", "select"}) {
    SCOPED_TRACE(name);
    const Fn& fn = cases().at(name);
    std::vector<Array> xs = inputs(name);
    std::vector<Array> eager = fn(xs);
    std::vector<Array> jitted = jit(fn)(xs);
    ASSERT_EQ(jitted.size(), eager.size());
    for (size_t k = 0; k < eager.size(); ++k) {
      expect_matches(jitted[k], std::string(name) + ".out" + std::to_string(k));
    }
  }
}

TEST(NumpyTailErrors, BadInputsThrowNamingTheOp) {
  auto expect_error = [](const std::function<void()>& f, const std::string& op) {
    try {
      f();
      ADD_FAILURE() << op << ": no error";
    } catch (const Error& e) {
      EXPECT_EQ(std::string(e.what()).rfind("[" + op + "]", 0), 0u) << e.what();
    }
  };
  Array v = arange(0.0, 6.0), m = reshape(v, {2, 3});
  expect_error([&] { quantile(v, Array(0.5), {}, "cubic"); }, "quantile");
  expect_error([&] { quantile(v, m); }, "quantile");
  expect_error([&] { quantile(m, Array(0.5), 2); }, "quantile");
  expect_error([&] { cov(reshape(v, {1, 2, 3})); }, "cov");
  expect_error([&] { searchsorted(m, v); }, "searchsorted");
  expect_error([&] { searchsorted(v, v, "middle"); }, "searchsorted");
  expect_error([&] { bincount(v, 3); }, "bincount");
  expect_error([&] { bincount(arange(3), 3, ones({4})); }, "bincount");
  expect_error([&] { nonzero(scalar(1, DType::kF32), 1); }, "nonzero");
  expect_error([&] { lexsort({}); }, "lexsort");
  expect_error([&] { lexsort({v, m}); }, "lexsort");
  expect_error([&] { diag_indices_from(zeros({2, 3})); }, "diag_indices_from");
  expect_error([&] { geomspace(0.0, 1.0, 3); }, "geomspace");
  expect_error([&] { vander(m); }, "vander");
  expect_error([&] { array_split(v, 0); }, "array_split");
  expect_error([&] { vsplit(v, 2); }, "vsplit");
  expect_error([&] { rollaxis(m, 0, 5); }, "rollaxis");
  expect_error([&] { delete_(v, {6}); }, "delete");
  expect_error([&] { select({v > 1.0}, {}); }, "select");
  expect_error([&] { polyder(m); }, "polyder");
  expect_error([&] { polyint(v, 2, {1.0, 2.0, 3.0}); }, "polyint");
  expect_error([&] { interp(v, v, arange(0.0, 5.0)); }, "interp");
  // Not errors in JAX: shapes that differ give false.
  EXPECT_FALSE(array_equal(v, m).item<bool>());
  EXPECT_FALSE(array_equiv(v, arange(0.0, 4.0)).item<bool>());
  EXPECT_EQ(broadcast_shapes({{2, 1}, {3}, {1, 1, 3}}), (Shape{1, 2, 3}));
}

}  // namespace
}  // namespace graft
