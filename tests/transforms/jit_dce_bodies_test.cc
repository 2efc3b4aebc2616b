// jit's DCE through cond / switch_case and while_loop (Primitive::prune): golden printed IR of
// the pruned programs (unused outputs, carries, operands and consts gone; a carry the cond
// reads, or one a kept carry needs, stays; a const left unread by hoisting goes; a body's
// debug_print keeps its loop and what it reads), and jit == eager on each, grad too for cond.
#include <functional>
#include <string>
#include <tuple>

#include "core/ops.h"
#include "core/ir/effects.h"
#include "core/primitives/debug.h"
#include "gtest/gtest.h"
#include "tests/transforms/pass_test_util.h"
#include "transforms/autodiff.h"
#include "transforms/control_flow.h"
#include "transforms/jit.h"
#include "transforms/passes/passes.h"

namespace graft {
namespace {

using pass_test::count;
using pass_test::expect_close;
using pass_test::f32;
using pass_test::program_of;
using pass_test::randn;

// jit(f) == f, and (differentiate) grad of the sum of squares of the outputs, jitted or not,
// == grad of it eagerly, in both arguments.
template <typename F>
void expect_jit_matches(F f, const Array& a, const Array& b, bool differentiate) {
  std::vector<Array> want = f(a, b), got = jit(f)(a, b);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) expect_close(got[i], want[i]);
  if (!differentiate) return;
  auto loss = [f](const Array& a, const Array& b) {
    Array s = Array(0.0f);
    for (const Array& o : f(a, b)) s = s + sum(o * o);
    return s;
  };
  auto [ea, eb] = grad(loss, argnums<0, 1>)(a, b);
  auto [ga, gb] = grad(jit(loss), argnums<0, 1>)(a, b);
  expect_close(ga, ea);
  expect_close(gb, eb);
  auto [ja, jb] = jit(grad(loss, argnums<0, 1>))(a, b);
  expect_close(ja, ea);
  expect_close(jb, eb);
}

Program dce_of(const FlatFn& fn, const std::vector<Aval>& avals) {
  return eliminate_dead_code(program_of(fn, avals));
}

// The first instruction applying `id` (fails the test when there is none).
const Instr& first(const Program& p, PrimitiveId id) {
  for (const Instr& instr : p.instrs) {
    if (instr.prim->id() == id) return instr;
  }
  ADD_FAILURE() << "no such instruction in\n" << print_program(p);
  return p.instrs.at(0);
}

// Only the first output is used: the second (and b, and w, which only it reads) go.
std::vector<Array> cond_unused(const Array& a, const Array& b) {
  Array w = exp(a) * 3.0f;  // a traced value the true branch closes over (a const of the cond)
  auto [x, y] = cond(
      sum(a) > 0.0f, [w](const Array& a, const Array& b) { return std::pair{a * 2.0f, b * w}; },
      [](const Array& a, const Array& b) { return std::pair{a - 1.0f, b * b}; }, a, b);
  return {x};
}

TEST(JitDceBodiesTest, CondDropsUnusedOutputsOperandsAndConsts) {
  Program p = program_of([](const std::vector<Array>& in) { return cond_unused(in[0], in[1]); },
                         {f32({3}), f32({3})});
  EXPECT_EQ(first(p, PrimitiveId::kCond).in.size(), 4u);  // the index, a, b and w
  EXPECT_EQ(first(p, PrimitiveId::kCond).out.size(), 2u);
  Program q = eliminate_dead_code(p);
  EXPECT_EQ(print_program(q),
      "{ lambda ; a:f32[3] b:f32[3]. let\n"
      "    c:f32[] = reduce_sum[axes=(0,)] a\n"
      "    d:f32[] = convert_element_type[new_dtype=f32] 0.0:f32[]{weak}\n"
      "    e:bool[] = gt c d\n"
      "    f:i32[] = convert_element_type[new_dtype=i32] e\n"
      "    g:f32[3] = cond[branches=2\n"
      "      branch0={ lambda h:f32[3] ; i:f32[3]. let\n"
      "          j:f32[3] = sub i h\n"
      "        in (j) }\n"
      "      branch1={ lambda k:f32[3] ; l:f32[3]. let\n"
      "          m:f32[3] = mul l k\n"
      "        in (m) }\n"
      "    ] f a\n"
      "  in (g) }");
  const Instr& c = first(q, PrimitiveId::kCond);
  EXPECT_EQ(c.in.size(), 2u);  // the index and a
  EXPECT_EQ(c.out.size(), 1u);
  for (bool pos : {true, false}) {
    Array a = randn({3}, 1) + (pos ? 3.0f : -3.0f), b = randn({3}, 2);
    expect_jit_matches(cond_unused, a, b, true);
  }
}

using Branch = std::function<std::pair<Array, Array>(const Array&, const Array&)>;

// Three branches; only the first output is used, and only the second output reads b.
std::vector<Array> switch_unused(const Array& a, const Array& b) {
  std::vector<Branch> branches = {
      [](const Array& a, const Array& b) { return std::pair{sin(a), exp(b)}; },
      [](const Array& a, const Array& b) { return std::pair{a * a, b + 1.0f}; },
      [](const Array& a, const Array& b) { return std::pair{tanh(a), a * b}; },
  };
  Array index = astype(sum(a) > 0.0f, DType::kI32) * 2;  // branch 0 or 2
  auto [x, y] = switch_case(index, branches, a, b);
  return {x};
}

TEST(JitDceBodiesTest, SwitchDropsUnusedOutputsFromEveryBranch) {
  Program p = program_of([](const std::vector<Array>& in) { return switch_unused(in[0], in[1]); },
                         {f32({3}), f32({3})});
  EXPECT_EQ(first(p, PrimitiveId::kCond).in.size(), 3u);  // the index, a and b
  EXPECT_EQ(first(p, PrimitiveId::kCond).out.size(), 2u);
  Program q = eliminate_dead_code(p);
  EXPECT_EQ(print_program(q),
      "{ lambda ; a:f32[3] b:f32[3]. let\n"
      "    c:f32[] = reduce_sum[axes=(0,)] a\n"
      "    d:f32[] = convert_element_type[new_dtype=f32] 0.0:f32[]{weak}\n"
      "    e:bool[] = gt c d\n"
      "    f:i32[] = convert_element_type[new_dtype=i32] e\n"
      "    g:i32[] = convert_element_type[new_dtype=i32] 2:i32[]{weak}\n"
      "    h:i32[] = mul f g\n"
      "    i:f32[3] = cond[branches=3\n"
      "      branch0={ lambda ; j:f32[3]. let\n"
      "          k:f32[3] = sin j\n"
      "        in (k) }\n"
      "      branch1={ lambda ; l:f32[3]. let\n"
      "          m:f32[3] = mul l l\n"
      "        in (m) }\n"
      "      branch2={ lambda ; n:f32[3]. let\n"
      "          o:f32[3] = tanh n\n"
      "        in (o) }\n"
      "    ] h a\n"
      "  in (i) }");
  for (bool pos : {true, false}) {
    Array a = randn({3}, 3) + (pos ? 3.0f : -3.0f), b = randn({3}, 4);
    expect_jit_matches(switch_unused, a, b, true);
  }
}

// Carries (i, c, u, v): only c is used outside. i stays (the cond reads it); u and v go (u
// reads v, but nothing kept reads either). Explicit consts: the cond's limit, read through
// limit * 1, and the body's w, read through exp(w): both move out of their bodies
// (hoisting), after which the bodies no longer read limit and w themselves: they go.
std::vector<Array> while_unused(const Array& w, const Array& c0) {
  FlatFn cond = [](const std::vector<Array>& in) {  // [limit, i, c, u, v]
    return std::vector<Array>{in[1] < in[0] * 1.5f};
  };
  FlatFn body = [](const std::vector<Array>& in) {  // [w, i, c, u, v]
    return std::vector<Array>{in[1] + 1.0f, in[2] * 0.5f + exp(in[0]), tanh(in[3]) + in[4],
                              in[4] * 2.0f};
  };
  Array limit = Array(2.0f) + sum(w) * 0.0f;
  return {detail::bind_while(cond, body, {limit}, {w},
                             {Array(0.0f), c0, c0 * 3.0f, c0 + 1.0f})[1]};
}

TEST(JitDceBodiesTest, WhileDropsUnusedCarriesAndUnreadConsts) {
  Program p = program_of([](const std::vector<Array>& in) { return while_unused(in[0], in[1]); },
                         {f32({3}), f32({3})});
  EXPECT_EQ(first(p, PrimitiveId::kWhileLoop).in.size(), 6u);  // limit, w and 4 carries
  EXPECT_EQ(print_program(eliminate_dead_code(p)),
      "{ lambda ; a:f32[3] b:f32[3]. let\n"
      "    c:f32[] = convert_element_type[new_dtype=f32] 2.0:f32[]{weak}\n"
      "    d:f32[] = reduce_sum[axes=(0,)] a\n"
      "    e:f32[] = convert_element_type[new_dtype=f32] 0.0:f32[]{weak}\n"
      "    f:f32[] = mul d e\n"
      "    g:f32[] = add c f\n"
      "    h:f32[]{weak} i:f32[3] = while_loop[cond_consts=1 body_consts=1\n"
      "      cond={ lambda ; j:f32[] k:f32[]{weak} l:f32[3]. let\n"
      "          m:f32[] = convert_element_type[new_dtype=f32] k\n"
      "          n:f32[] = mul j 1.5:f32[]\n"
      "          o:bool[] = lt m n\n"
      "        in (o) }\n"
      "      body={ lambda p:f32[3] ; q:f32[3] r:f32[]{weak} s:f32[3]. let\n"
      "          t:f32[]{weak} = add r 1.0:f32[]{weak}\n"
      "          u:f32[3] = mul s p\n"
      "          v:f32[3] = exp q\n"
      "          w:f32[3] = add u v\n"
      "        in (t, w) }\n"
      "    ] g a 0.0:f32[]{weak} b\n"
      "  in (i) }");
  EXPECT_EQ(print_program(optimize(p)),
      "{ lambda ; a:f32[3] b:f32[3]. let\n"
      "    c:f32[] = reduce_sum[axes=(0,)] a\n"
      "    d:f32[] = fused_elementwise[\n"
      "      body={ lambda ; e:f32[] f:f32[] g:f32[] h:f32[]. let\n"
      "          i:f32[] = mul e f\n"
      "          j:f32[] = add g i\n"
      "          k:f32[] = mul j h\n"
      "        in (k) }\n"
      "    ] c 0.0:f32[] 2.0:f32[] 1.5:f32[]\n"
      "    l:f32[3] = exp a\n"
      "    m:f32[]{weak} n:f32[3] = while_loop[cond_consts=1 body_consts=1\n"
      "      cond={ lambda ; o:f32[] p:f32[]{weak} q:f32[3]. let\n"
      "          r:bool[] = fused_elementwise[\n"
      "            body={ lambda ; s:f32[]{weak} t:f32[]. let\n"
      "                u:f32[] = convert_element_type[new_dtype=f32] s\n"
      "                v:bool[] = lt u t\n"
      "              in (v) }\n"
      "          ] p o\n"
      "        in (r) }\n"
      "      body={ lambda w:f32[3] ; x:f32[3] y:f32[]{weak} z:f32[3]. let\n"
      "          ba:f32[]{weak} = add y 1.0:f32[]{weak}\n"
      "          bb:f32[3] = fused_elementwise[\n"
      "            body={ lambda ; bc:f32[3] bd:f32[3] be:f32[3]. let\n"
      "                bf:f32[3] = mul bc bd\n"
      "                bg:f32[3] = add bf be\n"
      "              in (bg) }\n"
      "          ] z w x\n"
      "        in (ba, bb) }\n"
      "    ] d l 0.0:f32[]{weak} b\n"
      "  in (n) }");
  expect_jit_matches(while_unused, randn({3}, 5), randn({3}, 6), false);
}

// c <- c + u, u <- u * 2: u's final value is unused, but the kept c reads it: it stays.
std::vector<Array> while_chain(const Array& c0, const Array& u0) {
  auto [i, c, u] = while_loop(
      [](const std::tuple<Array, Array, Array>& s) { return std::get<0>(s) < 3.0f; },
      [](const std::tuple<Array, Array, Array>& s) {
        auto [i, c, u] = s;
        return std::tuple{i + 1.0f, c + u, u * 2.0f};
      },
      std::tuple{Array(0.0f), c0, u0});
  return {c};
}

TEST(JitDceBodiesTest, WhileKeepsACarryAKeptCarryReads) {
  Program q = dce_of([](const std::vector<Array>& in) { return while_chain(in[0], in[1]); },
                     {f32({3}), f32({3})});
  const Instr& w = first(q, PrimitiveId::kWhileLoop);
  EXPECT_EQ(w.in.size(), 3u) << print_program(q);
  EXPECT_EQ(w.out.size(), 3u);
  expect_jit_matches(while_chain, randn({3}, 7), randn({3}, 8), false);
}

// program_of, with the side effects recorded while tracing (as jit does).
Program program_with_effects(const FlatFn& fn, const std::vector<Aval>& avals) {
  std::vector<Array> effects;
  std::vector<Array>* prev = set_effect_collector(&effects);
  Graph g = trace_avals(fn, avals);
  set_effect_collector(prev);
  std::optional<Program> p = lower(g, effects);
  EXPECT_TRUE(p.has_value());
  return p ? *p : Program{};
}

class JitDceBodiesPrintTest : public ::testing::Test {
 protected:
  void SetUp() override {
    prev_ = set_debug_print_sink([this](const std::string& s) { lines_.push_back(s); });
  }
  void TearDown() override { set_debug_print_sink(prev_); }
  std::vector<std::string> lines_;
  DebugSink prev_;
};

// No output of the cond is used, but its true branch prints: the cond stays, with one output.
TEST_F(JitDceBodiesPrintTest, CondKeptForABranchPrintKeepsOneOutput) {
  auto f = [](const std::vector<Array>& in) {
    cond(
        sum(in[0]) > 0.0f,
        [](const Array& a, const Array& b) {
          debug_print("a = {}", a);
          return std::pair{a * 2.0f, b};
        },
        [](const Array& a, const Array& b) { return std::pair{a, b}; }, in[0], in[1]);
    return std::vector<Array>{in[1] * 2.0f};
  };
  Program q = optimize(program_with_effects(f, {f32({1}), f32({1})}));
  EXPECT_EQ(print_program(q),
      "{ lambda a:f32[1] ; b:f32[1] c:f32[1]. let\n"
      "    d:f32[] = reduce_sum[axes=(0,)] b\n"
      "    e:bool[] = gt d 0.0:f32[]\n"
      "    f:i32[] = convert_element_type[new_dtype=i32] e\n"
      "    g:f32[1] = cond[branches=2\n"
      "      branch0={ lambda ; h:f32[1]. let\n"
      "        in (h) }\n"
      "      branch1={ lambda i:f32[1] ; j:f32[1]. let\n"
      "          k:f32[1] = debug_print[fmt=\"a = {}\"] j\n"
      "          l:f32[1] = mul j i\n"
      "        in (l) }\n"
      "    ] f b\n"
      "    m:f32[1] = mul c a\n"
      "  in (m) }");
  Array a = array<float>({1}), b = array<float>({2});
  auto jf = jit([&](const Array& a, const Array& b) { return f({a, b}); });
  for (int call = 0; call < 2; ++call) {
    lines_.clear();
    EXPECT_EQ(jf(a, b)[0].to_vector<float>(), std::vector<float>{4});
    ASSERT_EQ(lines_.size(), 1u);
    EXPECT_EQ(lines_[0], "a = " + to_string(a));
  }
  lines_.clear();
  jf(-a, b);
  EXPECT_TRUE(lines_.empty());
}

// Carries (i, c, u): nothing is used outside; the body prints u, so u stays, and i (the cond
// reads it); c goes.
TEST_F(JitDceBodiesPrintTest, WhileBodyPrintKeepsTheCarryItReads) {
  auto f = [](const std::vector<Array>& in) {
    while_loop([](const std::tuple<Array, Array, Array>& s) { return std::get<0>(s) < 2.0f; },
               [](const std::tuple<Array, Array, Array>& s) {
                 auto [i, c, u] = s;
                 debug_print("u = {}", u);
                 return std::tuple{i + 1.0f, c * c, u + 1.0f};
               },
               std::tuple{Array(0.0f), in[0], in[1]});
    return std::vector<Array>{in[0] + 1.0f};
  };
  Program q = optimize(program_with_effects(f, {f32({1}), f32({1})}));
  EXPECT_EQ(print_program(q),
      "{ lambda a:f32[1] ; b:f32[1] c:f32[1]. let\n"
      "    d:f32[]{weak} e:f32[1] = while_loop[cond_consts=0 body_consts=0\n"
      "      cond={ lambda ; f:f32[]{weak} g:f32[1]. let\n"
      "          h:bool[] = lt f 2.0:f32[]{weak}\n"
      "        in (h) }\n"
      "      body={ lambda i:f32[1] ; j:f32[]{weak} k:f32[1]. let\n"
      "          l:f32[1] = debug_print[fmt=\"u = {}\"] k\n"
      "          m:f32[]{weak} = add j 1.0:f32[]{weak}\n"
      "          n:f32[1] = add k i\n"
      "        in (m, n) }\n"
      "    ] 0.0:f32[]{weak} c\n"
      "    o:f32[1] = add b a\n"
      "  in (o) }");
  auto jf = jit([&](const Array& a, const Array& b) { return f({a, b}); });
  EXPECT_EQ(jf(array<float>({5}), array<float>({1}))[0].to_vector<float>(),
            std::vector<float>{6});
  ASSERT_EQ(lines_.size(), 2u);
  EXPECT_EQ(lines_[1], "u = " + to_string(array<float>({2})));
  EXPECT_EQ(count(print_program(q), "debug_print"), 1);
}

}  // namespace
}  // namespace graft
