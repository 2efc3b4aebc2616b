// Float edge cases where JAX's results are exact, on every path an elementwise op runs on:
// the unfused kernels (eager), a fused group run by the tile interpreter (jit, codegen off)
// and a fused group compiled by LLVM (jit, codegen always). sqrt is correctly rounded (also at
// +inf and inside a vector), rsqrt's infinities and zeros, sign of +-0 and NaN, max / min of
// signed zeros and NaNs in both argument orders; sort / argsort tie -0 with +0 and NaN with
// NaN, keeping the input order.
//
// The expected bits were made by running JAX 0.10.2 on CPU (x64 off), e.g.
//   jnp.sqrt(jnp.arange(1, 32, dtype=jnp.float32)).view(jnp.uint32)
//   jnp.sign(jnp.array([-0., 0., nan, -3., 2., inf, -inf, 1e-30], jnp.float32))
//   jnp.maximum(a, b), jnp.minimum(a, b) for the pairs (a, b) in kMaxMin below
//   jnp.sort(v), jnp.argsort(v) for v in SortTiesMinusZeroWithZeroAndNaNWithNaN
// (jax.jit gave the same bits). A NaN must be a NaN; its sign bit is not compared (x86's
// default NaN is negative, which JAX shows too).
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "core/backend/cpu/fusion_codegen.h"
#include "core/ops.h"
#include "gtest/gtest.h"
#include "transforms/fusion.h"
#include "transforms/jit.h"
#include "transforms/passes/passes.h"

