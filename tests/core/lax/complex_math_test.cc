// The complex cases of jax.numpy's elementwise functions, power, comparisons, reductions,
// sorting and gathers / scatters (core/lax/complex_math.cc, core/lax/complex_reduce.cc)
// against JAX.
//
// How the vectors were made: tools/make_complex_math_vectors.py ran JAX 0.10.2 on CPU (x64
// off) on seeded float32 standard-normal inputs and wrote
// tests/core/testdata/complex_math_vectors.txt: inputs, JAX's output and, where marked,
// jax.grad of sum(out * ct) for a stored cotangent ct (through complex values: JAX's
// convention; for arccosh the derivative of JAX's value, as JAX's own jvp has the wrong sign
// where Re z < 0, see the script). Complex values go in as complex(a, b) and come out as
// stack([real, imag], -1). Compared with f32 tolerances (1e-5 absolute + 1e-5 relative). Also: c128
// against std::complex<double>, jit equals eager, vmap equals a loop, and the ops JAX refuses on
// complex values are errors naming the op.
#include <cmath>
#include <complex>
#include <functional>
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

Array ties(const std::vector<Array>& x, int i = 0) { return complex(round(x[i]), round(x[i + 1])); }
// complex(a, b) with NaN real parts where a > 0.8.
Array with_nans(const std::vector<Array>& x) {
  return complex(where(x[0] > 0.8, full_like(x[0], NAN), x[0]), x[1]);
}
// [0, inf, -inf, nan] as the real parts down the rows and the imaginary parts across (+ a).
Array specials(const Array& a) {
  const Array s = array<float>({0.0f, INFINITY, -INFINITY, NAN});
  return complex(reshape(s, {4, 1}) + a, reshape(s, {1, 4}) + a);
}

// Points on and beside the negative real axis, imaginary parts +0 and -0 (the tool's CUT_RE,
// CUT_IM).
Array on_the_cut() {
  return complex(array<float>({-1, -1, -4, 1, 0.5, -0.5, 0, -0.0f, -2}),
                 array<float>({0, -0.0f, -0.0f, -0.0f, -0.0f, -0.0f, -0.0f, -0.0f, -3}));
}

// The tool's DIV_A / DIV_B grid: every numerator over every denominator (outer: numerators).
std::pair<Array, Array> division_grid() {
  const float inf = INFINITY, nan = NAN;
  const std::vector<std::pair<float, float>> a{{1, 1},   {1e-30f, 1e-30f}, {3, 4}, {inf, 1},
                                               {1, -inf}, {nan, 1},         {0, 0}, {-2, 5}};
  const std::vector<std::pair<float, float>> b{
      {1e30f, 1e30f}, {1e-30f, -1e-30f}, {0, 0}, {-0.0f, 0}, {inf, 2},    {2, -inf},
      {1, 2},         {nan, 0},          {3e38f, 3e38f},     {2e-38f, 0}, {0, -0.0f}};
  std::vector<float> ar, ai, br, bi;
  for (const auto& [x, y] : a) {
    for (const auto& [u, v] : b) {
      ar.push_back(x), ai.push_back(y), br.push_back(u), bi.push_back(v);
    }
  }
  return {complex(array<float>(ar), array<float>(ai)), complex(array<float>(br), array<float>(bi))};
}

Fn unary(Array (*f)(const Array&), double scale = 1.0) {
  return [f, scale](const std::vector<Array>& x) { return ri(f(cx(x) * scale)); };
}

