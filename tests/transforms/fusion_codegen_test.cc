// Fused groups compiled to native loops (core/backend/cpu/fusion_codegen.cc), run with
// GRAFT_FUSION_CODEGEN=always (BUILD.bazel) so that every size compiles: each f32 op the code
// generator handles (inline or through a call) equals eager bit for bit on special and random
// values, on sizes with and without a tail and over many threads; comparisons, selects, logic
// and converts on bool lanes; broadcast scalars, several outputs and a donated input whose
// buffer the output reuses; groups it does not handle fall back to the interpreter.
#include "core/backend/cpu/fusion_codegen.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "core/ops.h"
#include "core/primitives/fusion.h"
#include "core/random/random.h"
#include "gtest/gtest.h"
#include "tests/transforms/expect_util.h"
#include "transforms/jit.h"
#include "transforms/passes/passes.h"

namespace graft {
namespace {

// Special values first (NaN, infinities, signed zeros, exp's subnormal and overflow range,
// tanh's clamp, ties for round), then normal random values scaled to [-12, 12].
std::vector<float> values(int64_t n, uint32_t seed) {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::nanf("");
  std::vector<float> v = {nan,    1.0f,    -inf,   inf,   -0.0f,  0.0f,   -88.0f,  -100.0f, -87.5f,
                          89.0f,  1e-5f,   -3e-4f, 9.0f,  -9.0f,  0.5f,   -0.5f,   2.5f,    -1.5f,
                          1e-38f, -1e-39f, 3.0f,   1e30f, -1e30f, 0.999f, -0.999f, 7.9f};
  std::vector<float> r = (random::normal(random::key(seed), {n}) * 4.0f).to_vector<float>();
  for (int64_t i = static_cast<int64_t>(v.size()); i < n; ++i) v.push_back(r[i]);
  v.resize(n);
  return v;
}

using testing_util::expect_bitwise;
using testing_util::same_bits;

using Unary = std::function<Array(const Array&)>;
using Binary = std::function<Array(const Array&, const Array&)>;

struct Named {
  const char* name;
  Unary op;
};

// Every unary f32 op the code generator accepts (inline: neg abs sign square sqrt floor ceil
// round rsqrt exp tanh logistic; called: the rest).
std::vector<Named> unary_ops() {
  return {{"neg", [](const Array& x) { return -x; }},
          {"abs", [](const Array& x) { return abs(x); }},
          {"sign", [](const Array& x) { return sign(x); }},
          {"square", [](const Array& x) { return square(x); }},
          {"sqrt", [](const Array& x) { return sqrt(x); }},
          {"floor", [](const Array& x) { return floor(x); }},
          {"ceil", [](const Array& x) { return ceil(x); }},
          {"round", [](const Array& x) { return round(x); }},
          {"exp", [](const Array& x) { return exp(x); }},
          {"expm1", [](const Array& x) { return expm1(x); }},
          {"rsqrt", [](const Array& x) { return rsqrt(x); }},
          {"sin", [](const Array& x) { return sin(x); }},
          {"cos", [](const Array& x) { return cos(x); }},
          {"tanh", [](const Array& x) { return tanh(x); }},
          {"logistic", [](const Array& x) { return sigmoid(x); }},
          {"log", [](const Array& x) { return log(x); }},
          {"log1p", [](const Array& x) { return log1p(x); }},
          {"erf", [](const Array& x) { return erf(x); }},
          {"erf_inv", [](const Array& x) { return erf_inv(x * 0.08f); }}};
}

std::vector<std::pair<const char*, Binary>> binary_ops() {
  return {{"add", [](const Array& a, const Array& b) { return a + b; }},
          {"sub", [](const Array& a, const Array& b) { return a - b; }},
          {"mul", [](const Array& a, const Array& b) { return a * b; }},
          {"div", [](const Array& a, const Array& b) { return a / b; }},
          {"max", [](const Array& a, const Array& b) { return maximum(a, b); }},
          {"min", [](const Array& a, const Array& b) { return minimum(a, b); }},
          {"rem", [](const Array& a, const Array& b) { return remainder(a, b); }},
          {"floor_divide", [](const Array& a, const Array& b) { return floor_divide(a, b); }},
          {"pow", [](const Array& a, const Array& b) { return power(a, b); }}};
}

// 64 and 32 are the block sizes (AVX-512, AVX2): sizes below, at and off multiples of both,
// and one that runs on many threads.
const int64_t kSizes[] = {5, 64, 1037, 300001};

TEST(FusionCodegenTest, UnaryOpsEqualEagerBitForBit) {
  ASSERT_TRUE(cpu::fusion::codegen_wanted(1)) << "the test runs with GRAFT_FUSION_CODEGEN=always";
  for (const Named& u : unary_ops()) {
    // Two more steps around the op, so that it is fused, and it reads an intermediate; the
    // product with y keeps the sign of a zero result visible.
    auto fn = [&](const Array& x, const Array& y) { return u.op(x * y) * y; };
    auto j = jit(fn);
    for (int64_t n : kSizes) {
      Array x = array<float>(values(n, 1), Shape{n});
      Array y = array<float>(values(n, 2), Shape{n});
      std::vector<float> ys = y.to_vector<float>();
      std::reverse(ys.begin(), ys.end());  // pair special values with other values
      y = array<float>(ys, Shape{n});
      expect_bitwise(j(x, y), fn(x, y), std::string(u.name) + " n=" + std::to_string(n));
    }
  }
}

// exp, tanh and the logistic function are emitted inline as Eigen's packet algorithms
// (core/backend/cpu/eigen_math_ir.cc): every 2^-10 step over [-128, 128] (each range of their
// clamps, cut-offs and polynomials) and 2^18 random bit patterns (every magnitude, subnormals,
// infinities, NaNs) equal eager bit for bit.
TEST(FusionCodegenTest, InlineTranscendentalsEqualEagerOverTheirRange) {
  std::vector<float> v;
  for (int i = -(128 << 10); i <= (128 << 10); ++i) v.push_back(static_cast<float>(i) / 1024.0f);
  std::vector<uint32_t> bits = random::bits(random::key(7), {1 << 18}).to_vector<uint32_t>();
  for (uint32_t b : bits) {
    float f;
    std::memcpy(&f, &b, 4);
    v.push_back(f);
  }
  const int64_t n = static_cast<int64_t>(v.size());
  Array x = array<float>(v, Shape{n});
  const std::pair<const char*, Unary> ops[] = {
      {"exp", [](const Array& x) { return exp(x); }},
      {"tanh", [](const Array& x) { return tanh(x); }},
      {"logistic", [](const Array& x) { return sigmoid(x); }}};
  for (const auto& [name, op] : ops) {
    auto fn = [&](const Array& x) { return op(x) * 2.0f; };  // fused with an exact product
    expect_bitwise(jit(fn)(x), fn(x), name);
  }
}

TEST(FusionCodegenTest, BinaryOpsEqualEagerBitForBit) {
  for (const auto& [name, op] : binary_ops()) {
    auto fn = [&](const Array& x, const Array& y) { return op(x - 0.25f, y) * 2.0f; };
    auto j = jit(fn);
    for (int64_t n : kSizes) {
      Array x = array<float>(values(n, 3), Shape{n});
      std::vector<float> ys = values(n, 4);
      std::reverse(ys.begin(), ys.end());
      Array y = array<float>(ys, Shape{n});
      expect_bitwise(j(x, y), fn(x, y), std::string(name) + " n=" + std::to_string(n));
      expect_bitwise(j(y, x), fn(y, x), std::string(name) + " swapped n=" + std::to_string(n));
    }
  }
}

// bf16 groups: loaded widened to f32, carried in f32, rounded to bf16 (ties to even, NaN kept)
// at explicit converts and on store, as the interpreter does (core/primitives/fusion.h). Compiled and interpreted runs of the same jitted
// function (set_codegen switches per call) agree bit for bit, for every op, with broadcast
// scalars, converts to and from f32 and a bool mask in the group.
TEST(FusionCodegenTest, Bf16GroupsEqualTheInterpreterBitForBit) {
  auto run_both = [](auto&& j, const Array& x, const Array& y, const std::string& what) {
    cpu::fusion::set_codegen(cpu::fusion::Codegen::kAlways);
    Array compiled = j(x, y);
    cpu::fusion::set_codegen(cpu::fusion::Codegen::kOff);
    Array interpreted = j(x, y);
    cpu::fusion::set_codegen(cpu::fusion::Codegen::kAlways);
    ASSERT_EQ(compiled.dtype(), interpreted.dtype()) << what;
    expect_bitwise(astype(compiled, DType::kF32), astype(interpreted, DType::kF32), what);
  };
  for (int64_t n : {int64_t{5}, int64_t{1037}, int64_t{300001}}) {
    Array x = astype(array<float>(values(n, 10), Shape{n}), DType::kBF16);
    std::vector<float> ys = values(n, 11);
    std::reverse(ys.begin(), ys.end());
    Array y = astype(array<float>(ys, Shape{n}), DType::kBF16);
    for (const Named& u : unary_ops()) {
      auto j = jit([&](const Array& a, const Array& b) { return u.op(a * b) + b * 0.3f; });
      run_both(j, x, y, std::string("bf16 ") + u.name + " n=" + std::to_string(n));
    }
    for (const auto& [name, op] : binary_ops()) {
      auto j = jit([&](const Array& a, const Array& b) { return op(a - 0.25f, b) * 2.0f; });
      run_both(j, x, y, std::string("bf16 ") + name + " n=" + std::to_string(n));
    }
    auto mixed = jit([](const Array& a, const Array& b) {
      Array wide = astype(a, DType::kF32) * 1.001f;  // f32 steps inside a bf16 group
      Array back = astype(exp(wide) - astype(b, DType::kF32), DType::kBF16);
      return where(a > b, back, b + astype(a > 0.0f, DType::kBF16));
    });
    run_both(mixed, x, y, "bf16 mixed n=" + std::to_string(n));
  }
}

// Steps with bool operands or results: comparisons (on values with many ties and NaNs),
// select_n, logic on masks, converts both ways, is_finite; bool outputs stored as bytes and
// bool inputs read from them.
TEST(FusionCodegenTest, ComparisonsSelectsAndLogicEqualEager) {
  using Cmp = std::function<Array(const Array&, const Array&)>;
  const std::vector<std::pair<const char*, Cmp>> cmps = {
      {"eq", [](const Array& a, const Array& b) { return a == b; }},
      {"ne", [](const Array& a, const Array& b) { return a != b; }},
      {"lt", [](const Array& a, const Array& b) { return less(a, b); }},
      {"le", [](const Array& a, const Array& b) { return a <= b; }},
      {"gt", [](const Array& a, const Array& b) { return greater(a, b); }},
      {"ge", [](const Array& a, const Array& b) { return greater_equal(a, b); }}};
  for (int64_t n : kSizes) {
    // Small integers, so that many pairs tie, plus the special values.
    std::vector<float> xs = values(n, 8), ys = values(n, 9);
    for (int64_t i = 26; i < n; ++i) {
      xs[i] = std::round(xs[i]);
      ys[i] = std::round(ys[i]);
    }
    std::reverse(ys.begin(), ys.end());
    Array x = array<float>(xs, Shape{n}), y = array<float>(ys, Shape{n});
    for (const auto& [name, cmp] : cmps) {
      auto fn = [&](const Array& a, const Array& b) {
        Array c = cmp(a * 2.0f, b);
        return std::vector<Array>{where(c, a, b + 1.0f), c};
      };
      std::vector<Array> got = jit(fn)(x, y), want = fn(x, y);
      std::string what = std::string(name) + " n=" + std::to_string(n);
      expect_bitwise(got[0], want[0], what);
      EXPECT_EQ(got[1].dtype(), DType::kBool);
      EXPECT_EQ(got[1].to_vector<float>(), want[1].to_vector<float>()) << what;
    }
    // Masks as inputs and outputs: not, and, or, xor, bool max / min, converts, is_finite.
    Array m1 = x > 0.0f, m2 = y < 1.0f;
    eval(m1);
    eval(m2);
    auto logic = [](const Array& a, const Array& b, const Array& v) {
      Array k = logical_xor(!a, b) | (a & isfinite(v * 3.0f));
      Array f = astype(k, DType::kF32) * v + astype(astype(v - 0.5f, DType::kBool), DType::kF32);
      return std::vector<Array>{k, maximum(a, b), minimum(a, k), f};
    };
    std::vector<Array> got = jit(logic)(m1, m2, x), want = logic(m1, m2, x);
    ASSERT_EQ(got.size(), 4u);
    for (size_t k = 0; k < 3; ++k) {  // the masks
      EXPECT_EQ(got[k].dtype(), DType::kBool);
      EXPECT_EQ(got[k].to_vector<float>(), want[k].to_vector<float>())
          << "logic output " << k << " n=" << n;
    }
    expect_bitwise(got[3], want[3], "logic f32 output n=" + std::to_string(n));
  }
}

// The benchmark's chains: scalar operands, a value read by several steps, two outputs.
TEST(FusionCodegenTest, ChainsWithScalarsAndSeveralOutputs) {
  auto fn = [](const Array& x) {
    Array a = tanh(x * 1.5f);
    Array b = exp(-(a * x));
    Array c = x * 1.5f + 0.5f;
    return std::vector<Array>{maximum(b - a, x) * x, -(c * x) + c, a};
  };
  auto j = jit(fn);
  for (int64_t n : kSizes) {
    Array x = array<float>(values(n, 5), Shape{n});
    std::vector<Array> got = j(x), want = fn(x);
    ASSERT_EQ(got.size(), want.size());
    for (size_t k = 0; k < got.size(); ++k) {
      expect_bitwise(got[k], want[k], "output " + std::to_string(k) + " n=" + std::to_string(n));
    }
  }
}

// The fused group jit makes of fn over avals (the first one in the optimized program).
std::shared_ptr<const Primitive> group_of(const FlatFn& fn, const std::vector<Aval>& avals) {
  std::optional<Program> p = lower(trace_avals(fn, avals));
  EXPECT_TRUE(p.has_value());
  for (const Instr& i : optimize(*p).instrs) {
    if (i.prim->id() == PrimitiveId::kFusedElementwise) return i.prim;
  }
  ADD_FAILURE() << "no fused group";
  return nullptr;
}

int pipeline_cut_of(const FlatFn& fn, const std::vector<Aval>& avals) {
  std::shared_ptr<const Primitive> g = group_of(fn, avals);
  if (g == nullptr) return -1;
  const cpu::fusion::CompiledGroup* c =
      cpu::fusion::compiled_group(static_cast<const FusedElementwise&>(*g));
  return c == nullptr ? -1 : c->pipeline_cut;
}

// Groups with enough compute get a software-pipelined loop (CompiledGroup::pipeline_cut: the
// steps before the cut run one block ahead of the rest). Each transcendental in such a group,
// several outputs (one of them before the cut), a donated input, bf16 slots and broadcast reads
// give eager's bits (bf16: the interpreter's, which carries f32 as the loop does) on one block,
// a few, a tail and many threads; a cheap group is not pipelined.
TEST(FusionCodegenTest, PipelinedLoopsEqualEager) {
  const Aval f32{{1000}, DType::kF32, false};
  auto vec = [](const std::vector<Array>& a) { return a; };
  EXPECT_EQ(
      pipeline_cut_of([&](const std::vector<Array>& x) { return vec({x[0] * x[1] + x[1] - x[0]}); },
                      {f32, f32}),
      0);
  auto several = [](const Array& x, const Array& y) {
    Array a = tanh(x * 1.5f);
    Array b = exp(-(a * y));
    return std::vector<Array>{maximum(b - a, x) * y, a, sigmoid(b * y) / (y + 2.0f)};
  };
  EXPECT_GT(
      pipeline_cut_of([&](const std::vector<Array>& x) { return several(x[0], x[1]); }, {f32, f32}),
      0);
  std::vector<std::pair<const char*, Binary>> heavy = {
      {"exp", [](const Array& x, const Array& y) { return exp(x * y) * y - tanh(y * x) * x; }},
      {"tanh", [](const Array& x, const Array& y) { return tanh(x * y) * y + tanh(y) * x; }},
      {"logistic",
       [](const Array& x, const Array& y) { return sigmoid(x * y) * y + sigmoid(y) * x; }},
      {"div and sqrt", [](const Array& x, const Array& y) {
         return x / (sqrt(abs(y)) + 1e-3f) - y / (x * x + 1.0f) + maximum(x, y) / (y * y + 0.5f);
       }}};
  for (const auto& [name, op] : heavy) {
    EXPECT_GT(pipeline_cut_of([&](const std::vector<Array>& x) { return vec({op(x[0], x[1])}); },
                              {f32, f32}),
              0)
        << name;
  }
  for (int64_t n : {int64_t{5}, int64_t{64}, int64_t{128}, int64_t{1037}, int64_t{300001}}) {
    const std::string at = " n=" + std::to_string(n);
    Array x = array<float>(values(n, 11), Shape{n});
    std::vector<float> ys = values(n, 12);
    std::reverse(ys.begin(), ys.end());
    Array y = array<float>(ys, Shape{n});
    for (const auto& [name, op] : heavy) expect_bitwise(jit(op)(x, y), op(x, y), name + at);
    std::vector<Array> got = jit(several)(x, y), want = several(x, y);
    for (size_t k = 0; k < got.size(); ++k) {
      expect_bitwise(got[k], want[k], "output " + std::to_string(k) + at);
    }
    // bf16 slots: compiled against interpreted.
    Array xb = astype(x, DType::kBF16), yb = astype(y, DType::kBF16);
    auto j = jit(heavy[0].second);
    Array compiled = j(xb, yb);
    cpu::fusion::set_codegen(cpu::fusion::Codegen::kOff);
    Array interpreted = j(xb, yb);
    cpu::fusion::set_codegen(cpu::fusion::Codegen::kAlways);
    ASSERT_EQ(compiled.dtype(), DType::kBF16);
    expect_bitwise(astype(compiled, DType::kF32), astype(interpreted, DType::kF32), "bf16" + at);
  }
  // A donated input whose buffer the output reuses.
  auto update = [](const Array& p, const Array& g) {
    return p - 0.5f * tanh(g) * exp(-g * p) + sigmoid(p) * 1e-3f;
  };
  const int64_t n = 100003;
  Array p = array<float>(values(n, 13), Shape{n});
  Array g = array<float>(values(n, 14), Shape{n});
  Array want = update(p, g);
  eval(want);
  const void* p_data = p.buffer()->data();
  Array q = jit(update, {.donate_argnums = {0}})(p, g);
  EXPECT_EQ(q.buffer()->data(), p_data);
  expect_bitwise(q, want, "donated update");
  // Broadcast reads: a row repeating every 64 elements and a column constant over each row.
  auto rows = [](const Array& x, const Array& row, const Array& col) {
    return tanh(x * row) * exp(-(x * col)) + row;
  };
  const Aval row{{64}, DType::kF32, false}, col{{37, 1}, DType::kF32, false};
  EXPECT_GT(pipeline_cut_of(
                [&](const std::vector<Array>& a) {
                  return vec({rows(a[0], a[1], broadcast_to(a[2], {37, 64}))});
                },
                {Aval{{37, 64}, DType::kF32, false}, row, col}),
            0);
  Array m = reshape(array<float>(values(37 * 64, 15), Shape{37 * 64}), {37, 64});
  Array r = array<float>(values(64, 16), Shape{64});
  Array c = reshape(array<float>(values(37, 17), Shape{37}), {37, 1});
  auto bcast = [&](const Array& a, const Array& b, const Array& d) {
    return rows(a, b, broadcast_to(d, {37, 64}));
  };
  expect_bitwise(jit(bcast)(m, r, c), bcast(m, r, c), "broadcast reads");
}

// A donated parameter's buffer is reused for the output (in place): each block's inputs are
// read before its outputs are written.
TEST(FusionCodegenTest, DonatedInputReusedInPlace) {
  auto update = [](const Array& p, const Array& g) { return p - 0.5f * g * g + p * 1e-3f; };
  auto step = jit(update, {.donate_argnums = {0}});
  const int64_t n = 100003;
  Array p = array<float>(values(n, 6), Shape{n});
  Array g = array<float>(values(n, 7), Shape{n});
  Array want = update(p, g);
  eval(want);  // before p is donated (arrays are lazy)
  const void* p_data = p.buffer()->data();
  Array q = step(p, g);
  EXPECT_EQ(q.buffer()->data(), p_data);
  expect_bitwise(q, want, "donated update");
}

// The fused groups that jit makes: groups of f32, bf16 and bool slots compile, one with f64
// or f16 slots is left to the interpreter (and still runs: FusionTest covers its values).
TEST(FusionCodegenTest, WhichGroupsCompile) {
  const Aval f32{{1000}, DType::kF32, false}, f64{{1000}, DType::kF64, false};
  auto f32_group = group_of(
      [](const std::vector<Array>& x) { return std::vector<Array>{exp(x[0] * x[1]) + x[1]}; },
      {f32, f32});
  auto f64_group = group_of(
      [](const std::vector<Array>& x) { return std::vector<Array>{exp(x[0] * x[1]) + x[1]}; },
      {f64, f64});
  auto select_group = group_of(
      [](const std::vector<Array>& x) {
        return std::vector<Array>{where(x[0] > x[1], x[0] * 2.0f, x[1] - 1.0f)};
      },
      {f32, f32});
  auto bf16_group = group_of(
      [](const std::vector<Array>& x) { return std::vector<Array>{exp(x[0] * x[1]) + x[1]}; },
      {Aval{{1000}, DType::kBF16, false}, Aval{{1000}, DType::kBF16, false}});
  auto f16_group = group_of(
      [](const std::vector<Array>& x) { return std::vector<Array>{exp(x[0] * x[1]) + x[1]}; },
      {Aval{{1000}, DType::kF16, false}, Aval{{1000}, DType::kF16, false}});
  ASSERT_TRUE(f32_group && f64_group && select_group && bf16_group && f16_group);
  auto compiled = [](const std::shared_ptr<const Primitive>& p) {
    return cpu::fusion::compiled_group(static_cast<const FusedElementwise&>(*p));
  };
  const cpu::fusion::CompiledGroup* c = compiled(f32_group);
  ASSERT_NE(c, nullptr);
  const char* isa = std::getenv("GRAFT_FUSION_CODEGEN_ISA");
  if (isa != nullptr && std::string(isa) == "avx2") {
    EXPECT_EQ(c->block, 32);
  } else {
    EXPECT_TRUE(c->block == 32 || c->block == 64) << c->block;
  }
  EXPECT_EQ(compiled(f32_group), c);  // cached: compiled once
  EXPECT_NE(compiled(select_group), nullptr);
  EXPECT_NE(compiled(bf16_group), nullptr);
  EXPECT_EQ(compiled(f64_group), nullptr);
  EXPECT_EQ(compiled(f16_group), nullptr);
}

}  // namespace
}  // namespace graft
