// Each jit pass on small programs: golden printed IR before and after.
#include <cmath>

#include "core/backend/backend.h"
#include "core/ops.h"
#include "gtest/gtest.h"
#include "tests/transforms/pass_test_util.h"
#include "transforms/passes/passes.h"

namespace graft {
namespace {

using pass_test::f32;
using pass_test::program_of;

TEST(JitPassesTest, DeadCodeElimination) {
  Program p = program_of(
      [](const std::vector<Array>& x) {
        return std::vector<Array>{exp(x[0]), x[0] * x[0]};
      },
      {f32({3})});
  p.outputs.erase(p.outputs.begin());  // exp is no longer needed
  EXPECT_EQ(print_program(p),
            "{ lambda ; a:f32[3]. let\n"
            "    b:f32[3] = exp a\n"
            "    c:f32[3] = mul a a\n"
            "  in (c) }");
  EXPECT_EQ(print_program(eliminate_dead_code(p)),
            "{ lambda ; a:f32[3]. let\n"
            "    b:f32[3] = mul a a\n"
            "  in (b) }");
}

TEST(JitPassesTest, CommonSubexpressions) {
  Program p = program_of(
      [](const std::vector<Array>& x) {
        Array a = sin(x[0]) + sin(x[0]);
        Array b = x[0] * 2.0 + x[0] * 2.0;  // two literal 2.0s: equal constants merge
        return std::vector<Array>{a, b, sum(x[0], {0}), sum(x[0], {0}, true)};
      },
      {f32({3})});
  EXPECT_EQ(print_program(p),
            "{ lambda ; a:f32[3]. let\n"
            "    b:f32[3] = sin a\n"
            "    c:f32[3] = sin a\n"
            "    d:f32[3] = add b c\n"
            "    e:f32[] = convert_element_type[new_dtype=f32] 2.0:f64[]{weak}\n"
            "    f:f32[3] = broadcast_in_dim[shape=(3,) broadcast_dimensions=()] e\n"
            "    g:f32[3] = mul a f\n"
            "    h:f32[] = convert_element_type[new_dtype=f32] 2.0:f64[]{weak}\n"
            "    i:f32[3] = broadcast_in_dim[shape=(3,) broadcast_dimensions=()] h\n"
            "    j:f32[3] = mul a i\n"
            "    k:f32[3] = add g j\n"
            "    l:f32[] = reduce_sum[axes=(0,)] a\n"
            "    m:f32[] = reduce_sum[axes=(0,)] a\n"
            "    n:f32[1] = reshape[new_sizes=(1,)] m\n"
            "  in (d, k, l, n) }");
  EXPECT_EQ(print_program(eliminate_dead_code(eliminate_common_subexpressions(p))),
            "{ lambda ; a:f32[3]. let\n"
            "    b:f32[3] = sin a\n"
            "    c:f32[3] = add b b\n"
            "    d:f32[] = convert_element_type[new_dtype=f32] 2.0:f64[]{weak}\n"
            "    e:f32[3] = broadcast_in_dim[shape=(3,) broadcast_dimensions=()] d\n"
            "    f:f32[3] = mul a e\n"
            "    g:f32[3] = add f f\n"
            "    h:f32[] = reduce_sum[axes=(0,)] a\n"
            "    i:f32[1] = reshape[new_sizes=(1,)] h\n"
            "  in (c, g, h, i) }");
}

TEST(JitPassesTest, ConstantFolding) {
  Array w = array<float>({1, 2, 3});
  Program p = program_of(
      [&](const std::vector<Array>& x) {
        Array c = exp(w) * 2.0 + iota(DType::kF32, {3});  // no input: folded
        return std::vector<Array>{x[0] * c};
      },
      {f32({3})});
  EXPECT_EQ(print_program(p),
            "{ lambda a:f32[3] ; b:f32[3]. let\n"
            "    c:f32[3] = exp a\n"
            "    d:f32[] = convert_element_type[new_dtype=f32] 2.0:f64[]{weak}\n"
            "    e:f32[3] = broadcast_in_dim[shape=(3,) broadcast_dimensions=()] d\n"
            "    f:f32[3] = mul c e\n"
            "    g:f32[3] = iota[dtype=f32 shape=(3,) dimension=0]\n"
            "    h:f32[3] = add f g\n"
            "    i:f32[3] = mul b h\n"
            "  in (i) }");
  Program q = eliminate_dead_code(fold_constants(p));
  EXPECT_EQ(print_program(q),
            "{ lambda a:f32[3] ; b:f32[3]. let\n"
            "    c:f32[3] = mul b a\n"
            "  in (c) }");
  ASSERT_EQ(q.constant_values.size(), 1u);
  std::vector<float> c = q.constant_values[0].to_vector<float>();
  for (int i = 0; i < 3; ++i) EXPECT_FLOAT_EQ(c[i], std::exp(float(i + 1)) * 2 + i);
}

TEST(JitPassesTest, AlgebraicIdentities) {
  Program p = program_of(
      [](const std::vector<Array>& x) {
        Array a = (x[0] * 1.0 + 0.0) - 0.0;
        Array b = 1.0f * astype(x[0], DType::kF32);
        Array c = x[0] * ones({2, 3});  // an array of ones: still the identity
        Array d = x[0] * 2.0 + 0.0;
        return std::vector<Array>{a, b, c, d};
      },
      {f32({2, 3})});
  EXPECT_EQ(print_program(optimize(p)),
            "{ lambda a:f32[2,3] ; b:f32[2,3]. let\n"
            "    c:f32[2,3] = mul b a\n"
            "  in (b, b, b, c) }");
}

// A large broadcast is not folded into a constant; the product reads the scalar in place (a
// lone op reading a broadcast is a group of one), and x * 1 still simplifies away.
TEST(JitPassesTest, LargeBroadcastsAreNotFoldedAndStillSimplify) {
  Program p = program_of(
      [](const std::vector<Array>& x) {
        return std::vector<Array>{x[0] * 1.0, x[0] * 3.0};
      },
      {f32({512, 1024})});
  EXPECT_EQ(print_program(optimize(p)),
            "{ lambda ; a:f32[512,1024]. let\n"
            "    b:f32[512,1024] = fused_elementwise[\n"
            "      body={ lambda ; c:f32[512,1024] d:f32[]. let\n"
            "          e:f32[512,1024] = broadcast_in_dim[shape=(512, 1024) "
            "broadcast_dimensions=()] d\n"
            "          f:f32[512,1024] = mul c e\n"
            "        in (f) }\n"
            "    ] a 3.0:f32[]\n"
            "  in (a, b) }");
}

TEST(JitPassesTest, TransposesAndReshapes) {
  Program p = program_of(
      [](const std::vector<Array>& x) {
        Array t = transpose(transpose(x[0], std::vector<int>{1, 2, 0}), std::vector<int>{2, 0, 1});
        Array u = transpose(transpose(x[0], std::vector<int>{1, 0, 2}), std::vector<int>{0, 2, 1});
        Array r = reshape(reshape(x[0], {6, 4}), {4, 6});
        Array s = reshape(reshape(x[0], {24}), {2, 3, 4});
        return std::vector<Array>{t, u, r, s};
      },
      {f32({2, 3, 4})});
  EXPECT_EQ(print_program(p),
            "{ lambda ; a:f32[2,3,4]. let\n"
            "    b:f32[3,4,2] = transpose[permutation=(1, 2, 0)] a\n"
            "    c:f32[2,3,4] = transpose[permutation=(2, 0, 1)] b\n"
            "    d:f32[3,2,4] = transpose[permutation=(1, 0, 2)] a\n"
            "    e:f32[3,4,2] = transpose[permutation=(0, 2, 1)] d\n"
            "    f:f32[6,4] = reshape[new_sizes=(6, 4)] a\n"
            "    g:f32[4,6] = reshape[new_sizes=(4, 6)] f\n"
            "    h:f32[24] = reshape[new_sizes=(24,)] a\n"
            "    i:f32[2,3,4] = reshape[new_sizes=(2, 3, 4)] h\n"
            "  in (c, e, g, i) }");
  EXPECT_EQ(print_program(eliminate_dead_code(simplify_algebra(p))),
            "{ lambda ; a:f32[2,3,4]. let\n"
            "    b:f32[3,4,2] = transpose[permutation=(1, 2, 0)] a\n"
            "    c:f32[4,6] = reshape[new_sizes=(4, 6)] a\n"
            "  in (a, b, c, a) }");
}

// transpose(dot_general(a, b)) that swaps the product's free dims becomes dot_general(b, a)
// (reverse mode's dW = (dy^T x)^T), batch dims kept first; not when the product has another
// reader, nor for a transpose that moves the batch dims.
TEST(JitPassesTest, TransposedProductsSwapTheirOperands) {
  Program p = program_of(
      [](const std::vector<Array>& x) {
        Array w = transpose(dot_general(x[0], x[1], {{0}, {0}, {}, {}}), std::vector<int>{1, 0});
        Array shared = dot_general(x[0], x[1], {{0}, {0}, {}, {}}, DType::kF32);
        Array kept = transpose(shared, std::vector<int>{1, 0});
        Array batched =
            transpose(dot_general(x[2], x[3], {{2}, {1}, {0}, {0}}), std::vector<int>{0, 2, 1});
        Array moved =
            transpose(dot_general(x[2], x[3], {{2}, {1}, {0}, {0}}), std::vector<int>{2, 1, 0});
        return std::vector<Array>{w, kept, shared * 2.0f, batched, moved};
      },
      {f32({6, 3}), f32({6, 5}), f32({2, 3, 4}), f32({2, 4, 7})});
  EXPECT_EQ(print_program(eliminate_dead_code(simplify_algebra(p))),
            "{ lambda ; a:f32[6,3] b:f32[6,5] c:f32[2,3,4] d:f32[2,4,7]. let\n"
            "    e:f32[5,3] = dot_general[dimension_numbers=(((0), (0)), ((), ()))] b a\n"
            "    f:f32[3,5] = dot_general[dimension_numbers=(((0), (0)), ((), ())) "
            "preferred_element_type=f32] a b\n"
            "    g:f32[5,3] = transpose[permutation=(1, 0)] f\n"
            "    h:f32[] = convert_element_type[new_dtype=f32] 2.0:f32[]{weak}\n"
            "    i:f32[3,5] = broadcast_in_dim[shape=(3, 5) broadcast_dimensions=()] h\n"
            "    j:f32[3,5] = mul f i\n"
            "    k:f32[2,7,3] = dot_general[dimension_numbers=(((1), (2)), ((0), (0)))] d c\n"
            "    l:f32[2,3,7] = dot_general[dimension_numbers=(((2), (1)), ((0), (0)))] c d\n"
            "    m:f32[7,3,2] = transpose[permutation=(2, 1, 0)] l\n"
            "  in (e, g, j, k, m) }");
  // The values: the swapped products against the unrewritten program's, on integers (exact).
  Array a = astype(reshape(arange(18), {6, 3}), DType::kF32);
  Array b = astype(reshape(arange(30), {6, 5}), DType::kF32) * 0.5f;
  Array c = astype(reshape(arange(24), {2, 3, 4}), DType::kF32);
  Array d = astype(reshape(arange(56), {2, 4, 7}), DType::kF32) - 20.0f;
  std::vector<Array> got = run_program(eliminate_dead_code(simplify_algebra(p)), {a, b, c, d});
  std::vector<Array> want = run_program(p, {a, b, c, d});
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i].shape(), want[i].shape()) << i;
    EXPECT_EQ(got[i].to_vector<float>(), want[i].to_vector<float>()) << i;
  }
}

TEST(JitPassesTest, ExecuteRunsTheProgram) {
  Program p = optimize(program_of(
      [](const std::vector<Array>& x) {
        return std::vector<Array>{x[0] * x[1] + 1.0, x[1]};
      },
      {f32({2}), f32({2})}));
  Array a = array<float>({1, 2}), b = array<float>({3, 4});
  auto exe = default_backend().compile(std::make_shared<const Program>(p));
  std::vector<Array> out = exe->run({a, b});
  EXPECT_EQ(out[0].to_vector<float>(), (std::vector<float>{4, 9}));
  EXPECT_TRUE(out[1].same(b));  // an output that is a kept argument is that argument
  EXPECT_THROW(exe->run({a}), Error);
}

TEST(JitPassesTest, OuterTracerIsNotLowered) {
  Array outer = Array::placeholder(f32({2}));
  EXPECT_FALSE(
      lower(
          trace_avals([&](const std::vector<Array>& x) { return std::vector<Array>{x[0] * outer}; },
                      {f32({2})}))
          .has_value());
}

}  // namespace
}  // namespace graft