const std::map<std::string, Fn>& cases() {
  static const auto* c = new std::map<std::string, Fn>{
      {"sign", unary(sign)},
      {"sqrt", unary(sqrt)},
      {"rsqrt", unary(rsqrt)},
      {"log", unary(log)},
      {"log1p", unary(log1p, 0.5)},
      {"expm1", unary(expm1)},
      {"sin", unary(sin)},
      {"cos", unary(cos)},
      {"tan", unary(tan, 0.5)},
      {"sinh", unary(sinh)},
      {"cosh", unary(cosh)},
      {"tanh", unary(tanh, 0.5)},
      {"arcsin", unary(arcsin)},
      {"arccos", unary(arccos)},
      {"arctan", unary(arctan, 0.5)},
      {"arcsinh", unary(arcsinh)},
      {"arccosh", unary(arccosh)},
      {"arctanh", unary(arctanh, 0.5)},
      {"log2", unary(log2)},
      {"log10", unary(log10)},
      {"exp2", unary(exp2)},
      {"reciprocal", unary(reciprocal)},
      {"sigmoid", unary(sigmoid, 0.5)},
      {"sinc", unary(sinc, 0.5)},
      {"square", unary(square)},
      {"exp", unary(exp)},
      {"deg2rad", unary(deg2rad)},
      {"round", unary(round, 2.0)},
      {"rint", unary(rint, 2.0)},
      {"sqrt_real_axis", [](auto& x) { return ri(sqrt(complex(x[0], zeros_like(x[0])))); }},
      {"log_real_axis", [](auto& x) { return ri(log(complex(x[0], zeros_like(x[0])))); }},
      {"isfinite", [](auto& x) { return isfinite(specials(x[0])); }},
      {"isnan", [](auto& x) { return isnan(specials(x[0])); }},
      {"isinf", [](auto& x) { return isinf(specials(x[0])); }},
      {"nan_to_num", [](auto& x) { return ri(nan_to_num(specials(x[0]))); }},
      // power
      {"power_complex", [](auto& x) { return ri(power(cx(x), cx(x, 2))); }},
      {"power_int", [](auto& x) { return ri(power(cx(x), 3)); }},
      {"power_neg_int", [](auto& x) { return ri(power(cx(x), -2)); }},
      {"power_real", [](auto& x) { return ri(power(cx(x), 2.5)); }},
      {"power_real_base", [](auto& x) { return ri(power(abs(x[0]) + 0.5, cx(x, 1))); }},
      {"float_power", [](auto& x) { return ri(float_power(cx(x), x[2])); }},
      // comparisons and max / min
      {"equal", [](auto& x) { return equal(ties(x), ties(x, 2)); }},
      {"not_equal", [](auto& x) { return not_equal(ties(x), ties(x, 2)); }},
      {"less", [](auto& x) { return less(ties(x), ties(x, 2)); }},
      {"less_equal", [](auto& x) { return less_equal(ties(x), ties(x, 2)); }},
      {"greater", [](auto& x) { return greater(ties(x), ties(x, 2)); }},
      {"greater_equal", [](auto& x) { return greater_equal(ties(x), ties(x, 2)); }},
      {"maximum", [](auto& x) { return ri(maximum(cx(x), cx(x, 2))); }},
      {"minimum", [](auto& x) { return ri(minimum(cx(x), cx(x, 2))); }},
      {"isclose",
       [](auto& x) {
         Array steps = take(array<float>({0.0f, 1e-7f, 1e-3f}), arange(8) % 3);
         return isclose(cx(x), cx(x) + complex(x[1], x[0]) * steps);
       }},
      // reductions
      {"prod_all", [](auto& x) { return ri(prod(cx(x))); }},
      {"prod_axis", [](auto& x) { return ri(prod(cx(x), {1}, true)); }},
      {"prod_axes",
       [](auto& x) {
         return ri(prod(cx(x), {0, 2}));
       }},
      {"max_axis", [](auto& x) { return ri(max(cx(x), {0})); }},
      {"min_all", [](auto& x) { return ri(min(cx(x))); }},
      {"max_ties", [](auto& x) { return ri(max(ties(x), {1})); }},
      {"mean", [](auto& x) { return ri(mean(cx(x), {1})); }},
      {"var", [](auto& x) { return var(cx(x), {0}); }},
      {"std_ddof", [](auto& x) { return graft::std(cx(x), {}, false, 1); }},
      {"cumsum", [](auto& x) { return ri(cumsum(cx(x), 1)); }},
      {"cumprod", [](auto& x) { return ri(cumprod(cx(x), 0)); }},
      {"norm", [](auto& x) { return linalg::norm(cx(x)); }},
      {"nansum", [](auto& x) { return ri(nansum(with_nans(x), {1})); }},
      {"nanmean", [](auto& x) { return ri(nanmean(with_nans(x), {0})); }},
      {"nanvar", [](auto& x) { return nanvar(with_nans(x), {1}); }},
      {"nanstd", [](auto& x) { return nanstd(with_nans(x), {}, false, 1); }},
      {"logsumexp", [](auto& x) { return ri(logsumexp(cx(x), {1})); }},
      {"cov", [](auto& x) { return ri(cov(cx(x))); }},
      {"corrcoef", [](auto& x) { return ri(corrcoef(cx(x))); }},
      {"vdot", [](auto& x) { return ri(vdot(cx(x), cx(x, 2))); }},
      {"vecdot", [](auto& x) { return ri(vecdot(cx(x), cx(x, 2))); }},
      {"norm_fro", [](auto& x) { return linalg::norm(cx(x), "fro"); }},
      {"norm_inf", [](auto& x) { return linalg::norm(cx(x), "inf"); }},
      // sorting and indexing
      {"sort", [](auto& x) { return ri(sort(ties(x), 0)); }},
      {"sort_grad", [](auto& x) { return ri(sort(cx(x))); }},
      {"argsort", [](auto& x) { return argsort(ties(x), -1); }},
      {"take",
       [](auto& x) {
         return ri(take(cx(x), array<int32_t>({3, 0, 3, 1}), 1));
       }},
      {"take_along_axis",
       [](auto& x) {
         return ri(take_along_axis(cx(x), array<int32_t>({2, 0, 1, 1, 1, 0}, Shape{2, 3}), 1));
       }},
      {"index",
       [](auto& x) {
         Array rows = take(cx(x), array<int32_t>({1, 0, 1}), 0);
         return ri(slice_axis(rows, 1, 2, 4));
       }},
      {"at_set",
       [](auto& x) {
         return ri(at(cx(x), {array<int32_t>({4, 1})}).set(cx(x, 2)));
       }},
      {"at_add",
       [](auto& x) {
         return ri(at(cx(x), {array<int32_t>({2, 2, 0})}).add(cx(x, 2)));
       }},
      {"at_multiply",
       [](auto& x) {
         return ri(at(cx(x), {array<int32_t>({2, -1, 2, 0, 2})}).multiply(cx(x, 2)));
       }},
      {"at_multiply_unique",
       [](auto& x) {
         return ri(at(cx(x), {array<int32_t>({3, 0})}).multiply(cx(x, 2)));
       }},
      {"at_min",
       [](auto& x) {
         Array halves = complex(round(x[2] * 2.0), round(x[3] * 2.0)) * 0.5;
         return ri(at(cx(x), {array<int32_t>({1, 3, 1, -2})}).min(halves));
       }},
      {"at_max",
       [](auto& x) {
         return ri(at(cx(x), {array<int32_t>({4, 0, 4, 4})}).max(cx(x, 2)));
       }},
      // On the cut with signed zeros (as the tool's CUT_RE / CUT_IM).
      {"sqrt_signed_zero", [](auto&) { return ri(sqrt(on_the_cut())); }},
      {"log_signed_zero", [](auto&) { return ri(log(on_the_cut())); }},
      {"divide_scaled",
       [](auto&) {
         auto [a, b] = division_grid();
         return ri(a / b);
       }},
      {"divide", [](auto& x) { return ri(cx(x) / cx(x, 2)); }},
      // grad with respect to complex arguments (the case's output is the gradient).
      {"grad_abs2",
       [](auto& x) {
         return ri(grad([](const Array& z) { return sum(square(abs(z))); })(cx(x)));
       }},
      {"grad_re_exp_w",
       [](auto& x) {
         const Array w = cx(x, 2);
         return ri(grad([&](const Array& z) { return sum(real(exp(z) * w)); })(cx(x)));
       }},
      {"grad_re_matmul",
       [](auto& x) {
         const Array b = cx(x, 2);
         return ri(grad([&](const Array& a) { return sum(real(matmul(a, b))); })(cx(x)));
       }},
      {"grad_irfft",
       [](auto& x) {
         const Array w = arange(1.0, 9.0);
         return ri(grad([&](const Array& z) { return sum(fft::irfft(z) * w); })(cx(x)));
       }},
      {"grad_fft_abs",
       [](auto& x) {
         return ri(grad([](const Array& z) { return sum(abs(fft::fft(z))); })(cx(x)));
       }},
      {"grad_holomorphic",
       [](auto& x) {
         return ri(grad([](const Array& z) { return sum(sin(z) * z); }, holomorphic)(cx(x)));
       }},
  };
  return *c;
}

