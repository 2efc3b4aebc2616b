// Convolution and windowed reductions (core/lax/convolution.h) against JAX.
//
// How the vectors were made: tools/make_conv_vectors.py ran JAX 0.10.2 on CPU (x64 off) on
// seeded float32 standard-normal inputs and wrote tests/core/testdata/conv_vectors.txt:
// inputs, JAX's output (lax.conv_general_dilated, jnp.convolve / correlate,
// lax.reduce_window) and, where marked, jax.grad of sum(out * ct) for a stored cotangent ct.
// Compared with f32 tolerances (1e-5 absolute + 1e-5 relative); shapes and dtypes exactly.
// Also: jit equals eager, vmap of the composite ops, and misuse throws graft::Error naming
// the op. (The primitive's finite-difference, vmap and jit checks are in the op-spec table,
// tests/core/primitives/specs/conv_specs.cc.)
#include <functional>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "core/ops.h"
#include "gtest/gtest.h"
#include "tests/core/numpy/jnp_array_vectors.h"
#include "transforms/autodiff.h"
#include "transforms/jit.h"
#include "transforms/vmap.h"

namespace graft {
namespace {

using namespace jnp_vectors;
using Fn = std::function<Array(const std::vector<Array>&)>;
using Pads = std::vector<std::pair<int64_t, int64_t>>;
constexpr double kInf = std::numeric_limits<double>::infinity();

// round(x) in value, the identity in gradient (the tool's tied()): windows meet ties.
Array tied(const Array& x) { return round(x) + (x - stop_gradient(x)); }

// The cases of tools/make_conv_vectors.py, by name.
const std::map<std::string, Fn>& cases() {
  static const auto* c = new std::map<std::string, Fn>{
      {"c2d_nchw_pad",
       [](auto& x) { return conv_general_dilated(x[0], x[1], {1, 1}, Pads{{1, 1}, {1, 1}}); }},
      {"c2d_nhwc_same_s2",
       [](auto& x) {
         return conv_general_dilated(x[0], x[1], {2, 2}, "SAME", {}, {}, {"NHWC", "HWIO", "NHWC"});
       }},
      {"c2d_same_lower",
       [](auto& x) { return conv_general_dilated(x[0], x[1], {2, 1}, "SAME_LOWER"); }},
      {"c2d_valid", [](auto& x) { return conv(x[0], x[1], {1, 1}, "VALID"); }},
      {"c1d_rhs_dil",
       [](auto& x) { return conv_general_dilated(x[0], x[1], {1}, Pads{{2, 1}}, {}, {2}); }},
      {"c1d_lhs_dil",
       [](auto& x) { return conv_general_dilated(x[0], x[1], {2}, Pads{{1, 2}}, {2}); }},
      {"c3d",
       [](auto& x) {
         return conv_general_dilated(x[0], x[1], {1, 2, 1}, Pads{{0, 1}, {1, 1}, {0, 0}});
       }},
      {"c2d_fgroups",
       [](auto& x) { return conv_general_dilated(x[0], x[1], {1, 1}, "VALID", {}, {}, {}, 2); }},
      {"c2d_bgroups",
       [](auto& x) {
         return conv_general_dilated(x[0], x[1], {1, 1}, "VALID", {}, {}, {}, 1, 2);
       }},
      {"c2d_dn_numbers",
       [](auto& x) {
         return conv_general_dilated(
             x[0], x[1], {1, 1}, Pads{{0, 1}, {1, 0}}, {}, {},
             ConvDimensionNumbers{{3, 1, 0, 2}, {1, 3, 2, 0}, {2, 0, 3, 1}});
       }},
      {"convolve_full", [](auto& x) { return convolve(x[0], x[1]); }},
      {"convolve_same", [](auto& x) { return convolve(x[0], x[1], "same"); }},
      {"convolve_valid_swapped", [](auto& x) { return convolve(x[0], x[1], "valid"); }},
      {"correlate_valid", [](auto& x) { return correlate(x[0], x[1]); }},
      {"correlate_full", [](auto& x) { return correlate(x[0], x[1], "full"); }},
      {"correlate_same_swapped", [](auto& x) { return correlate(x[0], x[1], "same"); }},
      {"rw_max_pool", [](auto& x) { return reduce_window_max(x[0], {1, 2, 2, 1}, {1, 2, 2, 1}); }},
      {"rw_sum_same",
       [](auto& x) { return reduce_window_sum(x[0], {1, 3, 3, 1}, {1, 1, 1, 1}, "SAME"); }},
      {"rw_max_dilated",
       [](auto& x) {
         return reduce_window_max(x[0], {2, 3}, {1, 2}, Pads{{1, 0}, {0, 1}}, {1, 2}, {2, 1});
       }},
      {"rw_min_strided", [](auto& x) { return reduce_window_min(x[0], {3, 2}, {2, 1}); }},
      {"rw_sum_1d_pad", [](auto& x) { return reduce_window_sum(x[0], {3}, {2}, Pads{{2, 1}}); }},
      {"rw_prod",
       [](auto& x) { return reduce_window(x[0], scalar(1, DType::kF32), multiply, {2, 2}); }},
      {"rw_max_ties_1d",
       [](auto& x) { return reduce_window_max(tied(x[0]), {3}, {2}, Pads{{1, 1}}); }},
      {"rw_max_ties_2d",
       [](auto& x) { return reduce_window_max(tied(x[0]), {2, 3}, {1, 2}, Pads{{1, 0}, {1, 1}}); }},
      {"rw_min_ties_2d", [](auto& x) { return reduce_window_min(tied(x[0]), {2, 2}); }},
      {"max_pool_ties",
       [](auto& x) {
         return reduce_window(tied(x[0]), scalar(-kInf, DType::kF32), maximum, {1, 2, 2, 1},
                              {1, 1, 1, 1}, "SAME");
       }},
  };
  return *c;
}

TEST(ConvTest, ValuesAndGradientsMatchJax) {
  const int with_grads = expect_cases_match(cases());
  EXPECT_EQ(cases().size(), 26u);
  EXPECT_GE(with_grads, 23);
}

TEST(ConvTest, JitEqualsEager) {
  for (const char* name : {"c2d_nhwc_same_s2", "c2d_bgroups", "correlate_same_swapped",
                           "rw_max_dilated", "rw_sum_same"}) {
    SCOPED_TRACE(name);
    const Fn& fn = cases().at(name);
    std::vector<Array> xs = inputs(name);
    auto jitted = jit([&](const std::vector<Array>& a) { return fn(a); });
    EXPECT_EQ(jitted(xs).to_vector<float>(), fn(xs).to_vector<float>());
  }
}

TEST(ConvTest, VmapOfPoolingMatchesALoop) {
  const Array x = inputs("rw_max_pool")[0];  // [2, 4, 4, 3]
  auto pool = [](const Array& im) { return reduce_window_max(im, {2, 2, 1}, {2, 2, 1}); };
  Array batched = vmap(pool)(x);
  for (int64_t b = 0; b < 2; ++b) {
    EXPECT_EQ(take(batched, scalar(b, DType::kI32), 0).to_vector<float>(),
              pool(take(x, scalar(b, DType::kI32), 0)).to_vector<float>());
  }
}

void expect_error(const std::function<void()>& f, const std::string& prefix) {
  try {
    f();
    ADD_FAILURE() << "expected an error starting " << prefix;
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).rfind(prefix, 0), 0u) << e.what();
  }
}

