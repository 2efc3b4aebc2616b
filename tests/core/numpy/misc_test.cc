// Later jnp functions against JAX: pad (core/numpy/pad.h), take's modes, repeat by array, the
// one-argument where, block, histogram2d / histogramdd, polydiv, polyfit, frombuffer (in
// core/numpy/{index_tricks,shapes,searching,lax_numpy,polynomial,array_creation}.h), save /
// load (core/numpy/npy_io.h) and transforms/numpy_functional.h.
//
// How the vectors were made: tests/core/testdata/jnp_misc_vectors.txt was written by
// tools/make_jnp_misc_vectors.py, run with JAX / jaxlib 0.10.2 on CPU (default flags, x64
// off): each case's inputs, JAX's outputs and, for the differentiable cases, jax.grad of
// sum(out0 * ct) with ct = 1 + 0.25 * arange(out0.size). Each case below repeats the JAX call
// of the same name. Checked: shapes and dtypes exactly, values (NaN matches NaN) and
// gradients to 1e-5 absolute + 2e-5 relative (polyfit 1e-3: an SVD least-squares solve),
// jit against eager, vmap against a loop, and the error cases.
//
// .npy files: the same tool wrote tests/core/testdata/npy/*.npy with numpy.save (bf16 through
// ml_dtypes, which numpy stores as '<V2'); jnp.load's test reads them back against their
// values (npy_<name>.out0). That numpy reads graft's files is checked two ways: graft's bytes
// for each C-order file equal numpy's byte for byte (NpyFiles.BytesEqualNumpys), and this test
// writes its files to $TEST_UNDECLARED_OUTPUTS_DIR/npy, which
//   ~/.cache/graft-peers/venv/bin/python tools/make_jnp_misc_vectors.py --check \
//       bazel-testlogs/tests/core/numpy/misc_test/test.outputs/npy     (after unzipping
//   outputs.zip there) np.load-ed: all 10 files equal numpy's arrays (dtype, shape, values).
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <sys/stat.h>
#include <vector>

#include "core/error.h"
#include "core/numpy/npy_io.h"
#include "core/ops.h"
#include "gtest/gtest.h"
#include "tests/core/numpy/jnp_array_vectors.h"
#include "transforms/autodiff.h"
#include "transforms/jit.h"
#include "transforms/numpy_functional.h"
#include "transforms/vmap.h"

