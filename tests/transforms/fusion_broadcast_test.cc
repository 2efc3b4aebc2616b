// Broadcasts read in place by fused groups (core/primitives/fusion.h's FusedRead): the fusion
// pass moves a broadcast_in_dim whose operand's dims are a contiguous run of the group's (an
// RMSNorm's per-row statistic and its weight, a bias along any run of dims, scalars) into the
// group, so the broadcast array is never materialized; other broadcasts stay outside. Values
// against eager for f32 (bit for bit) and bf16, through the compiled loop and the tile
// interpreter (the compiled loop takes reads whose runs fit its blocks; the interpreter the
// rest), on one thread and many, and grad through the jitted function.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "core/backend/cpu/fusion_codegen.h"
#include "core/ops.h"
#include "core/primitives/elementwise.h"
#include "core/primitives/fusion.h"
#include "core/primitives/shape.h"
#include "core/random/random.h"
#include "gtest/gtest.h"
#include "tests/transforms/expect_util.h"
#include "transforms/autodiff.h"
#include "transforms/control_flow.h"
#include "transforms/jit.h"
#include "transforms/passes/passes.h"

namespace graft {
namespace {

using cpu::fusion::Codegen;
using testing_util::expect_error;
using testing_util::expect_same;

// RMSNorm over the last axis times a weight, then a bias along axis 1: three broadcasts of
// three kinds (rows of the statistic, the weight as columns, the bias as a middle run).
Array norm(const Array& x, const Array& w, const Array& b) {
  Array ms = mean(x * x, {-1}, true);
  Array y = x * rsqrt(ms + 1e-5f) * w;
  return y + broadcast_in_dim(b, x.shape(), {1});
}

Program program_of(const FlatFn& fn, const std::vector<Aval>& avals) {
  std::optional<Program> p = lower(trace_avals(fn, avals));
  EXPECT_TRUE(p.has_value());
  return *p;
}

// The fused group over `shape` (the norm's statistic has a small group of its own).
const FusedElementwise* group_over(const Program& p, const Shape& shape) {
  const FusedElementwise* g = nullptr;
  for (const Instr& i : p.instrs) {
    if (i.prim->id() != PrimitiveId::kFusedElementwise) continue;
    const auto* f = static_cast<const FusedElementwise*>(i.prim.get());
    if (f->shape() != shape) continue;
    EXPECT_EQ(g, nullptr) << "more than one group:\n" << print_program(p);
    g = f;
  }
  return g;
}

TEST(FusionBroadcastTest, NormStatisticWeightAndBiasAreReadInPlace) {
  const int64_t B = 4, T = 6, D = 64;
  Program p = optimize(program_of(
      [](const std::vector<Array>& a) { return std::vector<Array>{norm(a[0], a[1], a[2])}; },
      {Aval{{B, T, D}, DType::kF32, false}, Aval{{D}, DType::kF32, false},
       Aval{{T}, DType::kF32, false}}));
  for (const Instr& i : p.instrs) {
    if (i.prim->id() != PrimitiveId::kBroadcastInDim) continue;
    ADD_FAILURE() << "a broadcast is materialized:\n" << print_program(p);
  }
  const FusedElementwise* g = group_over(p, {B, T, D});
  ASSERT_NE(g, nullptr) << print_program(p);
  // Reads of the group's inputs, whatever their order: x whole, the statistic in runs of D,
  // w wrapping every D, b in runs of D wrapping every T.
  std::vector<std::string> reads;
  for (const FusedRead& r : g->reads()) {
    reads.push_back(std::to_string(r.div) + "/" + std::to_string(r.size));
  }
  std::sort(reads.begin(), reads.end());
  EXPECT_NE(cpu::fusion::compiled_group(*g), nullptr) << "the compiled loop takes these reads";
  std::vector<std::string> want = {"1/1536", "1/64", "64/24", "64/6"};
  EXPECT_EQ(reads, want) << print_program(p);
}

// Jitted against eager: f32 bit for bit, bf16 within its rounding (the group carries f32);
// compiled and interpreted bit for bit. D = 64 and 128 fit the compiled blocks; D = 6 does
// not (the interpreter runs the group); the last shape spreads over many threads.
TEST(FusionBroadcastTest, ValuesMatchEagerOnBothPaths) {
  auto f = jit([](const Array& x, const Array& w, const Array& b) { return norm(x, w, b); });
  const std::vector<Shape> shapes = {{4, 6, 64}, {2, 3, 6}, {3, 5, 128}, {8, 64, 512}};
  for (const Shape& s : shapes) {
    for (DType d : {DType::kF32, DType::kBF16}) {
      const std::string what = shape_str(s) + " " + dtype_name(d);
      Array x = astype(random::normal(random::key(1), s), d);
      Array w = astype(random::normal(random::key(2), {s[2]}), d);
      Array b = astype(random::normal(random::key(3), {s[1]}), d);
      cpu::fusion::set_codegen(Codegen::kAlways);
      Array compiled = f(x, w, b);
      cpu::fusion::set_codegen(Codegen::kOff);
      Array interpreted = f(x, w, b);
      cpu::fusion::set_codegen(Codegen::kAuto);
      Array eager = norm(x, w, b);
      ASSERT_EQ(compiled.dtype(), d) << what;
      EXPECT_EQ(astype(compiled, DType::kF32).to_vector<float>(),
                astype(interpreted, DType::kF32).to_vector<float>())
          << what;
      if (d == DType::kF32) {
        EXPECT_EQ(compiled.to_vector<float>(), eager.to_vector<float>()) << what;
      } else {  // eager rounds every step to bf16: a few of its ulps (2^-8 relative each)
        std::vector<double> got = compiled.to_vector<double>(), e = eager.to_vector<double>();
        for (size_t i = 0; i < e.size(); ++i) {
          ASSERT_NEAR(got[i], e[i], 0.03 * (1 + std::abs(e[i]))) << what << " at " << i;
        }
      }
    }
  }
}

// A broadcast whose dims are not one run of the group's ([B, D] over [B, T, D]) stays an
// instruction of its own; the values still match.
TEST(FusionBroadcastTest, OtherBroadcastsStayOutside) {
  auto fn = [](const Array& x, const Array& c) {
    return exp(x) * broadcast_in_dim(c, x.shape(), {0, 2}) + 1.0f;
  };
  Program p = optimize(
      program_of([&](const std::vector<Array>& a) { return std::vector<Array>{fn(a[0], a[1])}; },
                 {Aval{{4, 6, 64}, DType::kF32, false}, Aval{{4, 64}, DType::kF32, false}}));
  int broadcasts = 0;
  for (const Instr& i : p.instrs) broadcasts += i.prim->id() == PrimitiveId::kBroadcastInDim;
  EXPECT_EQ(broadcasts, 1) << print_program(p);
  Array x = random::normal(random::key(4), {4, 6, 64}), c = random::normal(random::key(5), {4, 64});
  EXPECT_EQ(jit(fn)(x, c).to_vector<float>(), fn(x, c).to_vector<float>());
}

TEST(FusionBroadcastTest, GradThroughTheJittedNorm) {
  auto loss = [](const std::vector<Array>& a) { return sum(tanh(norm(a[0], a[1], a[2]))); };
  std::vector<Array> args = {random::normal(random::key(6), {3, 5, 64}),
                             random::normal(random::key(7), {64}),
                             random::normal(random::key(8), {5})};
  std::vector<Array> jitted = jit([&](const std::vector<Array>& a) { return grad(loss)(a); })(args);
  std::vector<Array> eager = grad(loss)(args);
  ASSERT_EQ(jitted.size(), eager.size());
  for (size_t i = 0; i < eager.size(); ++i) expect_same(jitted[i], eager[i], 1e-5);
}

// A scan body closing over a concrete table that it spreads over a batch of over a MiB keeps
// that broadcast as an instruction (only the table is computed when the body is lowered), so
// the optimized body's fused group reads the [T, D] table, not a [B, T, D] constant.
TEST(FusionBroadcastTest, ScanBodiesKeepBigBroadcastsOfConstants) {
  const int64_t B = 128, T = 64, D = 64;  // [B, T, D] f32: 2 MiB
  Array table = random::normal(random::key(9), {T, D});
  auto f = [table, B, T, D](const std::vector<Array>& a) {
    auto [last, ys] = scan(
        [&](const Array& c, const Array& x) {
          Array y = tanh(x * broadcast_to(reshape(table, {1, T, D}), {B, T, D}) + c);
          return std::pair{y, y};
        },
        zeros({B, T, D}), a[0]);
    return std::vector<Array>{last};
  };
  Program p = optimize(program_of(f, {Aval{{2, B, T, D}, DType::kF32, false}}));
  const Program* body = nullptr;
  for (const Instr& i : p.instrs) {
    if (i.prim->id() == PrimitiveId::kScan) body = i.prim->sub_programs().at(0).program.get();
  }
  ASSERT_NE(body, nullptr) << print_program(p);
  for (const Array& c : body->constant_values) {
    EXPECT_LT(c.size(), B * T * D) << "a spread table became a constant:\n" << print_program(p);
  }
  const FusedElementwise* g = group_over(*body, {B, T, D});
  ASSERT_NE(g, nullptr) << print_program(p);
  bool table_read = false;
  for (const FusedRead& r : g->reads()) table_read = table_read || (r.div == 1 && r.size == T * D);
  EXPECT_TRUE(table_read) << print_program(p);
  Array xs = random::normal(random::key(10), {2, B, T, D});
  EXPECT_EQ(jit(f)(std::vector<Array>{xs})[0].to_vector<float>(),
            f(std::vector<Array>{xs})[0].to_vector<float>());
}

// The primitive itself refuses a body that broadcasts an input in another form.
TEST(FusionBroadcastTest, BodiesWithOtherBroadcastsAreRefused) {
  auto body = std::make_shared<Program>();
  body->avals = {Aval{{4, 64}, DType::kF32, false}, Aval{{4, 6, 64}, DType::kF32, false},
                 Aval{{4, 6, 64}, DType::kF32, false}};
  body->inputs = {0};
  Instr bc;
  bc.prim = std::make_shared<const BroadcastInDim>(Shape{4, 6, 64}, std::vector<int>{0, 2});
  bc.in = {0};
  bc.out = {1};
  Instr e;
  e.prim = std::make_shared<const Unary>(PrimitiveId::kExp);
  e.in = {1};
  e.out = {2};
  body->instrs = {bc, e};
  body->outputs = {2};
  expect_error(
      [&] {
        make_fused_elementwise(body, Shape{4, 6, 64});
      },
      "[fused_elementwise]", "is broadcast to");
}

}  // namespace
}  // namespace graft
