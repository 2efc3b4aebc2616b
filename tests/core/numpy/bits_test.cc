// jax.numpy's integer / bit functions, float decomposition, special functions and dtype queries
// (core/numpy/bits.h, core/numpy/special.h, core/dtype/dtype_info.h) against JAX.
//
// How the vectors were made: tests/core/testdata/jnp_bits_vectors.txt was written by
// tools/make_jnp_bits_vectors.py, run with JAX / jaxlib 0.10.2 on CPU (x64 off, then on for the
// float64 / int64 cases and the dtype tables): each case's inputs, JAX's outputs and, for the
// differentiable cases, jax.grad of sum(out0 * ct) with ct = 1 + 0.25 * arange(out0.size).
// Each case below repeats the JAX call of the same name. Checked: shapes and dtypes exactly;
// integer and bit results, frexp / ldexp / modf / nextafter exactly (bit for bit, NaN matching
// NaN); i0, kaiser, unwrap, gradient to 2e-6 relative + 1e-6 (f64: 1e-12 + 5e-13); gradients to 1e-5 + 2e-5
// relative; jit and vmap against eager; the dtype tables entry by entry; the error cases.
#include <cmath>
#include <complex>
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

using jnp_vectors::Vec;
using Fn = std::function<std::vector<Array>(const std::vector<Array>&)>;

const std::map<std::string, Vec>& vecs() {
  static const auto* v = [] {
    auto* m = new std::map<std::string, Vec>;
    jnp_vectors::load_file("tests/core/testdata/jnp_bits_vectors.txt", *m);
    return m;
  }();
  return *v;
}
bool has(const std::string& key) { return vecs().count(key) > 0; }

// The dtypes the tables were recorded over, in their index order (graft's nine real dtypes
// before i8 / i16 / u16 / u64, which tests/core/int_dtypes_test.cc checks).
constexpr int kNumRecorded = 9;
constexpr DType kRecorded[kNumRecorded] = {DType::kBool, DType::kU8,   DType::kU32,
                                           DType::kI32,  DType::kI64,  DType::kF16,
                                           DType::kBF16, DType::kF32,  DType::kF64};

// numpy's names of graft's dtypes.
const char* numpy_name(DType d) {
  static const char* kNames[kNumRecorded] = {"bool",    "uint8",    "uint32",  "int32",  "int64",
                                             "float16", "bfloat16", "float32", "float64"};
  for (int i = 0; i < kNumRecorded; ++i) {
    if (kRecorded[i] == d) return kNames[i];
  }
  switch (d) {
    case DType::kI8:
      return "int8";
    case DType::kI16:
      return "int16";
    case DType::kU16:
      return "uint16";
    case DType::kU64:
      return "uint64";
    case DType::kC64:
      return "complex64";
    case DType::kC128:
      return "complex128";
    default:
      return "?";
  }
}
DType dtype_named(const std::string& name) {
  for (DType d : kRecorded) {
    if (name == numpy_name(d)) return d;
  }
  ADD_FAILURE() << "unknown dtype " << name;
  return DType::kF32;
}

Array vec_array(const Vec& v) { return astype(array(v.values, v.shape), dtype_named(v.dtype)); }

std::vector<Array> inputs(const std::string& name) {
  std::vector<Array> xs;
  for (int k = 0; has(name + ".in" + std::to_string(k)); ++k) {
    xs.push_back(vec_array(vecs().at(name + ".in" + std::to_string(k))));
  }
  return xs;
}

