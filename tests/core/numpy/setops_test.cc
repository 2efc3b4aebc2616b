// jax.numpy set operations and index tricks (core/numpy/setops.h,
// core/numpy/index_tricks.h) against JAX.
//
// How the vectors were made: tests/core/testdata/jnp_setops_vectors.txt was written by
// tools/make_jnp_setops_vectors.py, run with JAX / jaxlib 0.10.2 on CPU (default flags, x64
// off): each case's inputs, JAX's outputs and, for the differentiable cases, jax.grad of
// sum(out0 * ct) with ct = 1 + 0.25 * arange(out0.size). Each case below repeats the JAX call
// of the same name. Checked: shapes and dtypes exactly, values (NaN matches NaN) and
// gradients to 1e-5, jit against eager for the size= forms, and the error cases.
#include <functional>
#include <map>
#include <string>
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
using Fn = jnp_vectors::CaseFn;

const jnp_vectors::VectorFile& vectors() {
  static const auto* f = new jnp_vectors::VectorFile("tests/core/testdata/jnp_setops_vectors.txt");
  return *f;
}
std::vector<Array> typed_inputs(const std::string& name) { return vectors().inputs(name); }
void expect_matches(const Array& got, const std::string& key) { vectors().expect_matches(got, key); }
double tol(const std::string&) { return 1e-5; }

std::vector<Array> one(const Array& a) { return {a}; }
std::vector<Array> two(const std::pair<Array, Array>& p) { return {p.first, p.second}; }
std::vector<Array> three(const Intersect1dResult& r) {
  return {r.values, r.ar1_indices, r.ar2_indices};
}
const UniqueOptions kAllReturns = {
    .return_index = true, .return_inverse = true, .return_counts = true};
Array triu_of(const Array& m, int64_t k) { return triu(m, k); }
Array tril_of(const Array& m, int64_t k) { return tril(m, k); }