TEST(ConvTest, MisuseIsAnError) {
  const Array x = ones({2, 3, 5, 5}), w = ones({4, 3, 3, 3});
  const std::string op = "[conv_general_dilated]";
  // Feature dims that do not match (and do not split into the groups).
  expect_error([&] { conv(x, ones({4, 2, 3, 3}), {1, 1}, "VALID"); }, op);
  expect_error([&] { conv_general_dilated(x, w, {1, 1}, "VALID", {}, {}, {}, 2); }, op);
  expect_error([&] { conv_general_dilated(x, w, {1, 1}, "VALID", {}, {}, {}, 1, 3); }, op);
  // Bad dimension numbers.
  expect_error([&] { conv_general_dilated(x, w, {1, 1}, "VALID", {}, {}, {"NHW", "OIHW", "NCHW"}); },
               op);
  expect_error([&] { conv_general_dilated(x, w, {1, 1}, "VALID", {}, {}, {"NCHW", "OIHW", "NCWH2"}); },
               op);
  expect_error([&] { conv_general_dilated(x, w, {1, 1}, "VALID", {}, {}, {"NCHW", "OIHX", "NCHW"}); },
               op);
  expect_error(
      [&] {
        conv_general_dilated(x, w, {1, 1}, "VALID", {}, {},
                             ConvDimensionNumbers{{0, 1, 2, 2}, {0, 1, 2, 3}, {0, 1, 2, 3}});
      },
      op);
  // Bad padding, strides, dilations, ranks, dtypes.
  expect_error([&] { conv(x, w, {1, 1}, "FULL"); }, op);
  expect_error([&] { conv(x, w, {1, 1}, Pads{{1, 1}}); }, op);
  expect_error([&] { conv(x, w, {1, 1}, Pads{{-6, 0}, {0, 0}}); }, op);  // crops past the input
  expect_error([&] { conv(x, w, {0, 1}, "VALID"); }, op);
  expect_error([&] { conv(x, w, {1}, "VALID"); }, op);
  expect_error([&] { conv_general_dilated(x, w, {1, 1}, "VALID", {1, 1}, {0, 1}); }, op);
  expect_error([&] { conv(ones({2, 3, 5}), w, {1, 1}, "VALID"); }, op);
  expect_error([&] { conv(ones({2, 3, 5, 5}, DType::kI32), ones({4, 3, 3, 3}, DType::kI32), {1, 1},
                          "VALID"); },
               op);
  // jnp.convolve / correlate and reduce_window.
  expect_error([&] { convolve(ones({2, 2}), ones({2})); }, "[convolve]");
  expect_error([&] { convolve(ones({3}), ones({0})); }, "[convolve]");
  expect_error([&] { correlate(ones({3}), ones({2}), "wide"); }, "[correlate]");
  expect_error([&] { reduce_window_max(ones({4, 4}), {2}); }, "[reduce_window]");
  expect_error([&] { reduce_window_sum(ones({4, 4}), {2, 0}); }, "[reduce_window]");
  expect_error([&] { reduce_window_sum(ones({4, 4}), {2, 2}, {1, 1}, "SOME"); }, "[reduce_window]");
  expect_error([&] { reduce_window(ones({4}), ones({2}), add, {2}); }, "[reduce_window]");
}