// Within abs_tol + rel |want|; rel 0: exactly, the sign of zero included. NaN matches NaN.
void expect_matches(const Array& got, const std::string& key, double rel, double abs_tol = 0) {
  SCOPED_TRACE(key);
  ASSERT_TRUE(has(key)) << "no vector " << key;
  const Vec& want = vecs().at(key);
  ASSERT_EQ(got.shape(), want.shape);
  EXPECT_STREQ(numpy_name(got.dtype()), want.dtype.c_str());
  std::vector<double> g = astype(got, DType::kF64).to_vector<double>();
  ASSERT_EQ(g.size(), want.values.size());
  // Exact: the recorded digits rounded to got's dtype (9 significant digits name an f32).
  std::vector<double> wv =
      rel == 0 ? astype(astype(array(want.values, want.shape), got.dtype()), DType::kF64)
                     .to_vector<double>()
               : want.values;
  int bad = 0;
  for (size_t i = 0; i < g.size() && bad < 5; ++i) {
    const double w = wv[i];
    const bool ok = std::isnan(w)   ? std::isnan(g[i])
                    : std::isinf(w) ? g[i] == w
                    : rel == 0      ? g[i] == w && std::signbit(g[i]) == std::signbit(w)
                                    : std::fabs(g[i] - w) <= abs_tol + rel * std::fabs(w);
    if (!ok) {
      ADD_FAILURE() << "at " << i << ": got " << g[i] << ", want " << w;
      ++bad;
    }
  }
}

// Values recorded with 9 significant digits are exact for f32 and narrower; f64 with 17.
double value_tolerance(const std::string& name, DType d) {
  for (const char* approx : {"i0", "kaiser", "unwrap", "gradient"}) {
    if (name.rfind(approx, 0) == 0) return d == DType::kF64 ? 1e-12 : 2e-6;
  }
  return 0;
}

std::vector<Array> one(const Array& a) { return {a}; }
std::vector<Array> two(const std::pair<Array, Array>& p) { return {p.first, p.second}; }