// Each case: the graft call matching tools/make_jnp_setops_vectors.py's case of that name.
const std::map<std::string, Fn>& cases() {
  static const auto* c = new std::map<std::string, Fn>{
      // unique and friends
      {"unique", [](auto& x) { return one(unique(x[0])); }},
      {"unique_all_returns", [](auto& x) { return unique(x[0], kAllReturns); }},
      {"unique_int", [](auto& x) { return unique(x[0], kAllReturns); }},
      {"unique_size", [](auto& x) { return one(unique(x[0], 8)); }},
      {"unique_size_fill",
       [](auto& x) {
         UniqueOptions o = kAllReturns;
         o.size = 8, o.fill_value = -9;
         return unique(x[0], o);
       }},
      {"unique_size_cut", [](auto& x) { return unique(x[0], {.return_counts = true, .size = 2}); }},
      {"unique_axis0",
       [](auto& x) {
         UniqueOptions o = kAllReturns;
         o.axis = 0;
         return unique(x[0], o);
       }},
      {"unique_axis1", [](auto& x) { return unique(x[0], {.axis = 1}); }},
      {"unique_axis0_size",
       [](auto& x) { return unique(x[0], {.axis = 0, .size = 5, .fill_value = -1}); }},
      {"unique_nan_distinct", [](auto& x) { return unique(x[0], {.equal_nan = false}); }},
      {"unique_all",
       [](auto& x) {
         UniqueAllResult r = unique_all(x[0]);
         return std::vector<Array>{r.values, r.indices, r.inverse_indices, r.counts};
       }},
      {"unique_all_size",
       [](auto& x) {
         UniqueAllResult r = unique_all(x[0], 6, 0);
         return std::vector<Array>{r.values, r.indices, r.inverse_indices, r.counts};
       }},
      {"unique_counts",
       [](auto& x) {
         UniqueCountsResult r = unique_counts(x[0]);
         return std::vector<Array>{r.values, r.counts};
       }},
      {"unique_inverse",
       [](auto& x) {
         UniqueInverseResult r = unique_inverse(x[0]);
         return std::vector<Array>{r.values, r.inverse_indices};
       }},
      {"unique_values", [](auto& x) { return one(unique_values(x[0])); }},
      {"unique_values_size", [](auto& x) { return one(unique_values(x[0], 10)); }},
      // set operations
      {"intersect1d", [](auto& x) { return one(intersect1d(x[0], x[1])); }},
      {"intersect1d_indices", [](auto& x) { return three(intersect1d_with_indices(x[0], x[1])); }},
      {"intersect1d_unique",
       [](auto& x) { return three(intersect1d_with_indices(x[0], x[1], true)); }},
      {"intersect1d_size", [](auto& x) { return one(intersect1d(x[0], x[1], false, 4)); }},
      {"intersect1d_size_fill",
       [](auto& x) { return three(intersect1d_with_indices(x[0], x[1], false, 5, -1.0)); }},
      {"intersect1d_unique_size",
       [](auto& x) { return three(intersect1d_with_indices(x[0], x[1], true, 3)); }},
      {"intersect1d_int_float", [](auto& x) { return one(intersect1d(x[0], x[1])); }},
      {"union1d", [](auto& x) { return one(union1d(x[0], x[1])); }},
      {"union1d_size", [](auto& x) { return one(union1d(x[0], x[1], 10)); }},
      {"union1d_size_fill", [](auto& x) { return one(union1d(x[0], x[1], 10, -5.0)); }},
      {"setdiff1d", [](auto& x) { return one(setdiff1d(x[0], x[1])); }},
      {"setdiff1d_size", [](auto& x) { return one(setdiff1d(x[0], x[1], false, 4)); }},
      {"setdiff1d_size_fill", [](auto& x) { return one(setdiff1d(x[0], x[1], false, 3, -2.0)); }},
      {"setdiff1d_unique", [](auto& x) { return one(setdiff1d(x[0], x[1], true)); }},
      {"setdiff1d_unique_size", [](auto& x) { return one(setdiff1d(x[0], x[1], true, 4)); }},
      {"setxor1d", [](auto& x) { return one(setxor1d(x[0], x[1])); }},
      {"setxor1d_size", [](auto& x) { return one(setxor1d(x[0], x[1], false, 8)); }},
      {"setxor1d_size_fill", [](auto& x) { return one(setxor1d(x[0], x[1], false, 9, -1.0)); }},
      {"setxor1d_unique", [](auto& x) { return one(setxor1d(x[0], x[1], true)); }},
      {"setxor1d_unique_size", [](auto& x) { return one(setxor1d(x[0], x[1], true, 8)); }},
      // empty inputs
      {"unique_empty", [](auto& x) { return unique(x[0], kAllReturns); }},
      {"unique_empty_fill", [](auto& x) { return one(unique(x[0], 2, 3)); }},
      {"union1d_empty", [](auto& x) { return one(union1d(x[0], x[1])); }},
      {"setdiff1d_empty", [](auto& x) { return one(setdiff1d(x[0], x[1])); }},
      {"setdiff1d_empty_size", [](auto& x) { return one(setdiff1d(x[1], x[0], false, 2)); }},
      {"intersect1d_empty", [](auto& x) { return one(intersect1d(x[0], x[1])); }},
      {"intersect1d_empty_size", [](auto& x) { return one(intersect1d(x[0], x[1], false, 2)); }},
      {"setxor1d_empty_size", [](auto& x) { return one(setxor1d(x[0], x[1], false, 4)); }},
      {"setxor1d_both_empty", [](auto& x) { return one(setxor1d(x[0], x[0], false, 2)); }},
      // partition
      {"partition_one", [](auto& x) { return one(partition(x[0], 0)); }},
      {"partition", [](auto& x) { return one(partition(x[0], 2)); }},
      {"partition_axis0", [](auto& x) { return one(partition(x[0], 0, 0)); }},
      {"partition_neg_kth", [](auto& x) { return one(partition(x[0], -2)); }},
      {"partition_nan", [](auto& x) { return one(partition(x[0], 2)); }},
      {"argpartition", [](auto& x) { return one(argpartition(x[0], 3)); }},
      {"argpartition_nan", [](auto& x) { return one(argpartition(x[0], 2)); }},
      {"argpartition_ties", [](auto& x) { return one(argpartition(x[0], 2)); }},
      {"argpartition_axis0", [](auto& x) { return one(argpartition(x[0], 1, 0)); }},
      // index arithmetic
      {"ravel_multi_index",
       [](auto& x) {
         return one(ravel_multi_index({x[0], x[1]}, {7, 6}));
       }},
      {"ravel_multi_index_f",
       [](auto& x) {
         return one(ravel_multi_index({x[0], x[1]}, {7, 6}, "raise", "F"));
       }},
      {"ravel_multi_index_wrap",
       [](auto& x) {
         return one(ravel_multi_index({x[0], x[1]}, {4, 5}, "wrap"));
       }},
      {"ravel_multi_index_clip",
       [](auto& x) {
         return one(ravel_multi_index({x[0], x[1]}, {4, 5}, "clip"));
       }},
      {"unravel_index",
       [](auto& x) {
         return unravel_index(x[0], {4, 6});
       }},
      {"unravel_index_scalar", [](auto& x) { return unravel_index(x[0], {2, 3}); }},
      {"unravel_index_3d",
       [](auto& x) {
         return unravel_index(x[0], {2, 3, 4});
       }},
      {"ix_",
       [](auto& x) {
         return ix_({x[0], x[1]});
       }},
      {"mask_indices", [](auto&) { return two(mask_indices(3, triu_of)); }},
      {"mask_indices_k", [](auto&) { return two(mask_indices(4, tril_of, -1, 7)); }},
      // selection
      {"choose",
       [](auto& x) {
         return one(choose(x[0], {x[1], x[2], x[3]}));
       }},
      {"choose_wrap",
       [](auto& x) {
         return one(choose(x[0], {x[1], x[2], x[3]}, "wrap"));
       }},
      {"choose_clip",
       [](auto& x) {
         return one(choose(x[0], {x[1], x[2], x[3]}, "clip"));
       }},
      {"compress", [](auto& x) { return one(compress(x[0], x[1], 1)); }},
      {"compress_flat", [](auto& x) { return one(compress(x[0], x[1])); }},
      {"compress_size", [](auto& x) { return one(compress(x[0], x[1], 0, 3, -1.0)); }},
      {"compress_short_cond", [](auto& x) { return one(compress(x[0], x[1], 1)); }},
      {"extract", [](auto& x) { return one(extract(x[0], x[1])); }},
      {"extract_size", [](auto& x) { return one(extract(x[0], x[1], 8, 9.0)); }},
      {"insert_scalar", [](auto& x) { return one(insert(x[0], Array(2), x[1])); }},
      {"insert_scalar_axis", [](auto& x) { return one(insert(x[0], Array(1), x[1], 1)); }},
      {"insert_array",
       [](auto& x) {
         return one(insert(x[0], array<int32_t>({0, 2, 2, -1}), slice(x[1], {0}, {1}), 0));
       }},
      {"insert_many",
       [](auto& x) {
         return one(insert(x[0], array<int32_t>({3, 0, 9}), x[1]));
       }},
      {"insert_slice",
       [](auto& x) {
         return one(insert(x[0], Range{0, 4, 2}, slice(x[1], {0}, {2}), 1));
       }},
      {"insert_row",
       [](auto& x) {
         return one(insert(x[0], array<int32_t>({1}), reshape(x[1], {1, 3}), 0));
       }},
      {"trim_zeros", [](auto& x) { return one(trim_zeros(x[0])); }},
      {"trim_zeros_f", [](auto& x) { return one(trim_zeros(x[0], "f")); }},
      {"trim_zeros_b", [](auto& x) { return one(trim_zeros(x[0], "b")); }},
      {"trim_zeros_2d", [](auto& x) { return one(trim_zeros(x[0])); }},
      {"trim_zeros_axis", [](auto& x) { return one(trim_zeros(x[0], "fb", Axes{1})); }},
      {"fill_diagonal", [](auto& x) { return one(fill_diagonal(x[0], x[1])); }},
      {"fill_diagonal_scalar", [](auto& x) { return one(fill_diagonal(x[0], Array(-1.0))); }},
      {"fill_diagonal_3d", [](auto& x) { return one(fill_diagonal(x[0], x[1])); }},
  };
  return *c;
}

