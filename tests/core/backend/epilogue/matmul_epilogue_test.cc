// The GEMM epilogue matcher (core/backend/epilogue/matmul_epilogue.h) on programs traced and
// optimized as jit does (fused and unfused forms): which dot_generals it gives a bias / relu
// epilogue, with which instructions absorbed, and which it leaves alone.
#include "core/backend/epilogue/matmul_epilogue.h"

#include <cmath>
#include <functional>
#include <optional>
#include <vector>

#include "core/ops.h"
#include "gtest/gtest.h"
#include "nn/activations.h"
#include "transforms/jit.h"
#include "transforms/passes/passes.h"

namespace graft {
namespace {

using Act = MatmulEpilogue::Activation;
using Fn = std::function<Array(const Array&, const Array&, const Array&)>;

Aval f32(Shape s) { return Aval{std::move(s), DType::kF32, false}; }

Program traced(const Fn& f, std::vector<Aval> avals) {
  std::optional<Program> p = lower(trace_avals(
      [&](const std::vector<Array>& x) { return std::vector<Array>{f(x[0], x[1], x[2])}; }, avals));
  EXPECT_TRUE(p.has_value());
  return *p;
}

// x [8, 16] @ w [16, 32] with a bias of shape `bias`.
Program program(const Fn& f, Shape bias = {32}, bool optimized = true) {
  Program p = traced(f, {f32({8, 16}), f32({16, 32}), f32(std::move(bias))});
  return optimized ? optimize(p) : p;
}

std::vector<PrimitiveId> ids(const Program& p, const std::vector<int>& instrs) {
  std::vector<PrimitiveId> out;
  for (int i : instrs) out.push_back(p.instrs[i].prim->id());
  return out;
}

// The instruction whose output is value v.
int producer_of(const Program& p, int v) {
  for (size_t i = 0; i < p.instrs.size(); ++i) {
    for (int o : p.instrs[i].out) {
      if (o == v) return static_cast<int>(i);
    }
  }
  return -1;
}

TEST(MatmulEpilogueTest, BiasAndReluFusedByJit) {
  for (bool optimized : {true, false}) {
    Program p = program([](const Array& x, const Array& w,
                           const Array& b) { return maximum(matmul(x, w) + b, 0.0f); },
                        {32}, optimized);
    std::vector<MatmulEpilogue> m = match_matmul_epilogues(p);
    ASSERT_EQ(m.size(), 1u) << print_program(p);
    ASSERT_GE(m[0].result, 0) << print_program(p);
    EXPECT_EQ(p.instrs[m[0].dot].prim->id(), PrimitiveId::kDotGeneral);
    EXPECT_EQ(m[0].bias, p.inputs[2]) << print_program(p);
    EXPECT_EQ(m[0].activation, Act::kRelu) << print_program(p);
    EXPECT_EQ(m[0].result, m[0].absorbed.back());
    EXPECT_EQ(p.instrs[m[0].result].out[0], p.outputs[0]);
    // Fused, the group reads the bias vector in place (no broadcast instruction is left).
    std::vector<PrimitiveId> want =
        optimized ? std::vector<PrimitiveId>{PrimitiveId::kFusedElementwise}
                  : std::vector<PrimitiveId>{PrimitiveId::kBroadcastInDim, PrimitiveId::kAdd,
                                             PrimitiveId::kMax};
    EXPECT_EQ(ids(p, m[0].absorbed), want) << print_program(p);
  }
}

TEST(MatmulEpilogueTest, BiasAloneAndReluAlone) {
  for (bool optimized : {true, false}) {
    Program bias =
        program([](const Array& x, const Array& w, const Array& b) { return b + matmul(x, w); },
                {32}, optimized);
    std::vector<MatmulEpilogue> m = match_matmul_epilogues(bias);
    ASSERT_EQ(m.size(), 1u) << print_program(bias);
    EXPECT_EQ(m[0].bias, bias.inputs[2]);
    EXPECT_EQ(m[0].activation, Act::kNone);

    Program relu = program(
        [](const Array& x, const Array& w, const Array&) { return maximum(matmul(x, w), 0.0f); },
        {32}, optimized);
    m = match_matmul_epilogues(relu);
    ASSERT_EQ(m.size(), 1u) << print_program(relu);
    EXPECT_EQ(m[0].bias, -1);
    EXPECT_EQ(m[0].activation, Act::kRelu);
    EXPECT_EQ(m[0].absorbed, std::vector<int>{m[0].result});
  }
}

// A bias that does not broadcast along the rows: [8, 1] (per row), [8, 32] (a full matrix).
// A [1, 32] bias does: reshaped to [32] first, that vector is the epilogue's bias.
TEST(MatmulEpilogueTest, BiasOfTheWrongShapeIsNotFused) {
  Fn f = [](const Array& x, const Array& w, const Array& b) { return matmul(x, w) + b; };
  for (Shape s : {Shape{8, 1}, Shape{8, 32}}) {
    Program p = program(f, s);
    EXPECT_TRUE(match_matmul_epilogues(p).empty()) << print_program(p);
  }
  Program row = program(f, {1, 32});
  std::vector<MatmulEpilogue> m = match_matmul_epilogues(row);
  ASSERT_EQ(m.size(), 1u) << print_program(row);
  EXPECT_EQ(row.avals[m[0].bias].shape, Shape{32});
  EXPECT_EQ(row.instrs[producer_of(row, m[0].bias)].prim->id(), PrimitiveId::kReshape);
}

// The dot's value is read twice (also returned, or read by another op): the GEMM must write
// it as it is, so no epilogue.
TEST(MatmulEpilogueTest, DotWithOtherUsersIsNotFused) {
  Program twice = program([](const Array& x, const Array& w, const Array& b) {
    Array d = matmul(x, w);
    return (d + b) * sum(d);
  });
  EXPECT_TRUE(match_matmul_epilogues(twice).empty()) << print_program(twice);
  Program returned =
      traced([](const Array& x, const Array& w, const Array& b) { return matmul(x, w) + b; },
             {f32({8, 16}), f32({16, 32}), f32({32})});
  returned.outputs.push_back(returned.instrs[0].out[0]);  // the dot's value leaves too
  EXPECT_EQ(returned.instrs[0].prim->id(), PrimitiveId::kDotGeneral);
  EXPECT_TRUE(match_matmul_epilogues(returned).empty()) << print_program(returned);
}

// A group doing more than the epilogue (here a tanh after the relu) is left alone, as is a
// max against something that is not zero.
TEST(MatmulEpilogueTest, MoreThanTheEpilogueIsNotFused) {
  Program more = program([](const Array& x, const Array& w, const Array& b) {
    return tanh(maximum(matmul(x, w) + b, 0.0f));
  });
  EXPECT_TRUE(match_matmul_epilogues(more).empty()) << print_program(more);
  for (bool optimized : {true, false}) {
    Program not_zero = program(
        [](const Array& x, const Array& w, const Array&) { return maximum(matmul(x, w), 0.5f); },
        {32}, optimized);
    EXPECT_TRUE(match_matmul_epilogues(not_zero).empty()) << print_program(not_zero);
  }
}

// A bf16 product with an f32 bias is promoted to f32 before the add: the dot's value is read
// by a conversion, not the add, so no epilogue; an integer dot has none either.
TEST(MatmulEpilogueTest, DtypeMismatchesAreNotFused) {
  Program mixed = optimize(
      traced([](const Array& x, const Array& w, const Array& b) { return matmul(x, w) + b; },
             {Aval{{8, 16}, DType::kBF16, false}, Aval{{16, 32}, DType::kBF16, false}, f32({32})}));
  EXPECT_TRUE(match_matmul_epilogues(mixed).empty()) << print_program(mixed);
  Program ints = optimize(
      traced([](const Array& x, const Array& w, const Array& b) { return matmul(x, w) + b; },
             {Aval{{8, 16}, DType::kI32, false}, Aval{{16, 32}, DType::kI32, false},
              Aval{{32}, DType::kI32, false}}));
  EXPECT_TRUE(match_matmul_epilogues(ints).empty()) << print_program(ints);
}

// nn::relu is a custom_jvp_call in a jit program (its fun holds the max): the epilogue's relu.
TEST(MatmulEpilogueTest, NnReluCallIsRelu) {
  for (bool optimized : {true, false}) {
    for (bool bias : {true, false}) {
      Program p = program(
          [bias](const Array& x, const Array& w, const Array& b) {
            return nn::relu(bias ? matmul(x, w) + b : matmul(x, w));
          },
          {32}, optimized);
      std::vector<MatmulEpilogue> m = match_matmul_epilogues(p);
      ASSERT_EQ(m.size(), 1u) << print_program(p);
      EXPECT_EQ(m[0].bias, bias ? p.inputs[2] : -1);
      EXPECT_EQ(m[0].activation, Act::kRelu) << print_program(p);
      EXPECT_EQ(p.instrs[m[0].result].prim->id(), PrimitiveId::kCustomJvpCall);
      EXPECT_EQ(p.instrs[m[0].result].out[0], p.outputs[0]);
    }
  }
}

// nn::gelu's tanh form, with and without a bias, fused by jit (one group) or not (a chain of
// mul / add / tanh over broadcast constants): the whole chain is the epilogue's gelu.
TEST(MatmulEpilogueTest, NnGeluTanhIsGelu) {
  for (bool optimized : {true, false}) {
    for (bool bias : {true, false}) {
      Program p = program(
          [bias](const Array& x, const Array& w, const Array& b) {
            return nn::gelu(bias ? matmul(x, w) + b : matmul(x, w));
          },
          {32}, optimized);
      std::vector<MatmulEpilogue> m = match_matmul_epilogues(p);
      ASSERT_EQ(m.size(), 1u) << print_program(p);
      EXPECT_EQ(m[0].bias, bias ? p.inputs[2] : -1);
      EXPECT_EQ(m[0].activation, Act::kGelu) << print_program(p);
      EXPECT_EQ(p.instrs[m[0].result].out[0], p.outputs[0]);
      EXPECT_EQ(m[0].result, m[0].absorbed.back());
      // Absorbed: every instruction but the dot and the constants' (not read elsewhere, they
      // still run, and cost nothing that matters), and the bias's broadcast when unfused (a
      // fused group reads the bias vector in place).
      int counted = 0;
      for (const Instr& in : p.instrs) {
        const PrimitiveId id = in.prim->id();
        counted += id == PrimitiveId::kMul || id == PrimitiveId::kAdd || id == PrimitiveId::kTanh ||
                   id == PrimitiveId::kFusedElementwise;
      }
      EXPECT_EQ(static_cast<int>(m[0].absorbed.size()), counted + (bias && !optimized ? 1 : 0))
          << print_program(p);
    }
  }
}

// What is not cuBLASLt's gelu is left alone: the exact (erf) form, a changed constant, a
// chain whose inner value is also returned, and a gelu in bf16 still is matched (its constants
// rounded to bf16).
TEST(MatmulEpilogueTest, OtherGeluFormsAreNotGelu) {
  for (bool optimized : {true, false}) {
    Program exact = program(
        [](const Array& x, const Array& w, const Array&) { return nn::gelu(matmul(x, w), false); },
        {32}, optimized);
    EXPECT_TRUE(match_matmul_epilogues(exact).empty()) << print_program(exact);
    Program changed = program(
        [](const Array& x, const Array& w, const Array&) {
          Array h = matmul(x, w);
          return 0.5 * h * (1.0 + tanh(0.8 * (h + 0.044715 * h * h * h)));
        },
        {32}, optimized);
    EXPECT_TRUE(match_matmul_epilogues(changed).empty()) << print_program(changed);
    Program same = program(
        [](const Array& x, const Array& w, const Array&) {
          Array h = matmul(x, w);
          return 0.5 * h * (1.0 + tanh(std::sqrt(2.0 / M_PI) * (h + 0.044715 * h * h * h)));
        },
        {32}, optimized);
    std::vector<MatmulEpilogue> m = match_matmul_epilogues(same);
    ASSERT_EQ(m.size(), 1u) << print_program(same);
    EXPECT_EQ(m[0].activation, Act::kGelu);
  }
  std::optional<Program> leaks = lower(trace_avals(
      [](const std::vector<Array>& x) {
        Array h = matmul(x[0], x[1]);
        Array t = tanh(std::sqrt(2.0 / M_PI) * (h + 0.044715 * h * h * h));
        return std::vector<Array>{0.5 * h * (1.0 + t), t};
      },
      {f32({8, 16}), f32({16, 32})}));
  ASSERT_TRUE(leaks.has_value());
  EXPECT_TRUE(match_matmul_epilogues(*leaks).empty()) << print_program(*leaks);
  EXPECT_TRUE(match_matmul_epilogues(optimize(*leaks)).empty()) << print_program(optimize(*leaks));
  const Aval bf16_x{{8, 16}, DType::kBF16, false}, bf16_w{{16, 32}, DType::kBF16, false},
      bf16_b{{32}, DType::kBF16, false};
  Program bf16 = optimize(traced(
      [](const Array& x, const Array& w, const Array& b) { return nn::gelu(matmul(x, w) + b); },
      {bf16_x, bf16_w, bf16_b}));
  std::vector<MatmulEpilogue> mb = match_matmul_epilogues(bf16);
  ASSERT_EQ(mb.size(), 1u) << print_program(bf16);
  EXPECT_EQ(mb[0].activation, Act::kGelu);
}

// Batched dot_generals are not matched.
TEST(MatmulEpilogueTest, BatchedDotIsNotFused) {
  Program p = optimize(
      traced([](const Array& x, const Array& w, const Array& b) { return matmul(x, w) + b; },
             {f32({2, 8, 16}), f32({2, 16, 32}), f32({32})}));
  EXPECT_TRUE(match_matmul_epilogues(p).empty()) << print_program(p);
}

}  // namespace
}  // namespace graft