TEST(ComplexMathTest, ValuesAndGradientsMatchJax) {
  EXPECT_EQ(cases().size(), 95u);
  EXPECT_EQ(expect_cases_match(cases()), 61);  // cases with gradients
}

// c128 keeps f64 precision: each function against std::complex<double> at a few points.
TEST(ComplexMathTest, Complex128MatchesStdComplex) {
  using C = std::complex<double>;
  const std::vector<C> z = {{0.3, 0.7}, {-1.2, 0.4}, {2.5, -1.5}, {-0.6, -2.2}, {1e-8, 3e-9}};
  const Array a = array<C>(z);
  struct Case {
    const char* name;
    Array (*graft_fn)(const Array&);
    C (*std_fn)(const C&);
  };
  const std::vector<Case> fns = {
      {"log", log, [](const C& v) { return std::log(v); }},
      {"log1p", log1p, [](const C& v) { return std::log(1.0 + v); }},
      {"sqrt", sqrt, [](const C& v) { return std::sqrt(v); }},
      {"sin", sin, [](const C& v) { return std::sin(v); }},
      {"cos", cos, [](const C& v) { return std::cos(v); }},
      {"tan", tan, [](const C& v) { return std::tan(v); }},
      {"sinh", sinh, [](const C& v) { return std::sinh(v); }},
      {"cosh", cosh, [](const C& v) { return std::cosh(v); }},
      {"tanh", tanh, [](const C& v) { return std::tanh(v); }},
      {"asin", asin, [](const C& v) { return std::asin(v); }},
      {"acos", acos, [](const C& v) { return std::acos(v); }},
      {"atan", atan, [](const C& v) { return std::atan(v); }},
      {"asinh", asinh, [](const C& v) { return std::asinh(v); }},
      {"acosh", acosh, [](const C& v) { return std::acosh(v); }},
      {"atanh", atanh, [](const C& v) { return std::atanh(v); }},
  };
  for (const Case& f : fns) {
    SCOPED_TRACE(f.name);
    Array out = f.graft_fn(a);
    ASSERT_EQ(out.dtype(), DType::kC128);
    std::vector<C> got = out.to_vector<C>();
    for (size_t i = 0; i < z.size(); ++i) {
      const C want = f.std_fn(z[i]);
      EXPECT_NEAR(got[i].real(), want.real(), 1e-13 * (1 + std::abs(want))) << i;
      EXPECT_NEAR(got[i].imag(), want.imag(), 1e-13 * (1 + std::abs(want))) << i;
    }
  }
  // expm1 keeps digits that exp(z) - 1 loses near 0.
  const C tiny{1e-9, 2e-9};
  const C e = array<C>({tiny}).to_vector<C>()[0];
  const C got = expm1(array<C>({e})).to_vector<C>()[0];
  EXPECT_NEAR(got.real(), 1e-9 - 1.5e-18, 1e-24);
  EXPECT_NEAR(got.imag(), 2e-9 + 2e-18, 1e-24);
}

