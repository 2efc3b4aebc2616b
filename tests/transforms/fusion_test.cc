// The elementwise fusion pass and fused_elementwise: golden IR, fused vs unfused values for
// every float dtype, large (multi-tile, multithreaded) arrays, and transforms through it.
#include "transforms/fusion.h"

#include <cmath>
#include <limits>

#include "core/ops.h"
#include "core/random/random.h"
#include "gtest/gtest.h"
#include "transforms/autodiff.h"
#include "transforms/jit.h"
#include "transforms/passes/passes.h"
#include "transforms/vmap.h"

namespace graft {
namespace {

Program program_of(const FlatFn& fn, const std::vector<Aval>& avals) {
  std::optional<Program> p = lower(trace_avals(fn, avals));
  EXPECT_TRUE(p.has_value());
  return *p;
}

int count(const Program& p, PrimitiveId id) {
  int n = 0;
  for (const Instr& i : p.instrs) n += i.prim->id() == id;
  return n;
}

// A chain like the benchmark's: 10 elementwise ops (plus the scalar broadcasts).
Array chain(const Array& x) {
  Array a = tanh(x * 1.5 + 0.5);
  Array b = a * x;
  Array c = exp(-b);
  return maximum(c - a, x) * x + a;
}

TEST(FusionTest, GoldenIr) {
  Program p = program_of(
      [](const std::vector<Array>& x) {
        Array a = tanh(x[0] * x[1]);
        Array b = exp(a) - x[1];
        return std::vector<Array>{b, sum(a)};  // a is read outside: an extra output
      },
      {Aval{{4}, DType::kF32, false}, Aval{{4}, DType::kF32, false}});
  EXPECT_EQ(print_program(p),
            "{ lambda ; a:f32[4] b:f32[4]. let\n"
            "    c:f32[4] = mul a b\n"
            "    d:f32[4] = tanh c\n"
            "    e:f32[4] = exp d\n"
            "    f:f32[4] = sub e b\n"
            "    g:f32[] = reduce_sum[axes=(0,)] d\n"
            "  in (f, g) }");
  // a is read by the sum alone: the sum joins the group (a fused_reduce), whose inner group
  // gives a to the reduction and b out.
  EXPECT_EQ(print_program(optimize(p)),
            "{ lambda ; a:f32[4] b:f32[4]. let\n"
            "    c:f32[4] d:f32[] = fused_reduce[\n"
            "      body={ lambda ; e:f32[4] f:f32[4]. let\n"
            "          g:f32[4] h:f32[4] = fused_elementwise[\n"
            "            body={ lambda ; i:f32[4] j:f32[4]. let\n"
            "                k:f32[4] = mul i j\n"
            "                l:f32[4] = tanh k\n"
            "                m:f32[4] = exp l\n"
            "                n:f32[4] = sub m j\n"
            "              in (l, n) }\n"
            "          ] e f\n"
            "          o:f32[] = reduce_sum[axes=(0,)] g\n"
            "        in (h, o) }\n"
            "    ] a b\n"
            "  in (c, d) }");
  // a read outside the group (returned): an extra output.
  Program q = program_of(
      [](const std::vector<Array>& x) {
        Array a = tanh(x[0] * x[1]);
        return std::vector<Array>{exp(a) - x[1], a};
      },
      {Aval{{4}, DType::kF32, false}, Aval{{4}, DType::kF32, false}});
  EXPECT_EQ(print_program(optimize(q)),
            "{ lambda ; a:f32[4] b:f32[4]. let\n"
            "    c:f32[4] d:f32[4] = fused_elementwise[\n"
            "      body={ lambda ; e:f32[4] f:f32[4]. let\n"
            "          g:f32[4] = mul e f\n"
            "          h:f32[4] = tanh g\n"
            "          i:f32[4] = exp h\n"
            "          j:f32[4] = sub i f\n"
            "        in (h, j) }\n"
            "    ] a b\n"
            "  in (d, c) }");
}

TEST(FusionTest, ScalarBroadcastsAreAbsorbed) {
  // Large enough that constant folding keeps the broadcasts: the group reads the scalars.
  Program p = optimize(
      program_of([](const std::vector<Array>& x) { return std::vector<Array>{chain(x[0])}; },
                 {Aval{{512, 1024}, DType::kF32, false}}));
  EXPECT_EQ(count(p, PrimitiveId::kFusedElementwise), 1);
  EXPECT_EQ(count(p, PrimitiveId::kBroadcastInDim), 0) << print_program(p);
  EXPECT_EQ(p.instrs.size(), 1u) << print_program(p);
}

// Two chains that start apart (one from x, one from y) and meet in one op: one group, so no
// intermediate of either chain is written to memory.
TEST(FusionTest, ChainsThatMeetMergeIntoOneGroup) {
  Program p = optimize(program_of(
      [](const std::vector<Array>& x) {
        Array a = abs(x[0] * 0.25f) - x[0];  // chain 1
        Array b = exp(x[1]) + 2.0f;          // chain 2, started after chain 1
        return std::vector<Array>{maximum(a, b) * x[0]};
      },
      {Aval{{4096}, DType::kF32, false}, Aval{{4096}, DType::kF32, false}}));
  EXPECT_EQ(count(p, PrimitiveId::kFusedElementwise), 1) << print_program(p);
  EXPECT_EQ(p.instrs.size(), 1u) << print_program(p);
  auto fn = [](const Array& x, const Array& y) {
    return maximum(abs(x * 0.25f) - x, exp(y) + 2.0f) * x;
  };
  Array x = random::normal(random::key(1), {4096}), y = random::normal(random::key(2), {4096});
  EXPECT_EQ(jit(fn)(x, y).to_vector<float>(), fn(x, y).to_vector<float>());
}

TEST(FusionTest, SingleOpsAndOtherShapesStayUnfused) {
  Program p = optimize(program_of(
      [](const std::vector<Array>& x) {
        Array s = sum(exp(x[0]), {1});  // exp alone: a group of one
        return std::vector<Array>{s * x[1]};
      },
      {Aval{{2, 3}, DType::kF32, false}, Aval{{2}, DType::kF32, false}}));
  EXPECT_EQ(count(p, PrimitiveId::kFusedElementwise), 0) << print_program(p);
}

// jit (fused) against eager (unfused) on the chain, for each float dtype, on sizes that are
// and are not multiples of the tile, including one spread over many threads.
TEST(FusionTest, FusedMatchesUnfusedForFloatDtypes) {
  auto f = jit([](const Array& x) { return chain(x); });
  for (DType d : {DType::kF32, DType::kF64, DType::kF16, DType::kBF16}) {
    for (int64_t n : {int64_t{1}, int64_t{7}, int64_t{5000}, int64_t{300001}}) {
      Array x = astype(random::normal(random::key(n), {n}), d);
      Array got = f(x), want = chain(x);
      ASSERT_EQ(got.dtype(), d);
      ASSERT_EQ(got.shape(), want.shape());
      auto g = got.to_vector<double>(), w = want.to_vector<double>();
      double tol = d == DType::kBF16 ? 2e-2 : d == DType::kF16 ? 2e-3 : 1e-6;
      for (size_t i = 0; i < g.size(); ++i) {
        ASSERT_NEAR(g[i], w[i], tol * (1 + std::abs(w[i]))) << dtype_name(d) << " " << i;
      }
    }
  }
}

// Precision inside a fused group (core/primitives/fusion.h, as XLA's default excess
// precision): f16 / bf16 arithmetic is carried in f32 between steps and rounded only on
// store or at an explicit convert. (x + 256) - 256 on x in [1, 2): eager rounds x + 256 to a
// multiple of 2 in bf16 (of 1/4 in f16) and loses x's low bits; the fused group keeps the f32
// sum and gives x back. With an explicit astype to bf16 in between, jit rounds there as eager
// does. Both the interpreter (small arrays) and the compiled loop (16,384 elements and up).
TEST(FusionTest, HalfGroupsCarryF32BetweenStepsAndRoundOnStoreOrConvert) {
  auto carried = jit([](const Array& x) { return (x + 256.0) - 256.0; });
  auto converted = jit([](const Array& x) {
    Array wide = astype(x, DType::kF32) + 256.0f;
    return astype(wide, x.dtype()) - 256.0;
  });
  for (DType d : {DType::kBF16, DType::kF16}) {
    for (int64_t n : {int64_t{7}, int64_t{40000}}) {
      Array x = astype(random::uniform(random::key(3), {n}, DType::kF32, 1.0, 2.0), d);
      std::vector<double> xs = x.to_vector<double>();
      std::vector<double> jit_vals = carried(x).to_vector<double>();
      std::vector<double> eager_vals = ((x + 256.0) - 256.0).to_vector<double>();
      std::vector<double> conv_vals = converted(x).to_vector<double>();
      int eager_differs = 0;
      for (int64_t i = 0; i < n; ++i) {
        ASSERT_EQ(jit_vals[i], xs[i]) << dtype_name(d) << " n=" << n << " at " << i;
        ASSERT_EQ(conv_vals[i], eager_vals[i]) << dtype_name(d) << " n=" << n << " at " << i;
        eager_differs += eager_vals[i] != xs[i];
      }
      EXPECT_GT(eager_differs, 0) << dtype_name(d) << " n=" << n;  // the test can fail
    }
  }
}

// The vectorized f32 steps on the values where lanes differ from plain arithmetic: NaN on
// either side of max / min, infinities, signed zeros, exp's subnormal results (x < -87, fixed
// in f64) and overflow, tanh's clamp and tiny inputs. Equal to eager bit for bit; 37 elements
// so that both the packets and the scalar tail run.
TEST(FusionTest, VectorizedStepsMatchEagerOnSpecialValues) {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::nanf("");
  std::vector<float> xs = {nan,    1.0f,  -inf,    inf,    -0.0f,  0.0f,  -88.0f, -100.0f,
                           -87.5f, 89.0f, 1e-5f,   -3e-4f, 9.0f,   -9.0f, 0.5f,   -0.5f,
                           2.0f,   nan,   -103.9f, 88.7f,  1e-38f, -1.0f, 3.0f,   7.9f,
                           -7.9f,  0.25f, -0.75f,  5.0f,   -5.0f,  1e30f, -1e30f, nan,
                           -90.0f, 0.1f,  -0.1f,   4.0f,   -inf};
  std::vector<float> ys(xs.rbegin(), xs.rend());
  Array x = array<float>(xs, Shape{static_cast<int64_t>(xs.size())});
  Array y = array<float>(ys, Shape{static_cast<int64_t>(ys.size())});
  auto fn = [](const Array& a, const Array& b) {
    return std::vector<Array>{maximum(a, b) * 2.0f, minimum(a, b) - 1.0f, exp(a) + b,
                              tanh(a) * b,          -(a / b) + square(a), abs(exp(-a)) + 1.0f,
                              -(a * b) * b};  // neg of +0 is -0
  };
  std::vector<Array> got = jit(fn)(x, y), want = fn(x, y);
  for (size_t k = 0; k < got.size(); ++k) {
    auto g = got[k].to_vector<float>(), w = want[k].to_vector<float>();
    for (size_t i = 0; i < g.size(); ++i) {
      if (std::isnan(w[i])) {
        EXPECT_TRUE(std::isnan(g[i])) << "output " << k << " element " << i;
      } else {
        EXPECT_EQ(g[i], w[i]) << "output " << k << " element " << i << " x " << xs[i];
        EXPECT_EQ(std::signbit(g[i]), std::signbit(w[i])) << "output " << k << " element " << i;
      }
    }
  }
}

TEST(FusionTest, MixedDtypesSelectsAndComparisons) {
  auto fn = [](const Array& x, const Array& y) {
    Array big = x > y;
    Array z = where(big, sin(x), astype(y, DType::kF32) * 2.0);  // y is f64
    return std::pair{z + x, astype(logical_not(big), DType::kF32) + z};
  };
  Program p = optimize(program_of(
      [&](const std::vector<Array>& a) {
        auto [u, v] = fn(a[0], a[1]);
        return std::vector<Array>{u, v};
      },
      {Aval{{3000}, DType::kF32, false}, Aval{{3000}, DType::kF64, false}}));
  // Greedy grouping follows producer chains: the select's chain is one group (with the f64
  // convert, the comparison, not and both outputs).
  EXPECT_GE(count(p, PrimitiveId::kFusedElementwise), 1) << print_program(p);
  EXPECT_LE(p.instrs.size(), 3u) << print_program(p);
  Array x = random::normal(random::key(1), {3000});
  Array y = astype(random::normal(random::key(2), {3000}), DType::kF64);
  auto [u, v] = jit(fn)(x, y);
  auto [u0, v0] = fn(x, y);
  EXPECT_EQ(u.to_vector<float>(), u0.to_vector<float>());
  EXPECT_EQ(v.to_vector<float>(), v0.to_vector<float>());
}

TEST(FusionTest, GradAndVmapThroughJittedFusedFunction) {
  auto f = [](const Array& x) { return sum(chain(x)); };
  Array x = random::normal(random::key(3), {3, 50});
  Array g_jit = jit(grad(f))(x), g = grad(f)(x);
  auto a = g_jit.to_vector<float>(), b = g.to_vector<float>();
  for (size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i], b[i], 1e-5 * (1 + std::abs(b[i])));
  Array v_jit = jit(vmap([](const Array& r) { return chain(r); }))(x);
  auto c = v_jit.to_vector<float>(), d = chain(x).to_vector<float>();
  for (size_t i = 0; i < c.size(); ++i) EXPECT_NEAR(c[i], d[i], 1e-6 * (1 + std::abs(d[i])));
}

TEST(FusionTest, TransformRulesOfTheFusedPrimitive) {
  // grad / vmap of a function whose graph holds fused_elementwise itself (the rules un-fuse).
  auto fused = [](const Array& x) {
    return fuse_elementwise_call(
        [](const std::vector<Array>& in) { return std::vector<Array>{chain(in[0])}; }, {x})[0];
  };
  Array x = random::normal(random::key(4), {2, 5});
  auto a = grad([&](const Array& y) { return sum(fused(y)); })(x).to_vector<float>();
  auto b = grad([](const Array& y) { return sum(chain(y)); })(x).to_vector<float>();
  for (size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i], b[i], 1e-5 * (1 + std::abs(b[i])));
  auto c = vmap(fused)(x).to_vector<float>(), d = chain(x).to_vector<float>();
  for (size_t i = 0; i < c.size(); ++i) EXPECT_NEAR(c[i], d[i], 1e-6 * (1 + std::abs(d[i])));
}

}  // namespace
}  // namespace graft