TEST(NumpySetopsVectors, EveryRecordedCaseHasACall) {
  int recorded = 0;
  for (const auto& [key, v] : vectors().all()) {
    ++recorded;
    const std::string name = key.substr(0, key.rfind('.'));
    EXPECT_TRUE(cases().count(name)) << "no C++ case for " << name;
  }
  EXPECT_GT(recorded, 200);
  EXPECT_GE(cases().size(), 87u);
}

TEST(NumpySetopsVectors, ValuesMatchJax) { vectors().expect_outputs_match(cases(), tol); }

TEST(NumpySetopsVectors, GradientsMatchJax) {
  EXPECT_GE(vectors().expect_gradients_match(cases(), tol), 18);
}

// The size= forms (and the value-independent ops) trace: jit gives JAX's values.
TEST(NumpySetopsVectors, SizedFormsJitMatchJax) {
  for (const char* name : {"unique_size",
                           "unique_size_fill",
                           "unique_size_cut",
                           "unique_axis0_size",
                           "unique_all_size",
                           "unique_values_size",
                           "intersect1d_size",
                           "intersect1d_size_fill",
                           "intersect1d_unique_size",
                           "union1d_size",
                           "union1d_size_fill",
                           "setdiff1d_size",
                           "setdiff1d_size_fill",
                           "setdiff1d_unique_size",
                           "setxor1d_size",
                           "setxor1d_size_fill",
                           "setxor1d_unique_size",
                           "partition",
                           "argpartition_ties",
                           "ravel_multi_index_wrap",
                           "ravel_multi_index_clip",
                           "unravel_index",
                           "ix_",
                           "choose_wrap",
                           "choose_clip",
                           "compress_size",
                           "extract_size",
                           "insert_array",
                           "insert_slice",
                           "fill_diagonal_3d"}) {
    SCOPED_TRACE(name);
    const Fn& fn = cases().at(name);
    std::vector<Array> jitted;
    ASSERT_NO_THROW(jitted = jit(fn)(typed_inputs(name)));
    for (size_t k = 0; k < jitted.size(); ++k) {
      expect_matches(jitted[k], std::string(name) + ".out" + std::to_string(k));
    }
  }
}