namespace graft {
namespace {

using cpu::fusion::Codegen;
using cpu::fusion::set_codegen;

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

uint32_t bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
float from_bits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// A table of (inputs..., expected) rows repeated to n elements, so that every row lands in
// full vector packets and in a tail.
struct Table {
  std::vector<std::vector<float>> in;  // in[k][row]
  std::vector<float> want;
  std::vector<Array> arrays(int64_t n, DType d) const {
    std::vector<Array> out;
    for (const auto& col : in) {
      std::vector<float> v(n);
      for (int64_t i = 0; i < n; ++i) v[i] = col[i % col.size()];
      out.push_back(astype(array<float>(v, Shape{n}), d));
    }
    return out;
  }
};

void expect_bits(const Array& got, const Table& t, int64_t n, const std::string& what) {
  std::vector<float> g = astype(got, DType::kF32).to_vector<float>();
  ASSERT_EQ(static_cast<int64_t>(g.size()), n) << what;
  int bad = 0;
  for (int64_t i = 0; i < n && bad < 6; ++i) {
    float w = t.want[i % t.want.size()];
    bool ok = std::isnan(w) ? std::isnan(g[i]) : bits(g[i]) == bits(w);
    if (!ok) {
      ++bad;
      ADD_FAILURE() << what << ": element " << i << " (row " << i % t.want.size() << ") got 0x"
                    << std::hex << bits(g[i]) << " want 0x" << bits(w);
    }
  }
}

int fused_groups(const FlatFn& fn, const std::vector<Array>& args) {
  std::vector<Aval> avals;
  for (const Array& a : args) avals.push_back(a.aval());
  std::optional<Program> p = lower(trace_avals(fn, avals));
  EXPECT_TRUE(p.has_value());
  int n = 0;
  for (const Instr& i : optimize(*p).instrs) n += i.prim->id() == PrimitiveId::kFusedElementwise;
  return n;
}

// op applied to the table's columns on every path; the inputs and the result pass through a
// multiplication by an array of ones (exact, keeps -0 and NaN) so that jit fuses the op.
void check_paths(const std::string& name, const std::function<Array(std::vector<Array>)>& op,
                 const Table& t, DType d = DType::kF32) {
  auto fn = [op](const std::vector<Array>& in) {
    const Array& one = in.back();
    std::vector<Array> args;
    for (size_t k = 0; k + 1 < in.size(); ++k) args.push_back(in[k] * one);
    return std::vector<Array>{op(args) * one};
  };
  auto jitted = jit([fn](const std::vector<Array>& in) { return fn(in)[0]; });
  for (int64_t n : {int64_t{5}, int64_t{1037}}) {
    std::vector<Array> in = t.arrays(n, d);
    in.push_back(ones({n}, d));
    std::string what = name + " " + dtype_name(d) + " n=" + std::to_string(n);
    ASSERT_GE(fused_groups(fn, in), 1) << what << ": the op is not fused";
    expect_bits(fn(in)[0], t, n, what + " eager");
    set_codegen(Codegen::kOff);
    expect_bits(jitted(in), t, n, what + " fused interpreter");
    if (d == DType::kF32 || d == DType::kBF16) {
      set_codegen(Codegen::kAlways);
      expect_bits(jitted(in), t, n, what + " fused compiled");
    }
    set_codegen(Codegen::kAuto);
  }
}

TEST(JaxEdgeValues, SqrtIsCorrectlyRoundedOnEveryPath) {
  // JAX's bits of sqrt(1), ..., sqrt(31): correctly rounded (10 of them were 1 ulp off).
  const uint32_t jax_sqrt[31] = {
      0x3f800000, 0x3fb504f3, 0x3fddb3d7, 0x40000000, 0x400f1bbd, 0x401cc471, 0x402953fd,
      0x403504f3, 0x40400000, 0x404a62c2, 0x40544395, 0x405db3d7, 0x4066c15a, 0x406f7751,
      0x4077def6, 0x40800000, 0x4083f07b, 0x4087c3b6, 0x408b7c1a, 0x408f1bbd, 0x4092a476,
      0x409617e3, 0x40997774, 0x409cc471, 0x40a00000, 0x40a32b2b, 0x40a646e1, 0x40a953fd,
      0x40ac5345, 0x40af456f, 0x40b22b20};
  Table t;
  t.in.resize(1);
  for (int k = 1; k <= 31; ++k) {
    t.in[0].push_back(static_cast<float>(k));
    t.want.push_back(from_bits(jax_sqrt[k - 1]));
  }
  // sqrt(+inf, 0, -0, -1, -inf, NaN, 4, 0.25) (JAX).
  for (auto [x, y] : std::vector<std::pair<float, float>>{{kInf, kInf},
                                                          {0.0f, 0.0f},
                                                          {-0.0f, -0.0f},
                                                          {-1.0f, kNaN},
                                                          {-kInf, kNaN},
                                                          {kNaN, kNaN},
                                                          {4.0f, 2.0f},
                                                          {0.25f, 0.5f}}) {
    t.in[0].push_back(x);
    t.want.push_back(y);
  }
  check_paths(
      "sqrt", [](std::vector<Array> a) { return sqrt(a[0]); }, t);
  // f64: against the IEEE sqrt of the C library (correctly rounded by definition).
  std::vector<double> xs;
  for (int k = 1; k <= 31; ++k) xs.push_back(k);
  xs.push_back(std::numeric_limits<double>::infinity());
  std::vector<double> got = sqrt(array<double>(xs)).to_vector<double>();
  for (size_t i = 0; i < xs.size(); ++i) EXPECT_EQ(got[i], std::sqrt(xs[i])) << xs[i];
}

TEST(JaxEdgeValues, RsqrtInfinitiesAndZeros) {
  // lax.rsqrt(+inf, 0, -0, -1, -inf, NaN, 4, 0.25) (JAX): 0, inf, -inf, NaN, NaN, NaN, 0.5, 2.
  Table t{{{kInf, 0.0f, -0.0f, -1.0f, -kInf, kNaN, 4.0f, 0.25f}},
          {0.0f, kInf, -kInf, kNaN, kNaN, kNaN, 0.5f, 2.0f}};
  check_paths(
      "rsqrt", [](std::vector<Array> a) { return rsqrt(a[0]); }, t);
  check_paths(
      "rsqrt", [](std::vector<Array> a) { return rsqrt(a[0]); }, t, DType::kF64);
}

TEST(JaxEdgeValues, SignKeepsSignedZerosAndNaN) {
  Table t{{{-0.0f, 0.0f, kNaN, -3.0f, 2.0f, kInf, -kInf, 1e-30f}},
          {-0.0f, 0.0f, kNaN, -1.0f, 1.0f, 1.0f, -1.0f, 1.0f}};
  for (DType d : {DType::kF32, DType::kF64, DType::kBF16}) {
    check_paths(
        "sign", [](std::vector<Array> a) { return sign(a[0]); }, t, d);
  }
}

// (a, b) -> jnp.maximum(a, b), jnp.minimum(a, b) (JAX): -0 < +0, a NaN either side wins.
const std::vector<std::vector<float>> kMaxMin = {
    {0.0f, -0.0f, 0.0f, -0.0f},   {-0.0f, 0.0f, 0.0f, -0.0f},   {0.0f, 0.0f, 0.0f, 0.0f},
    {-0.0f, -0.0f, -0.0f, -0.0f}, {kNaN, 1.0f, kNaN, kNaN},     {1.0f, kNaN, kNaN, kNaN},
    {kNaN, kNaN, kNaN, kNaN},     {-2.0f, -2.0f, -2.0f, -2.0f}, {3.0f, -3.0f, 3.0f, -3.0f}};

TEST(JaxEdgeValues, MaximumMinimumOfSignedZerosInBothOrders) {
  Table mx, mn;
  mx.in.resize(2);
  mn.in.resize(2);
  for (const auto& r : kMaxMin) {
    for (Table* t : {&mx, &mn}) {
      t->in[0].push_back(r[0]);
      t->in[1].push_back(r[1]);
    }
    mx.want.push_back(r[2]);
    mn.want.push_back(r[3]);
  }
  for (DType d : {DType::kF32, DType::kF64, DType::kBF16}) {
    check_paths(
        "maximum", [](std::vector<Array> a) { return maximum(a[0], a[1]); }, mx, d);
    check_paths(
        "minimum", [](std::vector<Array> a) { return minimum(a[0], a[1]); }, mn, d);
  }
}

TEST(JaxEdgeValues, SortTiesMinusZeroWithZeroAndNaNWithNaN) {
  // v = [0., -0., nan, 1., -nan, -0., 0., -inf, inf, -1.]: jnp.argsort(v) is
  // [7, 9, 0, 1, 5, 6, 3, 8, 2, 4] and jnp.sort(v) has the zeros' signs +, -, -, + (JAX).
  const std::vector<float> v = {0.0f, -0.0f, kNaN, 1.0f, -kNaN, -0.0f, 0.0f, -kInf, kInf, -1.0f};
  const std::vector<int32_t> want_perm = {7, 9, 0, 1, 5, 6, 3, 8, 2, 4};
  auto jsort = jit([](const Array& x) { return sort(x); });
  auto jargsort = jit([](const Array& x) { return argsort(x); });
  for (DType d : {DType::kF32, DType::kF64, DType::kBF16, DType::kF16}) {
    SCOPED_TRACE(dtype_name(d));
    Array x = astype(array<float>(v), d);
    EXPECT_EQ(argsort(x).to_vector<int32_t>(), want_perm);
    EXPECT_EQ(jargsort(x).to_vector<int32_t>(), want_perm);
    for (const Array& s : {sort(x), jsort(x)}) {
      std::vector<float> got = astype(s, DType::kF32).to_vector<float>();
      for (size_t i = 0; i < v.size(); ++i) {
        float w = v[want_perm[i]];
        if (std::isnan(w)) {
          EXPECT_TRUE(std::isnan(got[i])) << i;
        } else {
          EXPECT_EQ(bits(got[i]), bits(w)) << i;
        }
      }
    }
  }
  // sort_key_val: values follow keys that tie: lax.sort_key_val([0., -0., 0., -1.],
  // [1, 2, 3, 4]) gives values [4, 1, 2, 3] (JAX).
  auto [k, val] =
      sort_key_val(array<float>({0.0f, -0.0f, 0.0f, -1.0f}), array<int32_t>({1, 2, 3, 4}));
  EXPECT_EQ(val.to_vector<int32_t>(), (std::vector<int32_t>{4, 1, 2, 3}));
}

}  // namespace
}  // namespace graft