// Each case: the graft call matching tools/make_jnp_bits_vectors.py's case of that name.
const std::map<std::string, Fn>& cases() {
  static const auto* c = new std::map<std::string, Fn>{
      // integers and bits
      {"gcd", [](auto& x) { return one(gcd(x[0], x[1])); }},
      {"gcd_bcast", [](auto& x) { return one(gcd(x[0], scalar(6, DType::kI32))); }},
      {"gcd_u8", [](auto& x) { return one(gcd(x[0], x[1])); }},
      {"gcd_i64", [](auto& x) { return one(gcd(x[0], x[1])); }},
      {"lcm", [](auto& x) { return one(lcm(x[0], x[1])); }},
      {"lcm_u32", [](auto& x) { return one(lcm(x[0], x[1])); }},
      {"bitwise_count_i32", [](auto& x) { return one(bitwise_count(x[0])); }},
      {"bitwise_count_u32", [](auto& x) { return one(bitwise_count(x[0])); }},
      {"bitwise_count_u8", [](auto& x) { return one(bitwise_count(x[0])); }},
      {"bitwise_count_bool", [](auto& x) { return one(bitwise_count(x[0])); }},
      {"bitwise_count_i64", [](auto& x) { return one(bitwise_count(x[0])); }},
      {"right_shift", [](auto& x) { return one(right_shift(x[0], x[1])); }},
      {"right_shift_u8", [](auto& x) { return one(right_shift(x[0], x[1])); }},
      {"right_shift_u32", [](auto& x) { return one(right_shift(x[0], x[1])); }},
      {"right_shift_i64", [](auto& x) { return one(right_shift(x[0], x[1])); }},
      {"right_shift_scalar", [](auto& x) { return one(right_shift(x[0], Array(2))); }},
      {"bitwise_right_shift", [](auto& x) { return one(bitwise_right_shift(x[0], x[1])); }},
      {"packbits", [](auto& x) { return one(packbits(x[0])); }},
      {"packbits_axis1", [](auto& x) { return one(packbits(x[0], 1)); }},
      {"packbits_little", [](auto& x) { return one(packbits(x[0], 0, "little")); }},
      {"packbits_bool", [](auto& x) { return one(packbits(x[0], -1)); }},
      {"unpackbits", [](auto& x) { return one(unpackbits(x[0])); }},
      {"unpackbits_axis", [](auto& x) { return one(unpackbits(x[0], 0, 11, "little")); }},
      {"unpackbits_count", [](auto& x) { return one(unpackbits(x[0], 1, 5)); }},
      // frexp / ldexp / modf / nextafter
      {"frexp", [](auto& x) { return two(frexp(x[0])); }},
      {"frexp_grad", [](auto& x) { return two(frexp(x[0])); }},
      {"frexp_f16", [](auto& x) { return two(frexp(x[0])); }},
      {"frexp_bf16", [](auto& x) { return two(frexp(x[0])); }},
      {"frexp_int", [](auto& x) { return two(frexp(x[0])); }},
      {"frexp_f64", [](auto& x) { return two(frexp(x[0])); }},
      {"ldexp", [](auto& x) { return one(ldexp(x[0], x[1])); }},
      {"ldexp_grad", [](auto& x) { return one(ldexp(x[0], x[1])); }},
      {"ldexp_f16", [](auto& x) { return one(ldexp(x[0], x[1])); }},
      {"ldexp_int", [](auto& x) { return one(ldexp(x[0], x[1])); }},
      {"ldexp_f64", [](auto& x) { return one(ldexp(x[0], x[1])); }},
      {"modf", [](auto& x) { return two(modf(x[0])); }},
      {"modf_grad", [](auto& x) { return two(modf(x[0])); }},
      {"modf_int", [](auto& x) { return two(modf(x[0])); }},
      {"nextafter", [](auto& x) { return one(nextafter(x[0], x[1])); }},
      {"nextafter_f16", [](auto& x) { return one(nextafter(x[0], x[1])); }},
      {"nextafter_bf16", [](auto& x) { return one(nextafter(x[0], x[1])); }},
      {"nextafter_f64", [](auto& x) { return one(nextafter(x[0], x[1])); }},
      // special functions
      {"i0", [](auto& x) { return one(i0(x[0])); }},
      {"i0_int", [](auto& x) { return one(i0(x[0])); }},
      {"i0_f64", [](auto& x) { return one(i0(x[0])); }},
      {"kaiser", [](auto&) { return one(kaiser(7, 4.0)); }},
      {"kaiser_even", [](auto&) { return one(kaiser(6, 8.6)); }},
      {"kaiser_one", [](auto&) { return one(kaiser(1, 3.0)); }},
      {"unwrap", [](auto& x) { return one(unwrap(x[0])); }},
      {"unwrap_2d", [](auto& x) { return one(unwrap(x[0] * 3.0, std::nullopt, 0)); }},
      {"unwrap_period", [](auto& x) { return one(unwrap(x[0], 2.0, -1, Array(6.0))); }},
      {"unwrap_int", [](auto& x) { return one(unwrap(x[0], std::nullopt, -1, Array(10))); }},
      {"gradient", [](auto& x) { return gradient(x[0]); }},
      {"gradient_dx", [](auto& x) { return gradient(x[0], {Array(0.5)}); }},
      {"gradient_x", [](auto& x) { return gradient(x[0], {x[1]}); }},
      {"gradient_2d", [](auto& x) { return gradient(x[0]); }},
      {"gradient_2d_spacing",
       [](auto& x) {
         return gradient(x[0], {Array(2.0), array<float>({0.0f, 1.0f, 1.5f, 3.0f})},
                         std::vector<int64_t>{0, 1});
       }},
      {"gradient_axis", [](auto& x) { return gradient(x[0], {}, std::vector<int64_t>{-1}); }},
      {"gradient_int", [](auto& x) { return gradient(x[0]); }},
  };
  return *c;
}

TEST(NumpyBitsVectors, EveryRecordedCaseHasACall) {
  for (const auto& [key, v] : vecs()) {
    if (key.rfind("dtype.", 0) == 0) continue;  // the tables, checked below
    const std::string name = key.substr(0, key.rfind('.'));
    EXPECT_TRUE(cases().count(name)) << "no C++ case for " << name;
  }
  EXPECT_GE(cases().size(), 59u);
}