TEST(ComplexMathTest, ResultDtypes) {
  const Array z = complex(array<float>({1, -2}), array<float>({0.5f, 3}));
  EXPECT_EQ(abs(z).dtype(), DType::kF32);
  EXPECT_EQ(log(z).dtype(), DType::kC64);
  EXPECT_EQ(var(z).dtype(), DType::kF32);
  EXPECT_EQ(mean(z).dtype(), DType::kC64);
  EXPECT_EQ(less(z, z).dtype(), DType::kBool);
  EXPECT_EQ(argsort(z).dtype(), DType::kI32);
  EXPECT_EQ(prod(z, {0}).dtype(), DType::kC64);
  EXPECT_EQ(prod(zeros({0, 2}, DType::kC64), {0}).to_vector<std::complex<float>>(),
            (std::vector<std::complex<float>>{1.0f, 1.0f}));
  EXPECT_EQ(linalg::norm(z).dtype(), DType::kF32);
  EXPECT_EQ(power(z, 2).to_vector<std::complex<float>>()[1],
            std::complex<float>(-2, 3) * std::complex<float>(-2, 3));
}

TEST(ComplexMathTest, JitAndVmapMatchEager) {
  for (const char* name :
       {"arcsinh", "power_complex", "prod_axes", "sort", "at_add", "at_multiply", "less"}) {
    SCOPED_TRACE(name);
    const Fn& fn = cases().at(name);
    std::vector<Array> xs = inputs(name);
    auto jitted = jit([&](const std::vector<Array>& a) { return fn(a); });
    Array want = fn(xs), got = jitted(xs);
    ASSERT_EQ(got.dtype(), want.dtype());
    EXPECT_EQ(astype(got, DType::kF32).to_vector<float>(),
              astype(want, DType::kF32).to_vector<float>());
  }
  // vmap over rows of a complex matrix equals each row's result.
  const std::vector<Array> xs = inputs("sqrt");
  const Array z = cx(xs);
  auto row_fn = [](const Array& r) { return sort(tanh(r) * prod(r)); };
  Array batched = vmap(row_fn)(z);
  for (int64_t b = 0; b < z.shape()[0]; ++b) {
    Array row = squeeze(slice_axis(z, 0, b, b + 1), {0});
    std::vector<float> want = ri(row_fn(row)).to_vector<float>();
    std::vector<float> got = ri(squeeze(slice_axis(batched, 0, b, b + 1), {0})).to_vector<float>();
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i)
      EXPECT_NEAR(got[i], want[i], 1e-5 * (1 + std::fabs(want[i])));
  }
}