namespace graft {
namespace {

using Fn = jnp_vectors::CaseFn;

std::string runfile(const std::string& path) {
  if (std::ifstream(path)) return path;
  const char* srcdir = std::getenv("TEST_SRCDIR");
  return srcdir ? std::string(srcdir) + "/graft/" + path : path;
}

const jnp_vectors::VectorFile& vectors() {
  static const auto* f = new jnp_vectors::VectorFile("tests/core/testdata/jnp_misc_vectors.txt");
  return *f;
}
std::vector<Array> inputs(const std::string& name) { return vectors().inputs(name); }
void expect_matches(const Array& got, const std::string& key, double tol = 1e-5) {
  vectors().expect_matches(got, key, tol);
}

double tol_for(const std::string& name) { return name.rfind("polyfit", 0) == 0 ? 1e-3 : 1e-5; }

std::vector<Array> one(const Array& a) { return {a}; }
template <typename P>
std::vector<Array> two(const P& p) {
  return {p.first, p.second};
}
Array ints(std::vector<int32_t> v, std::optional<Shape> s = std::nullopt) { return array(v, s); }
PadOptions with(PadMode m, const std::function<void(PadOptions&)>& set) {
  PadOptions o(m);
  set(o);
  return o;
}
std::function<Array(const Array&)> fn1(std::function<Array(const Array&)> f) { return f; }

// Each case: the graft call matching tools/make_jnp_misc_vectors.py's case of that name.
const std::map<std::string, Fn>& cases() {
  using W = std::vector<std::pair<int64_t, int64_t>>;
  static const auto* c = new std::map<std::string, Fn>{
      // pad modes
      {"pad_constant", [](auto& x) {
         return one(pad(x[0], W{{1, 0}, {2, 1}},
                        with(PadMode::kConstant, [](auto& o) { o.constant_values = {{1.5, 1.5}}; })));
       }},
      {"pad_constant_pairs", [](auto& x) {
         return one(pad(x[0], W{{1, 2}, {2, 1}}, with(PadMode::kConstant, [](auto& o) {
                          o.constant_values = {{-1.0, 2.0}, {3.5, -4.0}};
                        })));
       }},
      {"pad_constant_int", [](auto& x) {
         return one(pad(x[0], W{{1, 1}}, with(PadMode::kConstant, [](auto& o) {
                          o.constant_values = {{2.7, -1.2}};
                        })));
       }},
      {"pad_edge", [](auto& x) { return one(pad(x[0], W{{1, 2}, {2, 1}}, PadMode::kEdge)); }},
      {"pad_wrap", [](auto& x) { return one(pad(x[0], W{{5, 1}, {2, 6}}, PadMode::kWrap)); }},
      {"pad_reflect", [](auto& x) { return one(pad(x[0], W{{2, 4}, {3, 1}}, PadMode::kReflect)); }},
      {"pad_reflect_odd", [](auto& x) {
         return one(pad(x[0], W{{2, 4}, {3, 1}},
                        with(PadMode::kReflect, [](auto& o) { o.reflect_odd = true; })));
       }},
      {"pad_reflect_size1",
       [](auto& x) { return one(pad(x[0], W{{2, 1}, {1, 1}}, PadMode::kReflect)); }},
      {"pad_symmetric",
       [](auto& x) { return one(pad(x[0], W{{4, 1}, {2, 5}}, PadMode::kSymmetric)); }},
      {"pad_symmetric_odd", [](auto& x) {
         return one(pad(x[0], W{{4, 1}, {2, 5}},
                        with(PadMode::kSymmetric, [](auto& o) { o.reflect_odd = true; })));
       }},
      {"pad_linear_ramp", [](auto& x) {
         return one(pad(x[0], W{{2, 1}, {1, 3}}, with(PadMode::kLinearRamp, [](auto& o) {
                          o.end_values = {{1.0, -2.0}, {0.5, 3.0}};
                        })));
       }},
      {"pad_linear_ramp_int", [](auto& x) {
         return one(pad(x[0], W{{3, 2}},
                        with(PadMode::kLinearRamp, [](auto& o) { o.end_values = {{10, -4}}; })));
       }},
      {"pad_maximum", [](auto& x) { return one(pad(x[0], W{{1, 2}, {2, 1}}, PadMode::kMaximum)); }},
      {"pad_minimum_len", [](auto& x) {
         return one(pad(x[0], W{{1, 2}, {2, 1}}, with(PadMode::kMinimum, [](auto& o) {
                          o.stat_length = W{{2, 1}, {1, 3}};
                        })));
       }},
      {"pad_mean_len", [](auto& x) {
         return one(pad(x[0], W{{2, 2}},
                        with(PadMode::kMean, [](auto& o) { o.stat_length = W{{2, 2}}; })));
       }},
      {"pad_median", [](auto& x) { return one(pad(x[0], W{{1, 1}, {2, 0}}, PadMode::kMedian)); }},
      {"pad_mean_int", [](auto& x) { return one(pad(x[0], W{{1, 0}, {2, 2}}, PadMode::kMean)); }},
      {"pad_empty", [](auto& x) { return one(pad(x[0], W{{1, 0}, {0, 2}}, PadMode::kEmpty)); }},
      // take
      {"take_wrap",
       [](auto& x) { return one(take(x[0], ints({5, -7, 0, 3}, Shape{2, 2}), 1, TakeMode::kWrap)); }},
      {"take_clip_flat",
       [](auto& x) { return one(take(x[0], ints({-3, 2, 10}), std::nullopt, TakeMode::kClip)); }},
      {"take_fill_value",
       [](auto& x) { return one(take(x[0], ints({-5, 1, 3, -1}), 0, TakeMode::kFill, -9.0)); }},
      {"take_flat_fill", [](auto& x) {
         return one(take(x[0], ints({0, 11, 12, -1, -13}), std::nullopt, TakeMode::kFill));
       }},
      {"take_int_fill",
       [](auto& x) { return one(take(x[0], ints({-7, 2, 6}), std::nullopt, TakeMode::kFill)); }},
      // repeat
      {"repeat_array", [](auto& x) { return one(repeat(x[0], ints({2, 0, 1}), 0)); }},
      {"repeat_total_long", [](auto& x) { return one(repeat(x[0], ints({1, 2, 0, 3}), 1, 8)); }},
      {"repeat_total_cut",
       [](auto& x) { return one(repeat(x[0], ints({1, 2, 0, 3, 1, 1, 2}), std::nullopt, 5)); }},
      {"repeat_flat", [](auto& x) { return one(repeat(x[0], ints({1, 0, 2, 1, 3, 1}), std::nullopt)); }},
      {"repeat_one", [](auto& x) { return one(repeat(x[0], ints({2}), 1, 8)); }},
      {"where_one", [](auto& x) { return where(x[0], NonzeroSize{.size = 5, .fill_value = -1}); }},
      // block
      {"block_2x2", [](auto& x) { return one(block({{x[0], x[1]}, {x[2], x[3]}})); }},
      {"block_1d", [](auto& x) { return one(block({x[0], x[1]})); }},
      {"block_promote", [](auto& x) { return one(block({{x[0], x[1]}, {x[2]}})); }},
      // histograms
      {"histogram2d", [](auto& x) {
         auto [h, ex, ey] = histogram2d(x[0], x[1], {int64_t{3}});
         return std::vector<Array>{h, ex, ey};
       }},
      {"histogram2d_edges", [](auto& x) {
         auto [h, ex, ey] = histogram2d(x[0], x[1], {array<float>({-1.0f, 0.0f, 2.0f, 4.5f}), int64_t{2}},
                                        std::vector<std::pair<double, double>>{{0.0, 1.0}, {0.0, 2.0}},
                                        x[2], true);
         return std::vector<Array>{h, ex, ey};
       }},
      {"histogramdd", [](auto& x) {
         auto [h, e] = histogramdd(x[0], {int64_t{2}, int64_t{3}, array<float>({-2.0f, 0.0f, 0.5f, 2.0f})});
         e.insert(e.begin(), h);
         return e;
       }},
      {"histogramdd_w", [](auto& x) {
         auto [h, e] = histogramdd(
             x[0], {int64_t{2}}, std::vector<std::pair<double, double>>{{-1, 1}, {-2, 2}, {0, 3}}, x[1], true);
         e.insert(e.begin(), h);
         return e;
       }},
      // polynomials
      {"polydiv", [](auto& x) { return two(polydiv(x[0], x[1])); }},
      {"polydiv_short", [](auto& x) { return two(polydiv(x[0], x[1])); }},
      {"polyfit", [](auto& x) { return one(polyfit(x[0], x[1], 2)); }},
      {"polyfit_w2", [](auto& x) { return one(polyfit(x[0], x[1], 3, std::nullopt, x[2])); }},
      {"polyfit_full", [](auto& x) {
         PolyfitFull r = polyfit_full(x[0], x[1], 1);
         return std::vector<Array>{r.coef, r.residuals, r.rank, r.singular_values, r.rcond};
       }},
      // function-taking helpers
      {"piecewise", [](auto& x) {
         const Array& v = x[0];
         return one(piecewise(v, {v < 0.0, v > 1.0},
                              {fn1([](const Array& a) { return a * a; }),
                               fn1([](const Array& a) { return 3 * a - 1; }), 0.5}));
       }},
      {"piecewise_no_otherwise", [](auto& x) {
         const Array& v = x[0];
         return one(piecewise(v, {v < -1.0, v > 0.0}, {fn1([](const Array& a) { return -a; }), 2.0}));
       }},
      {"piecewise_int", [](auto& x) {
         const Array& v = x[0];
         return one(piecewise(v, {v > 0}, {fn1([](const Array& a) { return a * 2; }),
                                            fn1([](const Array& a) { return a - 1; })}));
       }},
      {"apply_along_axis", [](auto& x) {
         return one(apply_along_axis(
             [](const Array& v) { return sum(v * arange(v.shape()[0])); }, 1, x[0]));
       }},
      {"apply_along_axis_vec", [](auto& x) {
         return one(apply_along_axis(
             [](const Array& v) { return stack({max(v), min(v) * 2}); }, 0, x[0]));
       }},
      {"apply_along_axis_mat", [](auto& x) {
         return one(apply_along_axis([](const Array& v) { return outer(v, v); }, 1, x[0]));
       }},
      {"apply_over_axes", [](auto& x) {
         return one(apply_over_axes([](const Array& a, int64_t ax) { return sum(a, {ax}); }, x[0],
                                    {0, 2}));
       }},
      {"apply_over_axes_keep", [](auto& x) {
         return one(apply_over_axes([](const Array& a, int64_t ax) { return cumsum(a, ax); }, x[0],
                                    {1, -1}));
       }},
      {"fromfunction", [](auto&) {
         return one(fromfunction([](const std::vector<Array>& i) { return i[0] * 10 + i[1] * i[1]; },
                                 {3, 4}));
       }},
      {"fromfunction_int", [](auto&) {
         return one(fromfunction([](const std::vector<Array>& i) { return i[0] - i[1] * i[2]; },
                                 {2, 3, 2}, DType::kI32));
       }},
      {"vectorize", [](auto& x) {
         return vectorize([](const std::vector<Array>& a) {
           return std::vector<Array>{a[0] * a[1] + sin(a[0])};
         })({x[0], x[1]});
       }},
      {"vectorize_sig", [](auto& x) {
         return vectorize([](const std::vector<Array>& a) { return one(dot(a[0], a[1])); },
                          "(n),(n)->()")({x[0], x[1]});
       }},
      {"vectorize_sig_multi", [](auto& x) {
         return vectorize([](const std::vector<Array>& a) {
           return std::vector<Array>{max(a[0]), a[0] - mean(a[0])};
         }, "(n)->(),(n)")({x[0]});
       }},
      {"vectorize_excluded", [](auto& x) {
         return vectorize([](const std::vector<Array>& a) { return one(polyval(a[1], a[0])); }, "",
                          {1})({x[0], x[1]});
       }},
      // frombuffer: the bytes of in0 (f32)
      {"frombuffer", [](auto& x) {
         const std::string bytes(static_cast<const char*>(x[0].raw_data()), x[0].nbytes());
         return one(frombuffer(bytes, DType::kF32, 3, 4));
       }},
      {"frombuffer_i32", [](auto& x) {
         const std::string bytes(static_cast<const char*>(x[0].raw_data()), x[0].nbytes());
         return one(frombuffer(bytes, DType::kI32));
       }},
  };
  return *c;
}

TEST(NumpyMiscVectors, EveryRecordedCaseHasACall) {
  for (const auto& [key, v] : vectors().all()) {
    const std::string name = key.substr(0, key.rfind('.'));
    if (name.rfind("npy_", 0) == 0) continue;  // the .npy files' values
    EXPECT_TRUE(cases().count(name)) << "no C++ case for " << name;
  }
  EXPECT_GE(cases().size(), 55u);
}

TEST(NumpyMiscVectors, ValuesMatchJax) { vectors().expect_outputs_match(cases(), tol_for); }

TEST(NumpyMiscVectors, GradientsMatchJax) {
  EXPECT_GE(vectors().expect_gradients_match(cases(), tol_for), 40);
}

TEST(NumpyMiscVectors, JitMatchesEager) {
  for (const char* name : {"pad_reflect_odd", "pad_median", "pad_linear_ramp", "take_wrap",
                           "take_fill_value", "repeat_total_long", "block_promote",
                           "histogram2d_edges", "histogramdd", "polydiv", "polyfit",
                           "piecewise", "apply_along_axis_vec", "vectorize_sig_multi",
                           "where_one"}) {
    SCOPED_TRACE(name);
    const Fn& fn = cases().at(name);
    std::vector<Array> xs = inputs(name);
    std::vector<Array> jitted = jit(fn)(xs);
    for (size_t k = 0; k < jitted.size(); ++k) {
      expect_matches(jitted[k], std::string(name) + ".out" + std::to_string(k), tol_for(name));
    }
  }
}

// vmap over the first input (three scaled copies) against calling the case on each copy.
TEST(NumpyMiscVectors, VmapMatchesALoop) {
  for (const char* name : {"pad_reflect_odd", "pad_wrap", "pad_median", "pad_linear_ramp",
                           "take_fill_value", "take_wrap", "repeat_total_long", "block_promote",
                           "histogram2d_edges", "polydiv", "piecewise", "apply_along_axis_vec",
                           "apply_over_axes", "vectorize_sig_multi", "vectorize_excluded"}) {
    SCOPED_TRACE(name);
    const Fn& fn = cases().at(name);
    const std::vector<Array> xs = inputs(name);
    std::vector<Array> copies;
    for (double s : {1.0, -1.5, 2.0}) copies.push_back(xs[0] * s);
    std::vector<Array> batched = vmap([&](const Array& a) {
      std::vector<Array> all = xs;
      all[0] = a;
      return fn(all);
    })(stack(copies));
    for (size_t j = 0; j < copies.size(); ++j) {
      std::vector<Array> all = xs;
      all[0] = copies[j];
      std::vector<Array> want = fn(all);
      ASSERT_EQ(batched.size(), want.size());
      for (size_t k = 0; k < want.size(); ++k) {
        Array got = reshape(slice_axis(batched[k], 0, j, j + 1), want[k].shape());
        EXPECT_EQ(got.dtype(), want[k].dtype());
        std::vector<double> g = astype(got, DType::kF64).to_vector<double>();
        std::vector<double> w = astype(want[k], DType::kF64).to_vector<double>();
        for (size_t i = 0; i < w.size(); ++i) {
          EXPECT_NEAR(g[i], w[i], 1e-5 + 1e-5 * std::fabs(w[i])) << "copy " << j << " output " << k;
        }
      }
    }
  }
}

void expect_error(const std::function<void()>& f, const std::string& op) {
  try {
    f();
    ADD_FAILURE() << op << ": no error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("[" + op + "]", 0), 0u) << e.what();
  }
}

// A literal never switches functions: with scalars for x and y, where is the select, as
// jnp.where(c, 1, 2.5) ([1, 2.5, 1], a weak float: f32 in JAX without x64; graft keeps a C++
// double's precision as weak f64 until it meets an array, so an f32 array makes it f32); the
// one-argument form needs its NonzeroSize.
template <typename... A>
concept WhereCallable = requires(A... a) { where(a...); };
static_assert(!WhereCallable<Array, int>);
static_assert(!WhereCallable<Array, int64_t>);
static_assert(WhereCallable<Array, NonzeroSize>);

TEST(NumpyWhere, ThreeArgumentsWithLiteralsSelect) {
  const Array c = array(std::vector<bool>{true, false, true});
  for (const Array& out : {where(c, 1, 2.5), where(c, 1.0, 2.5), where(c, int64_t{1}, 2.5f)}) {
    EXPECT_TRUE(is_floating(out.dtype()) && out.weak_type()) << out.aval().str();
    EXPECT_EQ(out.shape(), (Shape{3}));
    EXPECT_EQ(out.to_vector<float>(), (std::vector<float>{1, 2.5, 1}));
    EXPECT_EQ((out + zeros({3}, DType::kF32)).dtype(), DType::kF32);
  }
  const Array i = where(c, 1, 2);
  EXPECT_EQ(i.dtype(), DType::kI32);
  EXPECT_EQ(i.to_vector<int32_t>(), (std::vector<int32_t>{1, 2, 1}));
  const std::vector<Array> idx = where(c, NonzeroSize{.size = 3, .fill_value = -1});
  ASSERT_EQ(idx.size(), 1u);
  EXPECT_EQ(idx[0].to_vector<int32_t>(), (std::vector<int32_t>{0, 2, -1}));
}

TEST(NumpyMiscErrors, BadInputsThrowNamingTheOp) {
  using W = std::vector<std::pair<int64_t, int64_t>>;
  Array v = arange(0.0, 6.0), m = reshape(v, {2, 3});
  expect_error([&] { pad(m, W{{-1, 0}}, PadMode::kEdge); }, "pad");
  expect_error([&] { pad(m, W{{1, 0}, {1, 1}, {0, 0}}, PadMode::kWrap); }, "pad");
  expect_error([&] { pad(zeros({0, 3}), W{{1, 0}}, PadMode::kReflect); }, "pad");
  expect_error([&] {
    PadOptions o(PadMode::kMean);
    o.stat_length = W{{0, 1}};
    pad(m, W{{1, 1}}, o);
  }, "pad");
  expect_error([&] { take(v, v, 0, TakeMode::kWrap); }, "take");
  expect_error([&] { take(m, ints({0}), 2, TakeMode::kClip); }, "take");
  expect_error([&] { repeat(m, ints({1, 2}), 1); }, "repeat");
  expect_error([&] { repeat(m, v, 0); }, "repeat");
  expect_error([&] { repeat(v, ints({1, -1, 0, 0, 0, 0}), 0); }, "repeat");
  expect_error([&] {  // traced repeats need a static total_repeat_length
    jit([&](const Array& r) { return repeat(v, r, 0); })(ints({1, 1, 1, 1, 1, 1}));
  }, "repeat");
  expect_error([&] { block(BlockArg(std::vector<BlockArg>{})); }, "block");
  expect_error([&] { block({BlockArg{v}, v}); }, "block");
  expect_error([&] { histogramdd(v); }, "histogramdd");
  expect_error([&] { histogramdd(m, {int64_t{2}, int64_t{2}}); }, "histogramdd");
  expect_error([&] { histogramdd(m, {int64_t{2}}, std::nullopt, ones({3})); }, "histogramdd");
  expect_error([&] { histogram2d(v, m); }, "histogram2d");
  expect_error([&] { polydiv(m, v); }, "polydiv");
  expect_error([&] { polyfit(v, v, -1); }, "polyfit");
  expect_error([&] { polyfit(m, v, 1); }, "polyfit");
  expect_error([&] { polyfit(v, arange(0.0, 5.0), 1); }, "polyfit");
  expect_error([&] { polyfit(v, v, 1, std::nullopt, ones({5})); }, "polyfit");
  expect_error([&] { piecewise(v, {v > 1.0}, {0.0, 1.0, 2.0}); }, "piecewise");
  expect_error([&] { vectorize([](const std::vector<Array>& a) { return a; }, "(n)->(n"); }, "vectorize");
  expect_error([&] { vectorize([](const std::vector<Array>& a) { return a; }, "(n),(n)->()")({v, m}); },
               "vectorize");
  expect_error([&] {
    vectorize([](const std::vector<Array>& a) { return std::vector<Array>{a[0]}; }, "(n)->()")({m});
  }, "vectorize");
  expect_error([&] { vectorize([](const std::vector<Array>& a) { return a; }, "(n)->(n)")({v, v}); },
               "vectorize");
  expect_error([&] { apply_along_axis([](const Array& a) { return a; }, 2, m); }, "apply_along_axis");
  expect_error([&] {
    apply_over_axes([](const Array& a, int64_t) { return sum(a); }, reshape(v, {1, 2, 3}), {0});
  }, "apply_over_axes");
  expect_error([&] { frombuffer("abcdefg", DType::kF32); }, "frombuffer");
  expect_error([&] { frombuffer("abcdefgh", DType::kI32, 3); }, "frombuffer");
  expect_error([&] { frombuffer("abcd", DType::kI32, -1, 5); }, "frombuffer");
}

TEST(NumpyMiscErrors, PolydivTrimsLeadingZerosEagerly) {
  auto [q, r] = polydiv(array<float>({1.0f, -3.0f, 2.0f}), array<float>({1.0f, -1.0f}), true);
  EXPECT_EQ(q.to_vector<float>(), (std::vector<float>{1.0f, -2.0f}));
  EXPECT_EQ(r.shape(), (Shape{0}));  // an exact division leaves no remainder
}

// ---- .npy files ----

const char* const kNpyNames[] = {"f32", "f64_fortran", "i32", "i64", "u8",
                                 "u32", "bool", "f16", "bf16", "empty"};

std::string read_bytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::ostringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

std::string npy_path(const std::string& name) {
  return runfile("tests/core/testdata/npy/" + name + ".npy");
}

TEST(NpyFiles, LoadsWhatNumpyWrote) {
  for (const char* name : kNpyNames) {
    SCOPED_TRACE(name);
    absl::StatusOr<Array> a = load(npy_path(name));
    ASSERT_TRUE(a.ok()) << a.status();
    expect_matches(*a, std::string("npy_") + name + ".out0");
  }
  EXPECT_EQ(load(npy_path("bf16"))->dtype(), DType::kBF16);  // '<V2' comes back as bf16
}

// graft writes numpy's exact bytes (header padded to 64 bytes, as numpy.save), so numpy
// reads them; the Fortran-order file is written back in C order instead.
TEST(NpyFiles, BytesEqualNumpys) {
  for (const char* name : kNpyNames) {
    if (std::string(name) == "f64_fortran") continue;
    SCOPED_TRACE(name);
    const std::string bytes = read_bytes(npy_path(name));
    absl::StatusOr<Array> a = npy_from_bytes(bytes);
    ASSERT_TRUE(a.ok()) << a.status();
    EXPECT_EQ(npy_bytes(*a), bytes);
  }
}

// c64 / c128 as numpy's '<c8' / '<c16' (interleaved real, imaginary parts), read back.
TEST(NpyFiles, ComplexRoundTrips) {
  for (DType d : {DType::kF32, DType::kF64}) {
    Array z = complex(astype(arange(0.0, 3.0, 1.0), d), astype(arange(1.0, 4.0, 1.0), d));
    const std::string bytes = npy_bytes(z);
    EXPECT_NE(bytes.find(d == DType::kF32 ? "'<c8'" : "'<c16'"), std::string::npos);
    absl::StatusOr<Array> back = npy_from_bytes(bytes);
    ASSERT_TRUE(back.ok()) << back.status();
    EXPECT_EQ(back->dtype(), z.dtype());
    EXPECT_EQ(real(*back).to_vector<double>(), real(z).to_vector<double>());
    EXPECT_EQ(imag(*back).to_vector<double>(), imag(z).to_vector<double>());
  }
}

TEST(NpyFiles, SaveLoadRoundTrips) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  const std::string dir = tmp ? tmp : "/tmp";
  const char* outs = std::getenv("TEST_UNDECLARED_OUTPUTS_DIR");
  if (outs) mkdir((std::string(outs) + "/npy").c_str(), 0755);
  for (const char* name : kNpyNames) {
    SCOPED_TRACE(name);
    Array a = *load(npy_path(name));
    const std::string path = dir + "/" + name + ".npy";
    ASSERT_TRUE(save(path, a).ok());
    absl::StatusOr<Array> b = load(path);
    ASSERT_TRUE(b.ok()) << b.status();
    EXPECT_EQ(b->dtype(), a.dtype());
    EXPECT_EQ(b->shape(), a.shape());
    EXPECT_EQ(npy_bytes(*b), npy_bytes(a));  // the same bits
    if (outs) ASSERT_TRUE(save(std::string(outs) + "/npy/" + name + ".npy", a).ok());
  }
  // A computed (lazy) array and a transposed view are written in C order.
  Array t = transpose(reshape(arange(0.0, 6.0), {2, 3}));
  ASSERT_TRUE(save(dir + "/t.npy", t).ok());
  EXPECT_EQ(load(dir + "/t.npy")->to_vector<float>(), t.to_vector<float>());
  EXPECT_FALSE(save("/nonexistent-dir/x.npy", t).ok());
}

TEST(NpyFiles, BrokenFilesGiveAStatus) {
  const std::string good = read_bytes(npy_path("f32"));
  auto message = [](std::string_view bytes) {
    absl::StatusOr<Array> a = npy_from_bytes(bytes);
    EXPECT_FALSE(a.ok());
    return a.ok() ? std::string() : std::string(a.status().message());
  };
  auto with_header = [&](const std::string& dict, size_t data_bytes) {
    std::string h = dict;
    h.append((64 - (10 + h.size() + 1) % 64) % 64, ' ');
    h.push_back('\n');
    std::string out = good.substr(0, 8);
    out.push_back(static_cast<char>(h.size() & 0xff));
    out.push_back(static_cast<char>(h.size() >> 8));
    return out + h + std::string(data_bytes, '\0');
  };
  EXPECT_EQ(message("").rfind("load: not a .npy file", 0), 0u);
  EXPECT_EQ(message("PK\x03\x04 not npy at all").rfind("load: not a .npy file", 0), 0u);
  EXPECT_EQ(message(good.substr(0, good.size() - 1)).rfind("load: truncated data", 0), 0u);
  EXPECT_EQ(message(good.substr(0, 40)).rfind("load: truncated header", 0), 0u);
  std::string v9 = good;
  v9[6] = 9;
  EXPECT_EQ(message(v9).rfind("load: unsupported .npy format version 9", 0), 0u);
  EXPECT_EQ(message(with_header("{'descr': '<m8', 'fortran_order': False, 'shape': (2,), }", 16))
                .rfind("load: unsupported dtype '<m8'", 0), 0u);
  EXPECT_EQ(message(with_header("{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }", 8))
                .rfind("load: big-endian", 0), 0u);
  EXPECT_EQ(message(with_header("{'descr': '<f4', 'fortran_order': False, 'shape': "
                                "(99999999999999, 99999999999999), }", 8))
                .rfind("load: shape is too large", 0), 0u);
  EXPECT_EQ(message(with_header("{'descr': '<f4', 'fortran_order': maybe, 'shape': (2,), }", 8))
                .rfind("load: 'fortran_order'", 0), 0u);
  EXPECT_EQ(message(with_header("{'descr': '<f4', 'shape': (2,), }", 8)).rfind("load: the header lacks", 0),
            0u);
  EXPECT_EQ(message(with_header("{'descr': '<f4', 'fortran_order': False, 'shape': (-2,), }", 8))
                .rfind("load: 'shape'", 0), 0u);
  EXPECT_EQ(message(with_header("[1, 2]", 8)).rfind("load: the header is not a dict", 0), 0u);
  // Every truncation of a good file is refused or read, never a crash.
  for (size_t n = 0; n < good.size(); ++n) EXPECT_FALSE(npy_from_bytes(good.substr(0, n)).ok()) << n;
  absl::StatusOr<Array> missing = load("/nonexistent-dir/x.npy");
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace graft