TEST(NumpyBitsVectors, ValuesMatchJax) {
  for (const auto& [name, fn] : cases()) {
    SCOPED_TRACE(name);
    std::vector<Array> out;
    ASSERT_NO_THROW(out = fn(inputs(name)));
    for (size_t k = 0; k < out.size(); ++k) {
      const double rel = value_tolerance(name, out[k].dtype());
      expect_matches(out[k], name + ".out" + std::to_string(k), rel, rel / 2);
    }
    EXPECT_FALSE(has(name + ".out" + std::to_string(out.size()))) << "JAX gave more outputs";
  }
}

TEST(NumpyBitsVectors, GradientsMatchJax) {
  auto check = [](const Array& got, const std::string& key) { expect_matches(got, key, 2e-5, 1e-5); };
  const int checked = jnp_vectors::check_recorded_gradients(cases(), inputs, has, check);
  EXPECT_GE(checked, 14);
}

TEST(NumpyBitsVectors, JitMatchesEager) {
  for (const char* name : {"gcd", "lcm_u32", "bitwise_count_i64", "right_shift", "packbits_axis1",
                           "unpackbits_axis", "frexp", "ldexp", "nextafter", "nextafter_f16",
                           "i0", "unwrap_2d", "gradient_x"}) {
    SCOPED_TRACE(name);
    const Fn& fn = cases().at(name);
    std::vector<Array> jitted = jit(fn)(inputs(name));
    for (size_t k = 0; k < jitted.size(); ++k) {
      const double rel = value_tolerance(name, jitted[k].dtype());
      expect_matches(jitted[k], std::string(name) + ".out" + std::to_string(k), rel, rel / 2);
    }
  }
}

// vmap over the rows of gcd (a while_loop whose trip count differs per row) and of
// right_shift, against the unbatched calls.
TEST(NumpyBitsVectors, VmapMatchesRows) {
  Array a = array<int32_t>({12, -18, 0, 7, 35, 1}, Shape{2, 3});
  Array b = array<int32_t>({18, 12, 5, -21, 49, 0}, Shape{2, 3});
  Array g = vmap([](const Array& x, const Array& y) { return gcd(x, y); })(a, b);
  Array s = vmap([](const Array& x, const Array& y) { return right_shift(x, y); })(-a, abs(b));
  for (int64_t r = 0; r < 2; ++r) {
    Array ar = slice_axis(a, 0, r, r + 1), br = slice_axis(b, 0, r, r + 1);
    EXPECT_EQ(slice_axis(g, 0, r, r + 1).to_vector<int32_t>(), gcd(ar, br).to_vector<int32_t>());
    EXPECT_EQ(slice_axis(s, 0, r, r + 1).to_vector<int32_t>(),
              right_shift(-ar, abs(br)).to_vector<int32_t>());
  }
  EXPECT_EQ(g.to_vector<int32_t>(), (std::vector<int32_t>{6, 6, 5, 7, 7, 1}));
}