// What grad refuses with complex values, as JAX: a complex output without holomorphic, and
// holomorphic with a real output or real arguments.
TEST(ComplexMathTest, GradOfComplexOutputsNeedsHolomorphic) {
  const Array z = complex(array<float>({1, 2}), array<float>({0.5f, -1}));
  auto message = [](auto&& f) {
    try {
      f();
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(message([&] { grad([](const Array& v) { return sum(v * v); })(z); })
                .rfind("[grad] requires a real floating output, got c64[]", 0),
            0u);
  EXPECT_EQ(message([&] { grad([](const Array& v) { return sum(abs(v)); }, holomorphic)(z); })
                .rfind("[grad] with holomorphic requires a complex output", 0),
            0u);
  EXPECT_EQ(message([] {
              grad([](const Array& v) { return sum(astype(v, DType::kC64)); }, holomorphic)(
                  array<float>({1, 2}));
            }).rfind("[grad] with holomorphic requires complex arguments", 0),
            0u);
}

TEST(ComplexMathTest, WhatJaxRefusesIsAnError) {
  const Array z = complex(array<float>({1, -2}), array<float>({0.5f, 3}));
  expect_error([&] { floor(z); }, "[floor]");
  expect_error([&] { trunc(z); }, "[trunc]");
  expect_error([&] { nextafter(z, z); }, "[nextafter]");
  expect_error([&] { convolve(z, z); }, "[convolve]");
  expect_error([&] { polyfit(z, z, 1); }, "[polyfit]");
  expect_error([&] { cbrt(z); }, "[cbrt]");
  expect_error([&] { arctan2(z, z); }, "[arctan2]");
  expect_error([&] { hypot(z, z); }, "[hypot]");
  expect_error([&] { clip(z, 0, 1); }, "[clip]");
  expect_error([&] { median(z); }, "[median]");
  expect_error([&] { quantile(z, Array(0.5)); }, "[quantile]");
  expect_error([&] { argmax(z); }, "[argmax]");
  expect_error([&] { erf(z); }, "[erf]");
  expect_error([&] { isposinf(z); }, "[isposinf]");
  expect_error([&] { scipy::special::gammaln(z); }, "[gammaln]");
  expect_error([&] { histogram(z, 3); }, "[histogram]");
  expect_error([&] { softmax(z); }, "[reduce_max]");
}

}  // namespace
}  // namespace graft