TEST(ConvTest, DimensionNumbersFromStrings) {
  // JAX: conv_dimension_numbers((1,2,3,4), (1,2,3,4), ("NHWC", "HWIO", "NHWC")) ->
  // lhs (0, 3, 1, 2), rhs (3, 2, 0, 1), out (0, 3, 1, 2); spatial order follows the kernel.
  ConvDimensionNumbers d = conv_dimension_numbers(4, 4, {"NHWC", "HWIO", "NHWC"});
  EXPECT_EQ(d.lhs_spec, (std::vector<int64_t>{0, 3, 1, 2}));
  EXPECT_EQ(d.rhs_spec, (std::vector<int64_t>{3, 2, 0, 1}));
  EXPECT_EQ(d.out_spec, (std::vector<int64_t>{0, 3, 1, 2}));
  ConvDimensionNumbers e = conv_dimension_numbers(4, 4, {"NCHW", "OIWH", "NWHC"});
  EXPECT_EQ(e.lhs_spec, (std::vector<int64_t>{0, 1, 3, 2}));
  EXPECT_EQ(e.rhs_spec, (std::vector<int64_t>{0, 1, 2, 3}));
  EXPECT_EQ(e.out_spec, (std::vector<int64_t>{0, 3, 1, 2}));
}

}  // namespace
}  // namespace graft