// Subnormal inputs, where XLA's CPU backend (so the recorded vectors) flushes to zero: graft
// computes them as IEEE numbers, checked against C's frexp / ldexp / nextafter.
TEST(NumpyBitsVectors, SubnormalsAsCDoes) {
  const std::vector<float> xs = {1e-40f, -1.4e-45f, 3e-45f, -1e-39f, 1.1e-38f};
  Array x = array(xs);
  auto [m, e] = frexp(x);
  std::vector<float> mv = m.to_vector<float>();
  std::vector<int32_t> ev = e.to_vector<int32_t>();
  Array next = nextafter(x, Array(0.0f));
  Array back = ldexp(m, e);
  for (size_t i = 0; i < xs.size(); ++i) {
    int want_e = 0;
    const float want_m = std::frexp(xs[i], &want_e);
    EXPECT_EQ(mv[i], want_m) << xs[i];
    EXPECT_EQ(ev[i], want_e) << xs[i];
    EXPECT_EQ(next.to_vector<float>()[i], std::nextafter(xs[i], 0.0f)) << xs[i];
    EXPECT_EQ(back.to_vector<float>()[i], xs[i]);
  }
  EXPECT_EQ(ldexp(array<float>({1.0f, 3.0f}), array<int32_t>({-149, -140})).to_vector<float>(),
            (std::vector<float>{std::ldexp(1.0f, -149), std::ldexp(3.0f, -140)}));
  auto [m64, e64] = frexp(array<double>({5e-324, -1e-310}));
  EXPECT_EQ(e64.to_vector<int32_t>(), (std::vector<int32_t>{-1073, -1029}));
  EXPECT_EQ(m64.to_vector<double>()[0], 0.5);
}

// A recorded [rows, cols] table, row-major.
std::vector<double> table(const std::string& key) {
  EXPECT_TRUE(has(key)) << "no table " << key;
  return has(key) ? vecs().at(key).values : std::vector<double>{};
}

TEST(DTypeInfo, ResultTypeMatchesJax) {
  std::vector<double> t = table("dtype.result_type.out0");
  ASSERT_EQ(t.size(), 81u);
  for (int i = 0; i < kNumRecorded; ++i) {
    for (int j = 0; j < kNumRecorded; ++j) {
      DType a = kRecorded[i], b = kRecorded[j];
      EXPECT_STREQ(numpy_name(result_type({a, b})), numpy_name(kRecorded[int(t[i * 9 + j])]))
          << numpy_name(a) << ", " << numpy_name(b);
    }
  }
  // Weak C++ scalars with the 32-bit-or-narrower dtypes (JAX with x64 off).
  std::vector<double> w = table("dtype.result_weak.out0");
  const DType rows[] = {DType::kBool, DType::kU8, DType::kU32, DType::kI32, DType::kF16,
                        DType::kBF16};
  ASSERT_EQ(w.size(), 18u);
  for (int i = 0; i < 6; ++i) {
    SCOPED_TRACE(numpy_name(rows[i]));
    EXPECT_STREQ(numpy_name(result_type({rows[i], 1})), numpy_name(kRecorded[int(w[i * 3])]));
    EXPECT_STREQ(numpy_name(result_type({rows[i], 1.0})),
                 numpy_name(kRecorded[int(w[i * 3 + 1])]));
    EXPECT_STREQ(numpy_name(result_type({rows[i], true})),
                 numpy_name(kRecorded[int(w[i * 3 + 2])]));
  }
  std::vector<double> only = table("dtype.result_only_weak.out0");
  ASSERT_EQ(only.size(), 5u);
  const DType got[] = {result_type({1}), result_type({1.0}), result_type({true}),
                       result_type({1, 1.0}), result_type({true, 1})};
  for (int i = 0; i < 5; ++i) EXPECT_STREQ(numpy_name(got[i]), numpy_name(kRecorded[int(only[i])]));
  // Arrays count with their dtype and weakness: a C++ double's weak f64 is the default float.
  EXPECT_EQ(result_type({Array(2.0)}), DType::kF32);
  EXPECT_EQ(result_type({arange(3), 1.5}), DType::kF32);
  EXPECT_EQ(result_type({astype(arange(3), DType::kU8), Array(3)}), DType::kU8);
  EXPECT_EQ(result_type({ones({2}, DType::kBF16), DType::kF16}), DType::kF32);
}

