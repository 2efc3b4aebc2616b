// float8_e4m3fn / float8_e5m2 (core/dtype/float8.h) against ml_dtypes 0.7.0 and JAX 0.10.2:
// tests/core/testdata/float8_vectors.txt, recorded by tools/make_float8_vectors.py (every bit
// pattern to f32 and i32, an f32 and an f64 rounding sweep, promotion, dot_general, gradients).
// Plus the scope: which primitives take fp8 values, and the trace-time error of the others.
#include <cmath>
#include <cstring>

#include "core/numpy/npy_io.h"
#include "core/ops.h"
#include "gtest/gtest.h"
#include "tests/core/numpy/jnp_array_vectors.h"
#include "transforms/autodiff.h"
#include "transforms/jit.h"

namespace graft {
namespace {

using jnp_vectors::expect_error;
using jnp_vectors::Vec;
using jnp_vectors::VectorFile;

const VectorFile& file() {
  static const VectorFile* f = new VectorFile("tests/core/testdata/float8_vectors.txt");
  return *f;
}
const Vec& vec(const std::string& key) {
  EXPECT_TRUE(file().has(key)) << "no vector " << key;
  return file().all().at(key);
}

constexpr std::pair<DType, const char*> kTypes[] = {{DType::kF8E4M3FN, "e4m3fn"},
                                                    {DType::kF8E5M2, "e5m2"}};

// The 256 bit patterns as an fp8 array (bitcast from u8).
Array all_patterns(DType t) {
  std::vector<uint8_t> bits(256);
  for (int i = 0; i < 256; ++i) bits[i] = static_cast<uint8_t>(i);
  return bitcast_convert_type(array(bits), t);
}
std::vector<uint8_t> bits_of(const Array& x) {
  return bitcast_convert_type(x, DType::kU8).to_vector<uint8_t>();
}

// An fp8 array of the recorded values (they are exact fp8 values).
Array fp8_array(const std::string& key, DType t) {
  const Vec& v = vec(key);
  Array x = astype(array(std::vector<float>(v.values.begin(), v.values.end()), v.shape), t);
  EXPECT_EQ(astype(x, DType::kF32).to_vector<float>(),
            std::vector<float>(v.values.begin(), v.values.end()))
      << key << " is not exact in " << dtype_name(t);
  return x;
}

// f32 equality with the recorded value (9 significant digits: it reads back exactly as an f32),
// signs of zeros included; NaN matches NaN.
bool same_float(float got, double recorded) {
  const float want = static_cast<float>(recorded);
  return std::isnan(want) ? std::isnan(got)
                          : got == want && std::signbit(got) == std::signbit(want);
}

TEST(Float8, NamesSizesAndKinds) {
  EXPECT_STREQ(dtype_name(DType::kF8E4M3FN), "f8_e4m3fn");
  EXPECT_STREQ(dtype_name(DType::kF8E5M2), "f8_e5m2");
  for (auto [t, name] : kTypes) {
    EXPECT_EQ(dtype_size(t), 1) << name;
    EXPECT_TRUE(is_floating(t) && is_inexact(t) && is_float8(t)) << name;
    EXPECT_FALSE(is_integral(t) || is_complex(t)) << name;
  }
  EXPECT_FALSE(is_float8(DType::kBF16));
  FInfo e4 = finfo(DType::kF8E4M3FN), e5 = finfo(DType::kF8E5M2);  // ml_dtypes.finfo
  EXPECT_EQ(e4.max, 448);
  EXPECT_EQ(e4.eps, 0.125);
  EXPECT_EQ(e4.smallest_subnormal, std::ldexp(1.0, -9));
  EXPECT_EQ(e4.maxexp, 9);
  EXPECT_EQ(e5.max, 57344);
  EXPECT_EQ(e5.tiny, std::ldexp(1.0, -14));
  EXPECT_EQ(e5.smallest_subnormal, std::ldexp(1.0, -16));
}

// Every bit pattern widens to ml_dtypes' f32 value (NaN as NaN, signs of zeros kept), and
// converts to i32 as JAX's astype does.
TEST(Float8, EveryBitPatternToF32AndI32) {
  for (auto [t, name] : kTypes) {
    SCOPED_TRACE(name);
    Array x = all_patterns(t);
    std::vector<float> f = astype(x, DType::kF32).to_vector<float>();
    std::vector<float> direct = x.to_vector<float>();  // reading an fp8 Array goes through f32
    const Vec& want = vec(std::string(name) + ".to_f32");
    ASSERT_EQ(f.size(), want.values.size());
    for (int i = 0; i < 256; ++i) {
      EXPECT_TRUE(same_float(f[i], want.values[i])) << "pattern " << i << ": " << f[i];
      EXPECT_TRUE(same_float(direct[i], want.values[i])) << "pattern " << i;
    }
    std::vector<int32_t> n = astype(x, DType::kI32).to_vector<int32_t>();
    const Vec& want_i = vec(std::string(name) + ".to_i32");
    for (int i = 0; i < 256; ++i) EXPECT_EQ(n[i], want_i.values[i]) << "pattern " << i;
    // And back: every pattern survives f32 -> fp8 (NaN stays a NaN of its sign).
    std::vector<uint8_t> back = bits_of(astype(astype(x, DType::kF32), t));
    for (int i = 0; i < 256; ++i) {
      if (std::isnan(want.values[i])) {
        EXPECT_TRUE(std::isnan(Array(astype(astype(x, DType::kF32), t)).to_vector<float>()[i]));
      } else {
        EXPECT_EQ(back[i], i) << "pattern " << i;
      }
    }
  }
}

// f32 -> fp8 and f64 -> fp8 round to nearest even in one step: ties, one ulp beside them,
// subnormals, overflow (NaN in e4m3fn, inf in e5m2), inf and NaN, as ml_dtypes.
TEST(Float8, RoundingMatchesMlDtypes) {
  for (const char* tag : {"sweep", "sweep64"}) {
    const bool f64 = std::string(tag) == "sweep64";
    const Vec& in = vec(std::string(tag) + (f64 ? ".f64" : ".f32"));
    Array x =
        f64 ? array(in.values) : array(std::vector<float>(in.values.begin(), in.values.end()));
    for (auto [t, name] : kTypes) {
      SCOPED_TRACE(std::string(tag) + "." + name);
      std::vector<uint8_t> got = bits_of(astype(x, t));
      const Vec& want = vec(std::string(tag) + "." + name);
      ASSERT_EQ(got.size(), want.values.size());
      int bad = 0;
      for (size_t i = 0; i < got.size() && bad < 8; ++i) {
        if (got[i] != want.values[i]) {
          ADD_FAILURE() << in.values[i] << " -> " << int(got[i]) << ", want " << want.values[i];
          ++bad;
        }
      }
    }
  }
  // The storage structs round the same way (the kernels use them).
  EXPECT_EQ(f8_e4m3fn(464.0f).bits, 0x7e);  // a tie: to even, 448
  EXPECT_EQ(f8_e4m3fn(465.0f).bits, 0x7f);  // past 448: NaN
  EXPECT_EQ(f8_e4m3fn(-INFINITY).bits, 0xff);
  EXPECT_EQ(f8_e5m2(61440.0f).bits, 0x7c);  // a tie between 57344 and 2^16: inf
  EXPECT_EQ(f8_e5m2(NAN).bits, 0x7e);
}

// jnp.promote_types: bool and integers (and weak ints / floats) promote to fp8; fp8 with any
// other float or complex type (the other fp8 type too) has no common type.
TEST(Float8, PromotionAsJax) {
  const std::vector<DType> dtypes = {DType::kBool,  DType::kU8,  DType::kU32,  DType::kI32,
                                     DType::kI64,   DType::kF16, DType::kBF16, DType::kF32,
                                     DType::kF64,   DType::kC64, DType::kC128, DType::kF8E4M3FN,
                                     DType::kF8E5M2};
  const std::vector<TypeInfo> weak = {
      {DType::kI32, true}, {DType::kF32, true}, {DType::kC128, true}};
  for (auto [t, name] : kTypes) {
    const Vec& want = vec(std::string("promote.") + name);
    ASSERT_EQ(want.values.size(), dtypes.size() + weak.size());
    for (size_t j = 0; j < want.values.size(); ++j) {
      TypeInfo other = j < dtypes.size() ? TypeInfo{dtypes[j], false} : weak[j - dtypes.size()];
      SCOPED_TRACE(std::string(name) + " with " + dtype_name(other.dtype) +
                   (other.weak ? " (weak)" : ""));
      for (bool swap : {false, true}) {
        TypeInfo a{t, false}, b = other;
        if (swap) std::swap(a, b);
        if (want.values[j] < 0) {
          expect_error([&] { promote_types(a, b); }, "[promote_types] no implicit promotion");
        } else {
          TypeInfo r = promote_types(a, b);
          EXPECT_EQ(r.dtype, dtypes[static_cast<int>(want.values[j])]);
          EXPECT_FALSE(r.weak);
        }
      }
    }
  }
  Array e4 = astype(array(std::vector<float>{1, 2}), DType::kF8E4M3FN);
  expect_error([&] { add(e4, array(std::vector<float>{1, 2})); }, "[add] no implicit promotion");
  expect_error([&] { matmul(e4, astype(e4, DType::kF8E5M2)); }, "[matmul] no implicit promotion");
}

// dot_general with fp8 operands accumulates in f32: the default result is the operands' fp8
// dtype (as jnp.dot), preferred_element_type gives f32 / bf16; e4m3fn x e5m2 needs it.
TEST(Float8, DotGeneralMatchesJax) {
  const DotDims dims{{1}, {0}, {}, {}};
  struct Case {
    const char* name;
    DType lhs, rhs;
    std::optional<DType> preferred;
    DType out;
  };
  const DType e4 = DType::kF8E4M3FN, e5 = DType::kF8E5M2;
  for (const Case& c :
       {Case{"e4", e4, e4, std::nullopt, e4}, Case{"e4_f32", e4, e4, DType::kF32, DType::kF32},
        Case{"e4_bf16", e4, e4, DType::kBF16, DType::kBF16}, Case{"e5", e5, e5, std::nullopt, e5},
        Case{"e5_f32", e5, e5, DType::kF32, DType::kF32},
        Case{"e4e5_f32", e4, e5, DType::kF32, DType::kF32}}) {
    SCOPED_TRACE(c.name);
    const std::string key = std::string("dot.") + c.name;
    Array a = fp8_array(key + ".in0", c.lhs), b = fp8_array(key + ".in1", c.rhs);
    auto f = [&](const Array& x, const Array& y) { return dot_general(x, y, dims, c.preferred); };
    for (bool jitted : {false, true}) {
      Array out = jitted ? jit(f)(a, b) : f(a, b);
      EXPECT_EQ(out.dtype(), c.out);
      Vec want = vec(key + ".out");
      want.dtype = "float32";  // compared as f32 values (the dtype is checked above)
      jnp_vectors::expect_vec_matches(astype(out, DType::kF32), want, 1e-6, 1.0);
    }
  }
  Array a = fp8_array("dot.e4.in0", e4);
  EXPECT_EQ(matmul(a, transpose(a)).dtype(), e4);  // jnp.dot(e4m3fn, e4m3fn) is e4m3fn
  expect_error(
      [&] {
        dot_general(a, astype(a, e5), {{1}, {1}, {}, {}});
      },
      "[dot_general] no implicit promotion");
}

// The cotangent of an fp8 operand is fp8 (JAX's): through convert_element_type and
// dot_general, d sum(dot(x.astype(e4m3fn), y.astype(e4m3fn), f32) * ct) matches jax.grad.
TEST(Float8, GradientThroughConvertAndDotMatchesJax) {
  const DotDims dims{{1}, {0}, {}, {}};
  const DType e4 = DType::kF8E4M3FN;
  Array x = file().array_of("grad.f32.in0"), y = file().array_of("grad.f32.in1");
  Array ct = file().array_of("grad.f32.ct");
  auto f = [&](const Array& x, const Array& y) {
    return sum(dot_general(astype(x, e4), astype(y, e4), dims, DType::kF32) * ct);
  };
  auto [gx, gy] = grad(f, argnums<0, 1>)(x, y);
  file().expect_matches(gx, "grad.f32.grad0", 1e-6);
  file().expect_matches(gy, "grad.f32.grad1", 1e-6);

  Array a = fp8_array("grad.fp8.in0", e4);
  auto g = [&](const Array& a) {
    return sum(dot_general(a, astype(y, e4), dims, DType::kF32) * ct);
  };
  Array ga = grad(g)(a);
  EXPECT_EQ(ga.dtype(), e4);
  Vec want = vec("grad.fp8.grad0");
  want.dtype = "float32";
  jnp_vectors::expect_vec_matches(astype(ga, DType::kF32), want, 1e-6, 1.0);
}

// fp8 values flow through conversions, the layout primitives, select_n and stop_gradient;
// every other primitive refuses them when traced, naming itself.
TEST(Float8, LayoutOpsCarryValuesAndOtherPrimitivesRefuse) {
  const DType e5 = DType::kF8E5M2;
  Array x = astype(reshape(array(std::vector<float>{1, -2, 3.5, 0.25, -0.5, 6}), {2, 3}), e5);
  auto vals = [](const Array& a) { return astype(a, DType::kF32).to_vector<float>(); };
  EXPECT_EQ(vals(transpose(x)), (std::vector<float>{1, 0.25, -2, -0.5, 3.5, 6}));
  EXPECT_EQ(vals(slice(x, {0, 1}, {2, 3})), (std::vector<float>{-2, 3.5, -0.5, 6}));
  EXPECT_EQ(vals(concatenate({x, x}, 0)).size(), 12u);
  EXPECT_EQ(vals(broadcast_to(reshape(x, {1, 2, 3}), {2, 2, 3}))[7], -2);
  EXPECT_EQ(vals(lax_pad(x, zeros({}, e5), {{0, 1, 0}, {1, 0, 0}})).size(), 12u);
  EXPECT_EQ(vals(stop_gradient(x)), vals(x));
  Array pred = reshape(array(std::vector<bool>{true, false, true, false, true, false}), {2, 3});
  EXPECT_EQ(vals(where(pred, x, zeros_like(x))), (std::vector<float>{1, 0, 3.5, 0, -0.5, 0}));
  EXPECT_EQ(zeros({2}, DType::kF8E4M3FN).dtype(), DType::kF8E4M3FN);

  expect_error([&] { sin(x); },
               "[sin] does not support float8 values; convert to a wider float first");
  expect_error([&] { sum(x); }, "[reduce_sum] does not support float8 values");
  expect_error([&] { x* x; }, "[mul] does not support float8 values");
  expect_error([&] { jit([](const Array& v) { return exp(v); })(x); },
               "[exp] does not support float8");
  // But a jitted chain of the supported ones runs (fusion leaves fp8 out).
  Array y = jit(
      [](const Array& v) { return astype(astype(v, DType::kF32) * 2.0f, DType::kF8E4M3FN); })(x);
  EXPECT_EQ(vals(y), (std::vector<float>{2, -4, 7, 0.5, -1, 12}));
}

// .npy has no fp8 descr: save refuses with a Status, npy_bytes with an Error.
TEST(Float8, NpySaveRefuses) {
  Array x = zeros({2}, DType::kF8E4M3FN);
  absl::Status s = save(::testing::TempDir() + "/f8.npy", x);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("f8_e4m3fn"), std::string::npos) << s;
  expect_error([&] { npy_bytes(x); }, "[npy_bytes] f8_e4m3fn has no .npy descr");
}

}  // namespace
}  // namespace graft
