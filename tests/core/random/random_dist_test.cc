// The jax.random distributions of core/random/distributions.h against JAX.
//
// How the vectors were made: tests/core/random/testdata/random_dist_vectors.txt was written by
// tools/make_random_dist_vectors.py, which ran jax.random (JAX / jaxlib 0.10.2 on CPU,
// x86-64, default flags, raw keys from jax.random.PRNGKey) and stored each result's exact
// bits. A case is compared bit for bit unless its function has an allowance (allowed(): f32
// ulp, or an absolute / relative error, each with its reason); the allowances are the table of
// docs/arrays-and-ops.md ("Random numbers"), which the test prints and checks against that
// page.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <map>
#include <set>
#include <sstream>
#include <string>

#include "core/error.h"
#include "core/ops.h"
#include "core/lax/special.h"
#include "core/random/random.h"
#include "gtest/gtest.h"
#include "tests/core/random/random_vectors.h"
#include "tests/util/doc_block.h"
#include "transforms/autodiff.h"
#include "transforms/jit.h"
#include "transforms/vmap.h"

namespace graft {
namespace {

using namespace random_vectors;  // NOLINT: the golden-file reader
using random::key;

const std::map<std::string, Golden>& vectors() {
  static const auto* v = new std::map<std::string, Golden>(
      load_golden("tests/core/random/testdata/random_dist_vectors.txt"));
  return *v;
}

Array f32s(std::vector<float> v) { return array<float>(v); }

// What each function's cases are allowed to differ from JAX's by, and why. A function not
// named here is bit for bit. The same table is docs/arrays-and-ops.md's ("Random numbers"):
// the test prints it and fails when that page's copy differs. The allowances are the worst
// differences seen on these cases (the test prints each case's).
struct Allowed {
  int64_t ulp = 0;        // f32 ulp on the monotone integer line; 0 (and no abs): bit for bit
  double abs = 0;         // > 0: compared as values within this error instead
  bool relative = false;  // abs scales with max(1, |JAX's value|)
  const char* why = "";
};

// The value passes through exp or pow, whose f32 kernels in graft are Eigen's, not
// XLA:CPU's.
constexpr const char* kEigenKernel = "Eigen's f32 exp / pow, not XLA:CPU's";
// maxwell's sum of three squares, which XLA:CPU associates and contracts into FMAs in an order
// graft does not copy.
constexpr const char* kReduceOrder = "XLA:CPU's order of FMAs in a sum of three squares";
// XLA rewrites Marsaglia-Tsang's c = (1/3) / sqrt(d) as (1/3) * rsqrt(d), and XLA:CPU's rsqrt
// is an approximation (rsqrtps plus a Newton step, vendor-dependent; it equals 1/sqrt for 71%
// of inputs), which graft does not copy. With JAX's own c, a numpy port of graft's loop gives
// JAX's gamma / loggamma bits exactly (checked for these keys); with 1/sqrt the samples move
// by a few ulp, and a rejection decision could flip (not seen).
constexpr const char* kRsqrt = "XLA:CPU's approximate rsqrt in Marsaglia-Tsang's c";
// The samplers built on LAPACK factorizations (orthogonal: qr; multivariate_normal: cholesky /
// svd / eigh), whose rounding is not XLA's: entries near 0 would be many ulp apart for an
// error of 1e-7, so they compare as values.
constexpr const char* kLapack = "the LAPACK factorization's rounding";
// random_gamma_grad's series / continued fraction round differently from XLA's, and the
// samples it is taken at carry kRsqrt's ulps.
constexpr const char* kGammaGrad = "the series' rounding, at samples that carry the rsqrt's ulps";

const std::map<std::string, Allowed>& allowed() {
  static const auto* a = new std::map<std::string, Allowed>{
      {"pareto", {2, 0, false, kEigenKernel}},
      {"lognormal", {1, 0, false, kEigenKernel}},
      {"maxwell", {1, 0, false, kReduceOrder}},
      {"gamma", {5, 0, false, kRsqrt}},
      {"loggamma", {1, 0, false, kRsqrt}},
      {"dirichlet", {3, 0, false, kRsqrt}},
      {"chisquare", {1, 0, false, kRsqrt}},
      {"f", {5, 0, false, kRsqrt}},
      {"generalized_normal", {5, 0, false, kRsqrt}},
      {"ball", {1, 0, false, kRsqrt}},
      {"orthogonal", {0, 4e-7, false, kLapack}},
      {"multivariate_normal", {0, 5e-7, false, kLapack}},
      {"grad_gamma", {0, 3e-7, true, kGammaGrad}},
      {"grad_loggamma", {0, 5e-7, true, kGammaGrad}},
      {"random_gamma_grad", {0, 5e-7, true, kGammaGrad}},
  };
  return *a;
}

// A case's function: its name up to the key ("_k<digit>") or "_points" / "_kp".
std::string function_of(const std::string& case_name) {
  for (size_t i = 0; i + 2 < case_name.size(); ++i) {
    if (case_name[i] != '_') continue;
    const std::string rest = case_name.substr(i + 1);
    if ((rest[0] == 'k' && (std::isdigit(static_cast<unsigned char>(rest[1])) || rest[1] == 'p')) ||
        rest.rfind("points", 0) == 0) {
      return case_name.substr(0, i);
    }
  }
  return case_name;
}

Allowed allowed_for(const std::string& case_name) {
  auto it = allowed().find(function_of(case_name));
  return it == allowed().end() ? Allowed{} : it->second;
}

struct Case {
  std::function<Array()> fn;
};

// multivariate_normal's parameters (as tools/make_random_dist_vectors.py): mean (3,), an SPD
// cov (3, 3).
Array mvn_mean() { return array<float>({1.0f, -2.0f, 0.5f}); }
Array mvn_cov() {
  return array<float>({2.0f, 0.3f, -0.2f, 0.3f, 1.0f, 0.4f, -0.2f, 0.4f, 1.5f}, Shape{3, 3});
}

// lax.lgamma / lax.digamma's points (tools/make_random_dist_vectors.py LGAMMA_POINTS), and
// those where d lgamma / dx is finite (not the poles 0, -2 nor inf).
const std::vector<float> kLgammaPoints = {
    -4.5f, -3.7f, -2.5f, -2.0f, -1.2f, -0.5f, -0.1f, 0.0f, 0.1f, 0.3f, 0.5f, 0.9f, 1.0f,
    1.5f,  2.0f,  2.5f,  3.0f,  4.2f,  7.7f,  10.0f, 25.5f, 100.0f, 1234.5f, 1e6f, INFINITY};
Array grad_points() {
  std::vector<float> v;
  for (float x : kLgammaPoints) {
    if (std::isfinite(x) && !(x <= 0 && x == std::floor(x))) v.push_back(x);
  }
  return f32s(v);
}

const std::map<std::string, Case>& cases() {
  static const auto* m = new std::map<std::string, Case>{
      // Built on LAPACK (orthogonal: qr; multivariate_normal: cholesky / svd / eigh).
      {"orthogonal_k51_n4_f32", {[] { return random::orthogonal(key(51), 4); }}},
      {"orthogonal_k52_n3_m5_f32_2",
       {[] { return random::orthogonal(key(52), 3, {2}, DType::kF32, 5); }}},
      {"orthogonal_k53_n5_m2_f32",
       {[] { return random::orthogonal(key(53), 5, {}, DType::kF32, 2); }}},
      {"multivariate_normal_k54_cholesky_f32_6",
       {[] { return random::multivariate_normal(key(54), mvn_mean(), mvn_cov(), Shape{6}); }}},
      {"multivariate_normal_k55_svd_f32",
       {[] {
          return random::multivariate_normal(key(55), mvn_mean(), mvn_cov(), std::nullopt,
                                             std::nullopt, "svd");
        }}},
      {"multivariate_normal_k56_eigh_f32_2x4",
       {[] {
          return random::multivariate_normal(key(56), mvn_mean(), mvn_cov(), Shape{2, 4},
                                             std::nullopt, "eigh");
        }}},
      {"exponential_k1_f32_16", {[] { return random::exponential(key(1), {16}); }}},
      {"exponential_k2_f32_3x4", {[] { return random::exponential(key(2), {3, 4}); }}},
      {"laplace_k3_f32_16", {[] { return random::laplace(key(3), {16}); }}},
      {"logistic_k4_f32_16", {[] { return random::logistic(key(4), {16}); }}},
      // cauchy (tan) and weibull_min (pow) pass through Eigen's f32 kernels too, and still
      // give JAX's bits on these keys.
      {"cauchy_k5_f32_16", {[] { return random::cauchy(key(5), {16}); }}},
      {"rademacher_k6_i32_16", {[] { return random::rademacher(key(6), {16}); }}},
      {"rademacher_k6_f32_2x3",
       {[] { return random::rademacher(key(6), {2, 3}, DType::kF32); }}},
      {"rayleigh_k7_scale2_f32_16", {[] { return random::rayleigh(key(7), 2.0, Shape{16}); }}},
      {"rayleigh_k7_scalevec_f32_2x3",
       {[] { return random::rayleigh(key(7), f32s({0.5f, 1.0f, 3.0f}), Shape{2, 3}); }}},
      {"weibull_min_k8_s2_c1.5_f32_16",
       {[] { return random::weibull_min(key(8), 2.0, 1.5, {16}); }}},
      {"pareto_k9_b3_f32_16", {[] { return random::pareto(key(9), 3.0, Shape{16}); }}},
      {"maxwell_k10_f32_8", {[] { return random::maxwell(key(10), {8}); }}},
      {"double_sided_maxwell_k11_loc1_scale2_f32_8",
       {[] { return random::double_sided_maxwell(key(11), 1.0, 2.0, {8}); }}},
      {"lognormal_k12_s0.5_f32_16", {[] { return random::lognormal(key(12), 0.5, Shape{16}); }}},
      {"triangular_k13_0_1_3_f32_16",
       {[] { return random::triangular(key(13), 0.0, 1.0, 3.0, Shape{16}); }}},
      {"triangular_k13_vec_f32_2x3",
       {[] {
         return random::triangular(key(13), f32s({-1, 0, 1}), 2.0, f32s({3, 4, 5}), Shape{2, 3});
       }}},
      // Bit for bit on this key, though graft copies XLA:CPU's FMA in x = t - mean/2 *
      // sqrt(...) but not the ones inside the square root, and x cancels, which magnifies
      // them: other keys may differ (3 of 64 samples did in a numpy study, by up to 16 ulp,
      // without the FMA graft copies).
      {"wald_k14_m1.5_f32_16", {[] { return random::wald(key(14), 1.5, Shape{16}); }}},
      {"geometric_k15_p0.3_i32_16", {[] { return random::geometric(key(15), 0.3, Shape{16}); }}},
      {"geometric_k15_pvec_i32_2x3",
       {[] { return random::geometric(key(15), f32s({0.1f, 0.5f, 0.9f}), Shape{2, 3}); }}},
      {"choice_k16_n10_8", {[] { return random::choice(key(16), 10, {8}); }}},
      {"choice_k17_n10_norep_6", {[] { return random::choice(key(17), 10, {6}, false); }}},
      {"choice_k18_arr3x4_axis1_5",
       {[] {
         return random::choice(key(18), reshape(arange(12, DType::kF32), {3, 4}), {5}, true,
                               std::nullopt, 1);
       }}},
      {"choice_k19_arr3x4_norep_axis1_3",
       {[] {
         return random::choice(key(19), reshape(arange(12, DType::kF32), {3, 4}), {3}, false,
                               std::nullopt, 1);
       }}},
      {"choice_k20_n4_p_2x5",
       {[] { return random::choice(key(20), 4, {2, 5}, true, f32s({0.1f, 0.2f, 0.3f, 0.4f})); }}},
      {"choice_k21_n4_p_norep_3",
       {[] { return random::choice(key(21), 4, {3}, false, f32s({0.1f, 0.2f, 0.3f, 0.4f})); }}},
      {"gamma_k30_a2.5_f32_16", {[] { return random::gamma(key(30), 2.5, Shape{16}); }}},
      {"gamma_k31_avec_f32_2x4",
       {[] { return random::gamma(key(31), f32s({0.3f, 1.0f, 4.0f, 50.0f}), Shape{2, 4}); }}},
      {"gamma_k32_a0.5_f32_16", {[] { return random::gamma(key(32), 0.5, Shape{16}); }}},
      {"loggamma_k33_a0.2_f32_16", {[] { return random::loggamma(key(33), 0.2, Shape{16}); }}},
      {"loggamma_k34_avec_f32_4",
       {[] { return random::loggamma(key(34), f32s({0.01f, 0.7f, 1.0f, 9.0f})); }}},
      {"beta_k35_a2_b3_f32_16", {[] { return random::beta(key(35), 2.0, 3.0, Shape{16}); }}},
      {"dirichlet_k36_alpha3_f32_4x3",
       {[] { return random::dirichlet(key(36), f32s({0.5f, 1.0f, 2.0f}), Shape{4}); }}},
      {"chisquare_k37_df3_f32_16", {[] { return random::chisquare(key(37), 3.0, Shape{16}); }}},
      {"f_k38_5_7_f32_16", {[] { return random::f(key(38), 5.0, 7.0, Shape{16}); }}},
      {"t_k39_df4_f32_16", {[] { return random::t(key(39), 4.0, Shape{16}); }}},
      {"generalized_normal_k40_p1.5_f32_16",
       {[] { return random::generalized_normal(key(40), 1.5, {16}); }}},
      {"ball_k41_d3_p2_f32_4x3", {[] { return random::ball(key(41), 3, 2.0, {4}); }}},
      // Counts (integer-valued): bit for bit; a last-bit difference in the float steps could
      // only show by flipping an accept test (not seen).
      {"poisson_k70_lam3_i32_16", {[] { return random::poisson(key(70), 3.0, Shape{16}); }}},
      {"poisson_k71_lamvec_i32_2x8",
       {[] {
         return random::poisson(key(71), f32s({0, 0.5f, 3, 9.9f, 10, 25, 1000, 1e4f}), Shape{2, 8});
       }}},
      {"poisson_k72_lam50_i32_16", {[] { return random::poisson(key(72), 50.0, Shape{16}); }}},
      {"binomial_k80_n10_p0.3_f32_16",
       {[] { return random::binomial(key(80), 10.0, 0.3, Shape{16}); }}},
      {"binomial_k81_n100_p0.4_f32_16",
       {[] { return random::binomial(key(81), 100.0, 0.4, Shape{16}); }}},
      {"binomial_k82_n60_p0.8_f32_16",
       {[] { return random::binomial(key(82), 60.0, 0.8, Shape{16}); }}},
      {"binomial_k83_vec_f32_8",
       {[] {
         return random::binomial(key(83), f32s({5, 0, 20, 1000, INFINITY, -1, 100, 7.5f}),
                                 f32s({0.3f, 0.5f, 0.9f, 0.4f, 0.5f, 0.5f, 1.5f, 0}));
       }}},
      {"multinomial_k90_n20_p3_f32",
       {[] { return random::multinomial(key(90), 20.0, f32s({0.2f, 0.3f, 0.5f})); }}},
      {"multinomial_k91_nvec_p2x4_f32",
       {[] {
         return random::multinomial(
             key(91), f32s({10, 300}),
             array<float>({0.1f, 0.2f, 0.3f, 0.4f, 0.5f, 0.0f, 0.25f, 0.25f}, Shape{2, 4}));
       }}},
      {"multinomial_k92_shape3x3_f32",
       {[] { return random::multinomial(key(92), 50.0, f32s({0.6f, 0.3f, 0.1f}), Shape{3, 3}); }}},
      // lgamma / digamma: XLA's formulas op for op (with its FMA), bit for bit here.
      {"lgamma_points_f32", {[] { return lgamma(f32s(kLgammaPoints)); }}},
      {"digamma_points_f32", {[] { return digamma(f32s(kLgammaPoints)); }}},
      {"lgamma_kp1_f32_200",
       {[] { return lgamma(arange(200, DType::kF32) + scalar(1, DType::kF32)); }}},
      // d sample / d a: random_gamma_grad at graft's samples (which carry kRsqrt's few ulp).
      {"grad_gamma_k31_avec_f32_6",
       {[] {
          return grad([](const Array& a) { return sum(random::gamma(key(31), a)); })(
              f32s({0.3f, 1.0f, 2.5f, 4.0f, 50.0f, 0.05f}));
        }}},
      {"grad_loggamma_k34_avec_f32_6",
       {[] {
          return grad([](const Array& a) { return sum(random::loggamma(key(34), a)); })(
              f32s({0.3f, 1.0f, 2.5f, 4.0f, 50.0f, 0.05f}));
        }}},
      {"random_gamma_grad_points_f32",
       {[] {
          return random_gamma_grad(f32s({0.5f, 2.0f, 1.0f, 0.7f, 3.0f, 5.0f, 45.0f, 0.1f}),
                                   f32s({0.1f, 0.5f, 1.0f, 2.0f, 3.0f, 7.5f, 40.0f, 0.02f}));
        }}},
      // JAX differentiates lgamma with digamma, and so does graft (a custom jvp).
      {"grad_lgamma_points_f32",
       {[] { return grad([](const Array& x) { return sum(lgamma(x)); })(grad_points()); }}},
  };
  return *m;
}

// Distance of two f32 bit patterns on the monotone integer line.
int64_t ulp_distance(uint32_t a, uint32_t b) {
  auto line = [](uint32_t u) -> int64_t {
    return (u & 0x80000000u) ? -static_cast<int64_t>(u & 0x7FFFFFFFu) : static_cast<int64_t>(u);
  };
  int64_t d = line(a) - line(b);
  return d < 0 ? -d : d;
}

TEST(RandomDistVectors, FileIsThereAndComplete) {
  ASSERT_GE(vectors().size(), cases().size()) << "random_dist_vectors.txt not found or short";
  for (const auto& [name, g] : vectors()) EXPECT_TRUE(cases().count(name)) << name;
}

TEST(RandomDistVectors, EveryCaseMatchesJax) {
  for (const auto& [name, c] : cases()) {
    SCOPED_TRACE(name);
    auto it = vectors().find(name);
    ASSERT_NE(it, vectors().end());
    const Golden& g = it->second;
    const Allowed a = allowed_for(name);
    Array out = c.fn();
    EXPECT_EQ(out.dtype(), graft_dtype(g.dtype));
    ASSERT_EQ(shape_str(out.shape()), shape_str(g.shape));
    std::vector<uint64_t> got = bits_of(out, golden_bytes(g.dtype));
    ASSERT_EQ(got.size(), g.bits.size());
    if (a.abs > 0) {
      ASSERT_EQ(g.dtype, "float32");
      std::vector<float> vals = out.to_vector<float>();
      double worst = 0;
      for (size_t i = 0; i < vals.size(); ++i) {
        float want;
        const auto w = static_cast<uint32_t>(g.bits[i]);
        std::memcpy(&want, &w, sizeof want);
        const double scale = a.relative ? std::max(1.0, std::fabs(double(want))) : 1.0;
        const double err = std::fabs(double(vals[i]) - double(want)) / scale;
        worst = std::max(worst, err);
        EXPECT_LE(err, a.abs) << "element " << i << ": got " << vals[i] << ", JAX " << want;
      }
      std::printf("%-45s worst %.3g %s (allowed %.3g)\n", name.c_str(), worst,
                  a.relative ? "relative" : "abs", a.abs);
      continue;
    }
    int64_t worst = 0;
    for (size_t i = 0; i < got.size(); ++i) {
      int64_t d = g.dtype == "float32" ? ulp_distance(static_cast<uint32_t>(got[i]),
                                                      static_cast<uint32_t>(g.bits[i]))
                                       : (got[i] == g.bits[i] ? 0 : INT64_MAX);
      worst = std::max(worst, d);
      EXPECT_LE(d, a.ulp) << "element " << i << std::hex << ": got 0x" << got[i] << ", JAX 0x"
                          << g.bits[i];
    }
    std::printf("%-45s worst %lld ulp (allowed %lld)\n", name.c_str(),
                static_cast<long long>(worst), static_cast<long long>(a.ulp));
  }
}

// How each function is compared, as docs/arrays-and-ops.md's table: its cases (JAX's keys),
// and bit for bit or its allowance. Every allowance names a function that has cases.
std::string allowance_table() {
  std::map<std::string, std::vector<std::string>> by_function;
  for (const auto& [name, c] : cases()) by_function[function_of(name)].push_back(name);
  std::ostringstream t;
  t << "| function | cases | compared with JAX's values | why not bit for bit |\n"
       "| --- | --- | --- | --- |\n";
  for (const auto& [fn, names] : by_function) {
    const Allowed a = allowed_for(names.front());
    t << "| `" << fn << "` | " << names.size() << " | ";
    if (a.abs > 0) {
      t << "within " << a.abs << (a.relative ? " x max(1, \\|x\\|)" : " absolute");
    } else if (a.ulp > 0) {
      t << "within " << a.ulp << " ulp";
    } else {
      t << "bit for bit";
    }
    t << " | " << a.why << " |\n";
  }
  return t.str();
}

TEST(RandomDistVectors, TheDocsTableIsTheTestsAllowances) {
  std::set<std::string> functions;
  for (const auto& [name, c] : cases()) functions.insert(function_of(name));
  for (const auto& [fn, a] : allowed()) {
    EXPECT_TRUE(functions.count(fn)) << fn << ": an allowance for a function with no cases";
    EXPECT_TRUE(a.ulp > 0 || a.abs > 0) << fn << ": an allowance of nothing";
  }
  const std::string table = allowance_table();
  std::printf("%s", table.c_str());
  EXPECT_EQ(graft::testing::doc_block("docs/arrays-and-ops.md", "random_dist_test"), table)
      << "docs/arrays-and-ops.md's block between the random_dist_test markers is not the "
         "table above";
}

// ---- moments of large samples (a check independent of the vectors): the sample mean and
// variance within 5 standard errors of the distribution's (and for the mean of a variance,
// a loose 10% bound).
struct Moments {
  double mean, var;
};

Moments moments_of(const Array& x) {
  auto v = astype(x, DType::kF64).to_vector<double>();
  double m = 0, s = 0;
  for (double e : v) m += e;
  m /= static_cast<double>(v.size());
  for (double e : v) s += (e - m) * (e - m);
  return {m, s / static_cast<double>(v.size() - 1)};
}

void expect_moments(const char* name, const Array& x, double mean, double var) {
  SCOPED_TRACE(name);
  Moments got = moments_of(x);
  double se = std::sqrt(var / static_cast<double>(x.size()));
  EXPECT_NEAR(got.mean, mean, 5 * se) << "mean";
  EXPECT_NEAR(got.var, var, 0.1 * var) << "variance";
}

TEST(RandomDistMoments, MatchTheDistributions) {
  const Shape s{40000};
  const double pi = 3.14159265358979323846;
  expect_moments("exponential", random::exponential(key(101), s), 1, 1);
  expect_moments("laplace", random::laplace(key(102), s), 0, 2);
  expect_moments("logistic", random::logistic(key(103), s), 0, pi * pi / 3);
  expect_moments("rayleigh", random::rayleigh(key(104), 2.0, s), 2 * std::sqrt(pi / 2),
                 (4 - pi) / 2 * 4);
  expect_moments("weibull k=1 (exponential of scale 2)",
                 random::weibull_min(key(105), 2.0, 1.0, s), 2, 4);
  expect_moments("pareto b=5", random::pareto(key(106), 5.0, s), 5.0 / 4, 5.0 / (16 * 3));
  expect_moments("maxwell", random::maxwell(key(107), s), 2 * std::sqrt(2 / pi),
                 (3 * pi - 8) / pi);
  expect_moments("lognormal", random::lognormal(key(108), 0.5, s), std::exp(0.125),
                 (std::exp(0.25) - 1) * std::exp(0.25));
  expect_moments("triangular", random::triangular(key(109), 0.0, 1.0, 3.0, s), 4.0 / 3,
                 (0 + 1 + 9 - 0 - 0 - 3) / 18.0);
  expect_moments("wald", random::wald(key(110), 1.5, s), 1.5, 1.5 * 1.5 * 1.5);
  expect_moments("rademacher", random::rademacher(key(111), s, DType::kF32), 0, 1);
  expect_moments("geometric", random::geometric(key(112), 0.25, s), 4, 0.75 / 0.0625);
  expect_moments("gamma a=2.5", random::gamma(key(113), 2.5, s), 2.5, 2.5);
  expect_moments("gamma a=0.4", random::gamma(key(114), 0.4, s), 0.4, 0.4);
  expect_moments("beta", random::beta(key(115), 2.0, 3.0, s), 0.4, 6.0 / (25 * 6));
  expect_moments("chisquare", random::chisquare(key(116), 3.0, s), 3, 6);
  expect_moments("t df=6", random::t(key(117), 6.0, s), 0, 1.5);
  expect_moments("f", random::f(key(118), 5.0, 10.0, s), 10.0 / 8,
                 2 * 100.0 * 13 / (5 * 64 * 6));
  expect_moments("choice p", astype(random::choice(key(119), 4, s, true,
                                                   f32s({0.1f, 0.2f, 0.3f, 0.4f})), DType::kF32),
                 2.0, 1.0);
  expect_moments("poisson lam=4 (Knuth)", random::poisson(key(122), 4.0, s), 4, 4);
  expect_moments("poisson lam=30 (rejection)", random::poisson(key(123), 30.0, s), 30, 30);
  expect_moments("binomial n=20 p=0.3 (inversion)", random::binomial(key(124), 20.0, 0.3, s),
                 6, 4.2);
  expect_moments("binomial n=200 p=0.6 (BTRS, flipped)",
                 random::binomial(key(125), 200.0, 0.6, s), 120, 48);
  // multinomial: each row sums to n; an outcome's count is binomial(n, p_i).
  Array mn = random::multinomial(key(126), 40.0, f32s({0.1f, 0.6f, 0.3f}), Shape{20000, 3});
  for (float r : sum(mn, {-1}).to_vector<float>()) ASSERT_EQ(r, 40.0f);
  expect_moments("multinomial outcome 1", reshape(slice(mn, {0, 1}, {20000, 2}), {20000}),
                 24, 40 * 0.6 * 0.4);
  // dirichlet rows sum to 1 and have mean alpha / sum(alpha).
  Array dr = random::dirichlet(key(120), f32s({1.0f, 2.0f, 5.0f}), Shape{20000});
  auto rows = sum(dr, {-1}).to_vector<float>();
  for (float r : rows) ASSERT_NEAR(r, 1.0f, 1e-5f);
  auto col = moments_of(reshape(slice(dr, {0, 2}, {20000, 3}), {20000}));
  EXPECT_NEAR(col.mean, 5.0 / 8, 0.01);
  // ball: inside the unit ball.
  auto b = random::ball(key(121), 3, 2.0, {2000});
  auto norms = sqrt(sum(b * b, {-1})).to_vector<float>();
  for (float r : norms) ASSERT_LE(r, 1.0f + 1e-6f);
}

TEST(RandomDistMoments, ChoiceWithoutReplacementIsDistinct) {
  auto idx = random::choice(key(7), 50, {50}, false).to_vector<int32_t>();
  std::sort(idx.begin(), idx.end());
  for (int i = 0; i < 50; ++i) EXPECT_EQ(idx[i], i);
  auto w = random::choice(key(8), 6, {6}, false, f32s({1, 1, 1, 1, 1, 5})).to_vector<int32_t>();
  std::sort(w.begin(), w.end());
  for (int i = 0; i < 6; ++i) EXPECT_EQ(w[i], i);
}

// The gamma loops are while_loop primitives: jit and vmap give the eager values.
TEST(RandomDistTransforms, GammaUnderJitAndVmap) {
  Array a = f32s({0.3f, 1.0f, 4.0f, 50.0f});
  auto eager = random::gamma(key(31), a).to_vector<float>();
  auto jitted = jit([](const Array& k, const Array& x) { return random::gamma(k, x); })(key(31), a);
  EXPECT_EQ(jitted.to_vector<float>(), eager);
  // vmap over a with one key: element i is gamma(key, a[i]) of a scalar a (one split each),
  // so the batched nested loops must give each element's unbatched draw.
  Array keys = random::split(key(32), 4);
  auto batched = vmap([](const Array& k, const Array& x) { return random::loggamma(k, x); })(
      keys, a);
  auto got = batched.to_vector<float>();
  for (int64_t i = 0; i < 4; ++i) {
    Array ki = reshape(slice(keys, {i, 0}, {i + 1, 2}), {2});
    Array ai = reshape(slice(a, {i}, {i + 1}), {});
    EXPECT_EQ(got[i], random::loggamma(ki, ai).item<float>()) << i;
  }
}

// poisson's and binomial's loops are while_loop primitives too: jit gives the eager values.
TEST(RandomDistTransforms, CountsUnderJit) {
  Array lam = f32s({0.5f, 3.0f, 12.0f, 80.0f});
  auto eager = random::poisson(key(73), lam).to_vector<int32_t>();
  auto jitted = jit([](const Array& k, const Array& l) { return random::poisson(k, l); })(key(73), lam);
  EXPECT_EQ(jitted.to_vector<int32_t>(), eager);
  Array n = f32s({4, 30, 500, 9});
  auto b_eager = random::binomial(key(84), n, 0.35).to_vector<float>();
  auto b_jit = jit([](const Array& k, const Array& c) { return random::binomial(k, c, 0.35); })(
      key(84), n);
  EXPECT_EQ(b_jit.to_vector<float>(), b_eager);
  // vmap over keys: each row is the unbatched draw for its key (the batched loop keeps a
  // row's carry once its own condition is false, as JAX's).
  Array keys = random::split(key(74), 3);
  Array rows = vmap([&](const Array& k) { return random::poisson(k, lam); })(keys);
  auto got = rows.to_vector<int32_t>();
  for (int64_t i = 0; i < 3; ++i) {
    Array ki = reshape(slice(keys, {i, 0}, {i + 1, 2}), {2});
    auto want = random::poisson(ki, lam).to_vector<int32_t>();
    for (int64_t j = 0; j < 4; ++j) EXPECT_EQ(got[i * 4 + j], want[j]) << i << "," << j;
  }
}

// ---- parameter errors: graft::Error naming the function
template <typename F>
void expect_error(const char* op, F f) {
  try {
    f();
    ADD_FAILURE() << op << ": no error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).rfind(std::string("[") + op + "]", 0), 0u) << e.what();
  }
}

TEST(RandomDistErrors, NameTheFunction) {
  Array bad_key = array<float>({1, 2});
  expect_error("exponential", [&] { random::exponential(bad_key, {3}); });
  expect_error("laplace", [] { random::laplace(key(0), {3}, DType::kI32); });
  expect_error("rayleigh", [] { random::rayleigh(key(0), f32s({1, 2}), Shape{3}); });
  expect_error("pareto", [] { random::pareto(key(0), f32s({1, 2, 3}), Shape{2, 2}); });
  expect_error("triangular", [] { random::triangular(key(0), 0.0, Array(), 1.0); });
  expect_error("geometric", [] { random::geometric(key(0), 0.5, Shape{2}, DType::kF32); });
  expect_error("choice", [] { random::choice(key(0), 3, {5}, false); });
  expect_error("choice", [] { random::choice(key(0), 0, {2}); });
  expect_error("choice", [] { random::choice(key(0), 4, {2}, true, f32s({0.5f, 0.5f})); });
  expect_error("gamma", [] { random::gamma(key(0), f32s({1, 2}), Shape{3}); });
  expect_error("gamma", [] { random::gamma(key(0), 1.0, std::nullopt, DType::kI32); });
  expect_error("loggamma", [&] { random::loggamma(bad_key, 1.0); });
  expect_error("dirichlet", [] { random::dirichlet(key(0), Array(1.0f)); });
  expect_error("beta", [] { random::beta(key(0), f32s({1, 2}), f32s({1, 2, 3})); });
  expect_error("ball", [] { random::ball(key(0), -1); });
  expect_error("poisson", [] { random::poisson(key(0), 3.0, Shape{2}, DType::kF32); });
  expect_error("poisson", [] { random::poisson(key(0), f32s({1, 2}), Shape{3}); });
  expect_error("binomial", [] { random::binomial(key(0), 5.0, 0.5, Shape{2}, DType::kI32); });
  expect_error("binomial", [] { random::binomial(key(0), f32s({1, 2}), f32s({0.1f, 0.2f, 0.3f})); });
  expect_error("multinomial", [] { random::multinomial(key(0), 5.0, Array(0.5f)); });
  expect_error("multinomial", [] {
    random::multinomial(key(0), f32s({1, 2, 3}), array<float>({0.5f, 0.5f, 0.2f, 0.8f}, Shape{2, 2}));
  });
  expect_error("wrap_key_data", [] { random::wrap_key_data(array<uint32_t>({1, 2, 3})); });
  expect_error("key_data", [] { random::key_data(array<float>({1, 2})); });
  expect_error("orthogonal", [] { random::orthogonal(key(0), -1); });
  expect_error("orthogonal", [] { random::orthogonal(key(0), 3, {}, DType::kI32); });
  expect_error("multivariate_normal", [] {
    random::multivariate_normal(key(0), mvn_mean(), ones({2, 2}));
  });
  expect_error("multivariate_normal", [] {
    random::multivariate_normal(key(0), Array(1.0f), mvn_cov());
  });
  expect_error("multivariate_normal", [] {
    random::multivariate_normal(key(0), mvn_mean(), mvn_cov(), std::nullopt, std::nullopt,
                                "lu");
  });
  expect_error("multivariate_normal", [] {
    random::multivariate_normal(key(0), zeros({2, 3}), mvn_cov(), Shape{4});
  });
}

// orthogonal's rows or columns are orthonormal; multivariate_normal's sample mean and
// covariance approach the parameters (40,000 draws, each method).
TEST(RandomDistLinalg, OrthonormalAndCovariance) {
  for (auto [n, m] : {std::pair<int64_t, int64_t>{4, 4}, {3, 6}, {6, 3}}) {
    Array q = random::orthogonal(key(61), n, {2}, DType::kF64, m);
    Array g = n <= m ? matmul(q, matrix_transpose(q)) : matmul(matrix_transpose(q), q);
    const int64_t k = std::min(n, m);
    auto v = g.to_vector<double>();
    for (int64_t b = 0; b < 2; ++b) {
      for (int64_t i = 0; i < k; ++i) {
        for (int64_t j = 0; j < k; ++j) {
          EXPECT_NEAR(v[(b * k + i) * k + j], i == j ? 1.0 : 0.0, 1e-12) << n << "x" << m;
        }
      }
    }
  }
  const std::vector<double> mean = {1.0, -2.0, 0.5};
  const std::vector<double> cov = {2.0, 0.3, -0.2, 0.3, 1.0, 0.4, -0.2, 0.4, 1.5};
  for (const char* method : {"cholesky", "svd", "eigh"}) {
    SCOPED_TRACE(method);
    const int64_t N = 40000;
    auto x = astype(random::multivariate_normal(key(62), mvn_mean(), mvn_cov(), Shape{N},
                                                std::nullopt, method),
                    DType::kF64)
                 .to_vector<double>();
    for (int i = 0; i < 3; ++i) {
      double mi = 0;
      for (int64_t r = 0; r < N; ++r) mi += x[r * 3 + i];
      mi /= N;
      EXPECT_NEAR(mi, mean[i], 5 * std::sqrt(cov[i * 4] / N));
      for (int j = 0; j < 3; ++j) {
        double mj = 0, c = 0;
        for (int64_t r = 0; r < N; ++r) mj += x[r * 3 + j];
        mj /= N;
        for (int64_t r = 0; r < N; ++r) c += (x[r * 3 + i] - mi) * (x[r * 3 + j] - mj);
        EXPECT_NEAR(c / (N - 1), cov[i * 3 + j], 0.05) << i << "," << j;
      }
    }
  }
}

// lgamma's derivative is finite-difference close to the formula's (f64), and gammaln promotes
// integers to f32.
TEST(LaxSpecial, GradientsAndPromotion) {
  auto f = [](const Array& x) { return sum(lgamma(x)); };
  Array x = array<double>({0.3, 1.7, 4.5, -1.3});
  auto g = grad(f)(x).to_vector<double>();
  auto dg = digamma(x).to_vector<double>();
  auto xs = x.to_vector<double>();
  for (size_t i = 0; i < xs.size(); ++i) {
    const double h = 1e-6;
    double fd = (lgamma(Array(xs[i] + h)).item<double>() - lgamma(Array(xs[i] - h)).item<double>()) /
                (2 * h);
    EXPECT_NEAR(g[i], fd, 1e-6) << xs[i];
    EXPECT_NEAR(g[i], dg[i], 1e-6) << xs[i];
  }
  Array gi = scipy::special::gammaln(array<int32_t>({1, 2, 5}));
  EXPECT_EQ(gi.dtype(), DType::kF32);
  auto gv = gi.to_vector<float>();
  EXPECT_NEAR(gv[2], std::log(24.0f), 1e-5f);
  EXPECT_EQ(lgamma(array<float>({0.5f}, Shape{1})).dtype(), DType::kF32);
  expect_error("lgamma", [] { lgamma(array<int32_t>({1})); });
  expect_error("digamma", [] { digamma(Array()); });
}

// random_gamma_grad is the implicit derivative that keeps the CDF P(a, x) fixed:
// -(dP/da) / (dP/dx) (not the slope of one Marsaglia-Tsang sample in a, which differs).
// Checked against P integrated by Simpson's rule (f64), dP/da by central differences,
// dP/dx = x^(a-1) e^-x / Gamma(a).
double lower_gamma_cdf(double a, double x) {
  // t = u^2: the integrand 2 u^(2a-1) e^(-u^2) is smooth at 0 for a >= 1.
  const int n = 20000;
  const double end = std::sqrt(x), h = end / n;
  auto f = [a](double u) { return u == 0 ? 0.0 : 2 * std::exp((2 * a - 1) * std::log(u) - u * u); };
  double acc = f(0) + f(end);
  for (int i = 1; i < n; ++i) acc += (i % 2 ? 4 : 2) * f(i * h);
  return acc * h / 3 / std::exp(std::lgamma(a));
}

TEST(LaxSpecial, RandomGammaGradIsTheImplicitDerivative) {
  const std::vector<std::pair<double, double>> points = {{1.0, 0.5}, {2.5, 1.2}, {3.0, 6.0},
                                                         {7.0, 4.0}, {1.5, 3.0}};
  for (auto [a, x] : points) {
    SCOPED_TRACE(std::to_string(a) + ", " + std::to_string(x));
    const double h = 1e-5;
    double dP_da = (lower_gamma_cdf(a + h, x) - lower_gamma_cdf(a - h, x)) / (2 * h);
    double dP_dx = std::exp((a - 1) * std::log(x) - x - std::lgamma(a));
    double want = -dP_da / dP_dx;
    double got = random_gamma_grad(Array(a), Array(x)).item<double>();
    EXPECT_NEAR(got, want, 1e-6 * std::max(1.0, std::fabs(want)));
  }
  expect_error("random_gamma_grad", [] { random_gamma_grad(f32s({1}), array<double>({1.0})); });
}

}  // namespace
}  // namespace graft