TEST(DTypeInfo, CanCastIssubdtypeIsdtypeMatchJax) {
  for (const char* casting : {"no", "equiv", "safe", "same_kind", "unsafe"}) {
    std::vector<double> t = table(std::string("dtype.can_cast.") + casting + ".out0");
    ASSERT_EQ(t.size(), 81u);
    for (int i = 0; i < kNumRecorded; ++i) {
      for (int j = 0; j < kNumRecorded; ++j) {
        EXPECT_EQ(can_cast(kRecorded[i], kRecorded[j], casting), t[i * 9 + j] != 0)
            << casting << ": " << numpy_name(kRecorded[i]) << " -> " << numpy_name(kRecorded[j]);
      }
    }
  }
  EXPECT_TRUE(can_cast(arange(3), DType::kF64));
  EXPECT_FALSE(can_cast(arange(3), DType::kF32));

  const DTypeCategory categories[] = {
      DTypeCategory::kGeneric,  DTypeCategory::kNumber,          DTypeCategory::kInteger,
      DTypeCategory::kSignedInteger, DTypeCategory::kUnsignedInteger, DTypeCategory::kInexact,
      DTypeCategory::kFloating, DTypeCategory::kComplexFloating, DTypeCategory::kBool};
  std::vector<double> sub = table("dtype.issubdtype.out0");
  ASSERT_EQ(sub.size(), 9u * 18);
  for (int i = 0; i < kNumRecorded; ++i) {
    SCOPED_TRACE(numpy_name(kRecorded[i]));
    for (int j = 0; j < kNumRecorded; ++j) {
      EXPECT_EQ(issubdtype(kRecorded[i], kRecorded[j]), sub[i * 18 + j] != 0) << j;
    }
    for (int c = 0; c < 9; ++c) {
      EXPECT_EQ(issubdtype(kRecorded[i], categories[c]), sub[i * 18 + 9 + c] != 0) << c;
    }
  }

  const char* kinds[] = {"bool",          "signed integer",   "unsigned integer", "integral",
                         "real floating", "complex floating", "numeric"};
  std::vector<double> kt = table("dtype.isdtype.out0");
  ASSERT_EQ(kt.size(), 9u * 7);
  for (int i = 0; i < kNumRecorded; ++i) {
    for (int k = 0; k < 7; ++k) {
      EXPECT_EQ(isdtype(kRecorded[i], kinds[k]), kt[i * 7 + k] != 0)
          << numpy_name(kRecorded[i]) << " " << kinds[k];
    }
  }
  EXPECT_TRUE(isdtype(DType::kF32, std::vector<std::string>{"bool", "real floating"}));
  EXPECT_FALSE(isdtype(DType::kI32, std::vector<std::string>{"bool", "real floating"}));
  EXPECT_TRUE(isdtype(DType::kBF16, DType::kBF16));
  EXPECT_FALSE(isdtype(DType::kBF16, DType::kF16));
}

// finfo(d)'s fields against dtype.finfo.<name> (tools/make_jnp_bits_vectors.py's FINFO_FIELDS
// order).
void expect_finfo_matches(DType d, const std::string& name) {
  SCOPED_TRACE(name);
  std::vector<double> t = table("dtype.finfo." + name + ".out0");
  ASSERT_EQ(t.size(), 17u);
  const FInfo f = finfo(d);
  const double got[] = {double(f.bits),   f.eps,           f.epsneg,
                        f.max,            f.min,           f.tiny,
                        f.smallest_normal, f.smallest_subnormal, f.resolution,
                        double(f.nmant),  double(f.nexp),  double(f.maxexp),
                        double(f.minexp), double(f.machep), double(f.negep),
                        double(f.iexp),   double(f.precision)};
  for (int k = 0; k < 17; ++k) EXPECT_DOUBLE_EQ(got[k], t[k]) << "field " << k;
}