// The size= forms vmap: each row of the batch as the per-row (eager) call gives it.
TEST(NumpySetopsVectors, SizedFormsVmapLikeALoop) {
  const Array rows = array<int32_t>({3, 1, 3, 0, 7, 7, 7, 7, 2, 5, 2, 1}, Shape{3, 4});
  const Array other = array<int32_t>({1, 2, 9});
  const std::map<std::string, Fn> fns = {
      {"unique", [](auto& x) { return unique(x[0], kAllReturns); }},
      {"unique_size",
       [](auto& x) {
         UniqueOptions o = kAllReturns;
         o.size = 3, o.fill_value = -1;
         return unique(x[0], o);
       }},
      {"intersect1d",
       [&](auto& x) { return three(intersect1d_with_indices(x[0], other, false, 2)); }},
      {"setdiff1d", [&](auto& x) { return one(setdiff1d(x[0], other, false, 3, -5.0)); }},
      {"setxor1d", [&](auto& x) { return one(setxor1d(x[0], other, false, 4)); }},
      {"compress", [](auto& x) { return one(compress(x[0] > Array(2), x[0], 0, 2)); }},
      {"choose",
       [&](auto& x) {
         return one(choose(x[0], {x[0] * Array(2), x[0] + Array(1)}, "wrap"));
       }},
      {"partition", [](auto& x) { return one(partition(x[0], 1)); }},
  };
  for (const auto& [name, fn] : fns) {
    if (name == "unique") continue;  // no size: only the loop below may run it
    SCOPED_TRACE(name);
    std::vector<Array> got;
    ASSERT_NO_THROW(
        got = vmap([&](const std::vector<Array>& x) { return fn(x); })(std::vector<Array>{rows}));
    for (size_t o = 0; o < got.size(); ++o) {
      std::vector<Array> per;
      for (int64_t r = 0; r < 3; ++r) {
        per.push_back(fn(std::vector<Array>{reshape(slice(rows, {r, 0}, {r + 1, 4}), {4})})[o]);
      }
      Array want = stack(per, 0);
      ASSERT_EQ(got[o].shape(), want.shape());
      EXPECT_EQ(astype(got[o], DType::kF32).to_vector<float>(),
                astype(want, DType::kF32).to_vector<float>());
    }
  }
  // Without size= the count needs the values: vmap's tracers are an error naming the op.
  expect_error(
      [&] {
        vmap([&](const std::vector<Array>& x) { return fns.at("unique")(x); })(
            std::vector<Array>{rows});
      },
      "[unique]");
}

// Without size= the result's shape needs the values: under jit that is an error naming the
// op (JAX's ConcretizationTypeError), as are the value checks of mode "raise".
TEST(NumpySetopsErrors, ValueDependentFormsNeedConcreteValues) {
  const Array v = array<float>({1, 2, 2, 3});
  const Array idx = array<int32_t>({0, 1});
  auto traced = [](const std::function<Array(const Array&)>& f, const Array& x) {
    return jit([f](const std::vector<Array>& a) { return std::vector<Array>{f(a[0])}; })(
        std::vector<Array>{x});
  };
  expect_error([&] { traced([](const Array& a) { return unique(a); }, v); }, "[unique]");
  expect_error([&] { traced([](const Array& a) { return union1d(a, a); }, v); }, "[union1d]");
  expect_error([&] { traced([](const Array& a) { return setdiff1d(a, a); }, v); }, "[setdiff1d]");
  expect_error([&] { traced([](const Array& a) { return setxor1d(a, a); }, v); }, "[setxor1d]");
  expect_error([&] { traced([](const Array& a) { return intersect1d(a, a); }, v); },
               "[intersect1d]");
  expect_error([&] { traced([&](const Array& c) { return compress(c, v); }, idx); }, "[compress]");
  expect_error([&] { traced([](const Array& a) { return trim_zeros(a); }, v); }, "[trim_zeros]");
  expect_error([&] { traced([&](const Array& a) { return choose(a, {v, v}); }, idx); }, "[choose]");
  expect_error(
      [&] {
        traced([](const Array& a) { return ravel_multi_index({a, a}, {2, 2}); }, idx);
      },
      "[ravel_multi_index]");
}

