// fused_reduce: which reductions the fusion pass joins to a group (f32 values over one run of
// dims, one per group) and which it leaves alone, and that jit's fused reductions give eager's
// bits (the kernel reduces the same pieces in the same order): sums, maxima and minima over
// rows, over a whole array split between threads, over columns (whole rows at a time, column
// parts split between threads, tiles of a wide row, rows split between threads) and a middle
// axis, with the reduced value also returned, with a donated input, through the compiled loop
// and the tile interpreter, and rows or columns off the kernel's 16-element grid (the body runs
// as it is).
#include "core/primitives/fused_reduce.h"

#include <string>
#include <vector>

#include "core/backend/cpu/fusion_codegen.h"
#include "core/ops.h"
#include "core/primitives/reduce.h"
#include "core/random/random.h"
#include "gtest/gtest.h"
#include "tests/transforms/expect_util.h"
#include "transforms/jit.h"
#include "transforms/passes/passes.h"

namespace graft {
namespace {

using testing_util::expect_bitwise;
using Codegen = cpu::fusion::Codegen;

Program optimized(const FlatFn& fn, const std::vector<Aval>& avals) {
  std::optional<Program> p = lower(trace_avals(fn, avals));
  EXPECT_TRUE(p.has_value());
  return p ? optimize(*p) : Program();
}

int count(const Program& p, PrimitiveId id) {
  int n = 0;
  for (const Instr& i : p.instrs) n += i.prim->id() == id;
  return n;
}

Aval f32(Shape s) { return Aval{std::move(s), DType::kF32, false}; }

Array uniform(uint32_t seed, Shape s) {
  return random::uniform(random::key(seed), std::move(s), DType::kF32, -2.0, 2.0);
}

// A group with tanh (so the loop is software-pipelined when compiled) and a cheap tail.
Array value(const Array& x, const Array& y) { return tanh(x * 1.5f) * y + x; }

Array reduce(PrimitiveId op, const Array& v, const Axes& axes) {
  if (op == PrimitiveId::kReduceMax) return max(v, axes);
  if (op == PrimitiveId::kReduceMin) return min(v, axes);
  return sum(v, axes);
}

struct Layout {
  Shape shape;
  Axes axes;
};

// Rows of 512 and 48, one array of 2^21 elements (pieces split between threads), two
// trailing axes, rows of 7 (off the grid: the body runs); columns: a norm weight's gradient
// ([B, T, D] over B and T: two column parts, rows run a part at a time), few columns over a
// long axis (rows split between threads), columns wider than a tile, a middle axis (an MoE's
// sum over its choices: whole rows), and columns of 24 (a part starts off the grid: the body
// runs).
const std::vector<Layout> kLayouts = {
    {{64, 512}, {1}},      {{700, 48}, {1}},        {{1 << 21}, {0}},   {{5, 64, 80}, {1, 2}},
    {{3000, 7}, {1}},      {{8, 256, 512}, {0, 1}}, {{20000, 32}, {0}}, {{6, 20000}, {0}},
    {{2048, 2, 512}, {1}}, {{6000, 24}, {0}}};

TEST(FusedReduceTest, GroupAndReductionBecomeOneInstruction) {
  auto fn = [](const std::vector<Array>& a) {
    return std::vector<Array>{sum(value(a[0], a[1]), {1})};
  };
  Program p = optimized(fn, {f32({8, 64}), f32({8, 64})});
  EXPECT_EQ(count(p, PrimitiveId::kFusedReduce), 1) << print_program(p);
  EXPECT_EQ(count(p, PrimitiveId::kReduceSum), 0) << print_program(p);
  EXPECT_EQ(count(p, PrimitiveId::kFusedElementwise), 0) << print_program(p);
  const auto& fr = static_cast<const FusedReduce&>(*p.instrs.back().prim);
  EXPECT_EQ(fr.outer(), 8);
  EXPECT_EQ(fr.length(), 64);
  EXPECT_EQ(fr.inner(), 1);
  EXPECT_TRUE(fr.kept().empty());  // the summed value is read by the sum alone
  // A single op and its sum (a gradient's sum of squares) fuse too.
  Program sq =
      optimized([](const std::vector<Array>& a) { return std::vector<Array>{sum(a[0] * a[0])}; },
                {f32({4, 8, 32})});
  EXPECT_EQ(count(sq, PrimitiveId::kFusedReduce), 1) << print_program(sq);
  EXPECT_EQ(count(sq, PrimitiveId::kMul), 0) << print_program(sq);
}

// Columns and a middle axis join as well; their layout as [outer, length, inner].
TEST(FusedReduceTest, ColumnsAndMiddleAxesJoin) {
  struct Case {
    Shape shape;
    Axes axes;
    int64_t outer, length, inner;
  };
  for (const Case& c : std::vector<Case>{{{8, 256, 512}, {0, 1}, 1, 2048, 512},
                                         {{2048, 2, 512}, {1}, 2048, 2, 512},
                                         {{4, 1, 8, 64}, {0, 2}, 1, 32, 64},
                                         {{4, 8, 64}, {0}, 1, 4, 512}}) {
    auto fn = [axes = c.axes](const std::vector<Array>& a) {
      return std::vector<Array>{sum(value(a[0], a[1]), axes)};
    };
    Program p = optimized(fn, {f32(c.shape), f32(c.shape)});
    ASSERT_EQ(count(p, PrimitiveId::kFusedReduce), 1) << print_program(p);
    EXPECT_EQ(count(p, PrimitiveId::kReduceSum), 0) << print_program(p);
    const auto& fr = static_cast<const FusedReduce&>(*p.instrs.back().prim);
    EXPECT_EQ(fr.outer(), c.outer) << shape_str(c.shape);
    EXPECT_EQ(fr.length(), c.length) << shape_str(c.shape);
    EXPECT_EQ(fr.inner(), c.inner) << shape_str(c.shape);
  }
}

// A norm weight's gradient as reverse mode writes it: the column sum of dy * x_hat joins the
// group, and so does the product read after it (dy * x_hat * w, the input's gradient path):
// one instruction, the weight's broadcast read in place.
TEST(FusedReduceTest, NormWeightGradientIsOnePass) {
  auto fn = [](const std::vector<Array>& a) {
    Array xhat = a[0] * a[1];
    Array dw = sum(xhat * a[2], {0, 1});
    return std::vector<Array>{dw, xhat * broadcast_to(a[3], {8, 16, 64})};
  };
  Program p = optimized(fn, {f32({8, 16, 64}), f32({8, 16, 64}), f32({8, 16, 64}), f32({64})});
  EXPECT_EQ(count(p, PrimitiveId::kFusedReduce), 1) << print_program(p);
  EXPECT_EQ(count(p, PrimitiveId::kMul), 0) << print_program(p);
  EXPECT_EQ(count(p, PrimitiveId::kBroadcastInDim), 0) << print_program(p);
  EXPECT_EQ(count(p, PrimitiveId::kFusedElementwise), 0) << print_program(p);
}

// One op reading a broadcast becomes a group of one, so the broadcast is read in place.
TEST(FusedReduceTest, LoneOpReadsItsBroadcastInPlace) {
  auto fn = [](const std::vector<Array>& a) {
    return std::vector<Array>{a[0] * broadcast_to(a[1], {8, 16, 64})};
  };
  Program p = optimized(fn, {f32({8, 16, 64}), f32({16, 64})});
  EXPECT_EQ(count(p, PrimitiveId::kFusedElementwise), 1) << print_program(p);
  EXPECT_EQ(count(p, PrimitiveId::kBroadcastInDim), 0) << print_program(p);
  Array x = uniform(8, {8, 16, 64}), y = uniform(9, {16, 64});
  auto f2 = [](const Array& a, const Array& b) { return a * broadcast_to(b, {8, 16, 64}); };
  expect_bitwise(jit(f2)(x, y), f2(x, y), "lone product");
}

TEST(FusedReduceTest, LeavesOtherReductionsAlone) {
  auto split = [](const std::vector<Array>& a) {
    return std::vector<Array>{sum(value(a[0], a[1]), {0, 2})};  // a kept dim between
  };
  Program p = optimized(split, {f32({8, 4, 64}), f32({8, 4, 64})});
  EXPECT_EQ(count(p, PrimitiveId::kFusedReduce), 0) << print_program(p);
  EXPECT_EQ(count(p, PrimitiveId::kReduceSum), 1) << print_program(p);
  auto half = [](const std::vector<Array>& a) {  // a bf16 value
    return std::vector<Array>{sum(astype(value(a[0], a[1]), DType::kBF16), {1})};
  };
  p = optimized(half, {f32({8, 64}), f32({8, 64})});
  EXPECT_EQ(count(p, PrimitiveId::kFusedReduce), 0) << print_program(p);
  auto unit = [](const std::vector<Array>& a) {  // only a size-1 axis
    return std::vector<Array>{sum(value(a[0], a[1]), {1})};
  };
  p = optimized(unit, {f32({8, 1}), f32({8, 1})});
  EXPECT_EQ(count(p, PrimitiveId::kFusedReduce), 0) << print_program(p);
  // Two reductions of one group: the first joins it, the second reads the value it returns.
  auto two = [](const std::vector<Array>& a) {
    Array v = value(a[0], a[1]);
    return std::vector<Array>{sum(v, {1}), max(v, {1})};
  };
  p = optimized(two, {f32({8, 64}), f32({8, 64})});
  EXPECT_EQ(count(p, PrimitiveId::kFusedReduce), 1) << print_program(p);
  EXPECT_EQ(count(p, PrimitiveId::kReduceMax), 1) << print_program(p);
}

TEST(FusedReduceTest, JitGivesEagerBitsOnEveryPath) {
  for (Codegen mode : {Codegen::kAuto, Codegen::kAlways, Codegen::kOff}) {
    cpu::fusion::set_codegen(mode);
    for (const Layout& l : kLayouts) {
      Array x = uniform(1, l.shape), y = uniform(2, l.shape);
      for (PrimitiveId op :
           {PrimitiveId::kReduceSum, PrimitiveId::kReduceMax, PrimitiveId::kReduceMin}) {
        const std::string what = std::string(kPrimitiveNames[static_cast<int>(op)]) + " of " +
                                 shape_str(l.shape) + " codegen " +
                                 std::to_string(static_cast<int>(mode));
        auto fn = [op, axes = l.axes](const Array& a, const Array& b) {
          return reduce(op, value(a, b), axes);
        };
        expect_bitwise(jit(fn)(x, y), fn(x, y), what);
        // The reduced value returned as well (so written whole), and a second output.
        auto both = [op, axes = l.axes](const Array& a, const Array& b) {
          Array v = value(a, b);
          return std::vector<Array>{reduce(op, v, axes), v, a * b};
        };
        std::vector<Array> got = jit(both)(x, y), want = both(x, y);
        for (size_t k = 0; k < want.size(); ++k) {
          expect_bitwise(got[k], want[k], what + " output " + std::to_string(k));
        }
      }
    }
  }
  cpu::fusion::set_codegen(Codegen::kAuto);
}

// An optimizer-like update whose new value is returned in the donated parameter's buffer and
// whose sum of squares (a parameter norm) is taken in the same pass.
TEST(FusedReduceTest, DonatedInputIsUpdatedInPlace) {
  auto update = [](const Array& p, const Array& g) {
    Array q = p - 0.01f * tanh(g) + p * 1e-3f;
    return std::vector<Array>{q, sum(q * q)};
  };
  const Shape shape{1 << 20};
  Array p = uniform(3, shape), g = uniform(4, shape);
  std::vector<Array> want = update(p, g);
  eval(want[0]);
  eval(want[1]);
  EXPECT_EQ(count(optimized([&](const std::vector<Array>& a) { return update(a[0], a[1]); },
                            {f32(shape), f32(shape)}),
                  PrimitiveId::kFusedReduce),
            1);
  const void* p_data = p.buffer()->data();
  std::vector<Array> got = jit(update, {.donate_argnums = {0}})(p, g);
  EXPECT_EQ(got[0].buffer()->data(), p_data);
  expect_bitwise(got[0], want[0], "updated parameter");
  expect_bitwise(got[1], want[1], "its sum of squares");
}

// RMSNorm as nn writes it: the mean of squares per row fuses with the square (and the residual
// add before it); values equal eager's.
TEST(FusedReduceTest, RmsNormEqualsEager) {
  auto norm = [](const Array& x, const Array& r, const Array& w) {
    Array h = x + r;
    Array ms = mean(h * h, {-1}, /*keepdims=*/true);
    return h * rsqrt(ms + 1e-5f) * w;
  };
  Array x = uniform(5, {8, 256, 512}), r = uniform(6, {8, 256, 512}), w = uniform(7, {512});
  Program p = optimized(
      [&](const std::vector<Array>& a) { return std::vector<Array>{norm(a[0], a[1], a[2])}; },
      {f32({8, 256, 512}), f32({8, 256, 512}), f32({512})});
  EXPECT_EQ(count(p, PrimitiveId::kFusedReduce), 1) << print_program(p);
  expect_bitwise(jit(norm)(x, r, w), norm(x, r, w), "rms norm");
}

TEST(FusedReduceTest, BuilderRejectsOtherBodies) {
  auto body = std::make_shared<Program>();
  body->avals = {f32({4, 16}), f32({4})};
  body->inputs = {0};
  Instr r;
  r.prim = std::make_shared<Reduce>(PrimitiveId::kReduceSum, std::vector<int>{1});
  r.in = {0};
  r.out = {1};
  body->instrs = {r};
  body->outputs = {1};
  testing_util::expect_error([&] { make_fused_reduce(body); }, "[fused_reduce]",
                             "must be a fused_elementwise and a reduce");
}

}  // namespace
}  // namespace graft