TEST(DTypeInfo, FinfoIinfoMatchJax) {
  for (DType d : {DType::kF16, DType::kBF16, DType::kF32, DType::kF64}) {
    expect_finfo_matches(d, numpy_name(d));
    EXPECT_EQ(finfo(d).dtype, d);
  }
  EXPECT_EQ(finfo(ones({2}, DType::kBF16)).nmant, 7);
  for (DType d : {DType::kU8, DType::kU32, DType::kI32, DType::kI64}) {
    SCOPED_TRACE(numpy_name(d));
    std::vector<double> t = table(std::string("dtype.iinfo.") + numpy_name(d) + ".out0");
    ASSERT_EQ(t.size(), 3u);
    const IInfo i = iinfo(d);
    EXPECT_EQ(i.bits, t[0]);
    EXPECT_EQ(static_cast<double>(i.min), t[1]);
    EXPECT_EQ(static_cast<double>(i.max), t[2]);
  }
  EXPECT_EQ(iinfo(arange(3)).max, 2147483647);
  EXPECT_TRUE(isscalar(scalar(1, DType::kF32)));
  EXPECT_TRUE(isscalar(3.5));
  EXPECT_TRUE(isscalar(Array(2)));
  EXPECT_FALSE(isscalar(arange(1)));
}

// The queries with c64 / c128 against JAX (dtype.complex.* of tools/make_jnp_bits_vectors.py;
// indices into the real dtypes followed by complex64, complex128).
TEST(DTypeInfo, ComplexQueriesMatchJax) {
  std::vector<DType> every(kRecorded, kRecorded + kNumRecorded);
  every.push_back(DType::kC64);
  every.push_back(DType::kC128);
  const DType cs[] = {DType::kC64, DType::kC128};
  auto name = [](DType d) { return std::string(dtype_name(d)); };
  std::vector<double> rt = table("dtype.complex.result_type.out0");
  ASSERT_EQ(rt.size(), 22u);
  for (int i = 0; i < 2; ++i) {
    for (int j = 0; j < 11; ++j) {
      EXPECT_EQ(result_type({cs[i], every[j]}), every[int(rt[i * 11 + j])])
          << name(cs[i]) << ", " << name(every[j]);
    }
  }
  // Weak complex scalars as JAX without x64 (graft's weak scalars: a lone one is the default
  // complex, c64).
  std::vector<double> w = table("dtype.complex.result_weak.out0");
  ASSERT_EQ(w.size(), 4u);
  const std::complex<double> j1(0, 1);
  EXPECT_EQ(result_type({j1}), every[int(w[0])]);
  EXPECT_EQ(result_type({DType::kF32, j1}), every[int(w[1])]);
  EXPECT_EQ(result_type({DType::kBF16, j1}), every[int(w[2])]);
  EXPECT_EQ(result_type({DType::kI32, j1}), every[int(w[3])]);
  EXPECT_EQ(result_type({DType::kF64, j1}),
            every[int(table("dtype.complex.result_weak64.out0").at(0))]);
  for (const char* casting : {"no", "equiv", "safe", "same_kind", "unsafe"}) {
    std::vector<double> t = table(std::string("dtype.complex.can_cast.") + casting + ".out0");
    ASSERT_EQ(t.size(), 44u);
    for (int i = 0; i < 2; ++i) {
      for (int j = 0; j < 11; ++j) {
        EXPECT_EQ(can_cast(cs[i], every[j], casting), t[i * 11 + j] != 0)
            << casting << ": " << name(cs[i]) << " -> " << name(every[j]);
        EXPECT_EQ(can_cast(every[j], cs[i], casting), t[22 + j * 2 + i] != 0)
            << casting << ": " << name(every[j]) << " -> " << name(cs[i]);
      }
    }
  }
  const DTypeCategory categories[] = {
      DTypeCategory::kGeneric,  DTypeCategory::kNumber,          DTypeCategory::kInteger,
      DTypeCategory::kSignedInteger, DTypeCategory::kUnsignedInteger, DTypeCategory::kInexact,
      DTypeCategory::kFloating, DTypeCategory::kComplexFloating, DTypeCategory::kBool};
  std::vector<double> sub = table("dtype.complex.issubdtype.out0");
  ASSERT_EQ(sub.size(), 2u * 20);
  const char* kinds[] = {"bool",          "signed integer",   "unsigned integer", "integral",
                         "real floating", "complex floating", "numeric"};
  std::vector<double> kt = table("dtype.complex.isdtype.out0");
  ASSERT_EQ(kt.size(), 2u * 7);
  for (int i = 0; i < 2; ++i) {
    SCOPED_TRACE(name(cs[i]));
    for (int j = 0; j < 11; ++j) EXPECT_EQ(issubdtype(cs[i], every[j]), sub[i * 20 + j] != 0) << j;
    for (int c = 0; c < 9; ++c) {
      EXPECT_EQ(issubdtype(cs[i], categories[c]), sub[i * 20 + 11 + c] != 0) << c;
    }
    for (int k = 0; k < 7; ++k) EXPECT_EQ(isdtype(cs[i], kinds[k]), kt[i * 7 + k] != 0) << kinds[k];
  }
  expect_finfo_matches(DType::kC64, "complex64");
  expect_finfo_matches(DType::kC128, "complex128");
}