TEST(NumpySetopsErrors, BadInputsThrowNamingTheOp) {
  const Array v = array<float>({1, 0, 2, 0});
  const Array m = reshape(arange(0.0, 6.0), {2, 3});
  const Array i = array<int32_t>({0, 3, 1});
  expect_error([&] { unique(v, -1); }, "[unique]");
  expect_error([&] { unique(m, {.axis = 2}); }, "[unique]");
  expect_error([&] { unique(zeros({0}), 3); }, "[unique]");  // needs fill_value
  expect_error([&] { setdiff1d(v, v, false, -2); }, "[setdiff1d]");
  expect_error([&] { partition(v, 4); }, "[partition]");
  expect_error([&] { argpartition(m, 0, 2); }, "[argpartition]");
  expect_error([&] { partition(scalar(1, DType::kF32), 0); }, "[partition]");
  expect_error([&] { ravel_multi_index({i}, {2, 2}); }, "[ravel_multi_index]");
  expect_error([&] { ravel_multi_index({i, i}, {3, 3}); }, "[ravel_multi_index]");  // raise
  expect_error([&] { ravel_multi_index({v, v}, {4, 4}, "clip"); }, "[ravel_multi_index]");
  expect_error([&] { ravel_multi_index({i, i}, {4, 4}, "bad"); }, "[ravel_multi_index]");
  expect_error([&] { ravel_multi_index({i, i}, {4, 4}, "clip", "K"); }, "[ravel_multi_index]");
  expect_error([&] { ravel_multi_index({i}, {300}, "clip", "C", DType::kU8); },
               "[ravel_multi_index]");
  expect_error([&] { unravel_index(v, {2, 2}); }, "[unravel_index]");
  expect_error([&] { ix_({m}); }, "[ix_]");
  expect_error([&] { ix_({v > 0.0}); }, "[ix_]");
  expect_error([&] { mask_indices(3, [](const Array& a, int64_t) { return ravel(a); }); },
               "[mask_indices]");
  expect_error([&] { choose(v, {v}); }, "[choose]");
  expect_error([&] { choose(i, {v, v}); }, "[choose]");  // 3 is out of range: raise
  expect_error([&] { choose(i, {}, "wrap"); }, "[choose]");
  expect_error([&] { choose(i, {v, v}, "fill"); }, "[choose]");
  expect_error([&] { compress(m, v); }, "[compress]");
  expect_error(
      [&] {
        compress(astype(array<int32_t>({1, 0, 0, 0, 1}), DType::kBool), v);
      },
      "[compress]");
  expect_error([&] { compress(v, v, std::nullopt, 5); }, "[compress]");
  expect_error([&] { compress(v, m, 2); }, "[compress]");
  expect_error([&] { insert(v, m, v); }, "[insert]");
  expect_error([&] { insert(v, v, v); }, "[insert]");
  expect_error([&] { insert(v, array<int32_t>({0, 1}), array<float>({1, 2, 3})); }, "[insert]");
  expect_error([&] { insert(m, Array(1), array<float>({1, 2, 3}), 1); }, "[insert]");
  expect_error([&] { insert(v, Range{0, 2, 0}, Array(1.0)); }, "[insert]");
  expect_error([&] { trim_zeros(m, "fb", Axes{2}); }, "[trim_zeros]");
  expect_error([&] { fill_diagonal(v, Array(1.0)); }, "[fill_diagonal]");
  expect_error([&] { fill_diagonal(zeros({2, 2, 3}), Array(1.0)); }, "[fill_diagonal]");
  expect_error([&] { fill_diagonal(m, Array(1.0), true); }, "[fill_diagonal]");
  expect_error([&] { fill_diagonal(m, zeros({0})); }, "[fill_diagonal]");
  // Not errors: an all-zero filt trims to nothing; mode "raise" passes in-range indices.
  EXPECT_EQ(trim_zeros(zeros({3})).shape(), (Shape{0}));
  EXPECT_EQ(ravel_multi_index({i, i}, {4, 4}).to_vector<int32_t>(),
            (std::vector<int32_t>{0, 15, 5}));
}

}  // namespace
}  // namespace graft