TEST(NumpyBitsErrors, BadInputsThrowNamingTheOp) {
  using jnp_vectors::expect_error;
  Array f = arange(0.0, 6.0), i = arange(6), m = reshape(f, {2, 3});
  Array u = astype(i, DType::kU8);
  expect_error([&] { gcd(f, i); }, "[gcd]");
  expect_error([&] { gcd(i, arange(4)); }, "[gcd]");
  expect_error([&] { lcm(i, f); }, "[lcm]");
  expect_error([&] { bitwise_count(f); }, "[bitwise_count]");
  expect_error([&] { right_shift(f, i); }, "[right_shift]");
  expect_error([&] { packbits(f); }, "[packbits]");
  expect_error([&] { packbits(i, 0, "middle"); }, "[packbits]");
  expect_error([&] { packbits(i, 1); }, "[packbits]");
  expect_error([&] { unpackbits(i); }, "[unpackbits]");
  expect_error([&] { unpackbits(u, 0, std::nullopt, "LSB"); }, "[unpackbits]");
  expect_error([&] { ldexp(f, f); }, "[ldexp]");
  expect_error([&] { nextafter(f, arange(0.0, 4.0)); }, "[nextafter]");
  expect_error([&] { kaiser(-1, 2.0); }, "[kaiser]");
  expect_error([&] { unwrap(scalar(1, DType::kF32)); }, "[unwrap]");
  expect_error([&] { unwrap(m, std::nullopt, 2); }, "[unwrap]");
  expect_error([&] { gradient(ones({1, 3})); }, "[gradient]");
  expect_error([&] { gradient(m, {Array(1.0), Array(1.0), Array(1.0)}); }, "[gradient]");
  expect_error([&] { gradient(m, {ones({2, 2})}, std::vector<int64_t>{0}); }, "[gradient]");
  expect_error([&] { gradient(m, {arange(0.0, 4.0)}, std::vector<int64_t>{1}); }, "[gradient]");
  expect_error([&] { gradient(m, {}, std::vector<int64_t>{2}); }, "[gradient]");
  expect_error([&] { finfo(DType::kI32); }, "[finfo]");
  expect_error([&] { iinfo(DType::kF32); }, "[iinfo]");
  expect_error([&] { iinfo(DType::kBool); }, "[iinfo]");
  expect_error([&] { isdtype(DType::kF32, "float"); }, "[isdtype]");
  expect_error([&] { can_cast(DType::kF32, DType::kF16, "sometimes"); }, "[can_cast]");
  expect_error([&] { result_type({}); }, "[result_type]");
  // Not errors: an empty axis list gives no gradients; an empty axis unwraps to itself.
  EXPECT_TRUE(gradient(m, {}, std::vector<int64_t>{}).empty());
  EXPECT_EQ(unwrap(zeros({2, 0})).shape(), (Shape{2, 0}));
}

}  // namespace
}  // namespace graft
