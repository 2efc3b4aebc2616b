// Golden tests for the printed IR of small programs, including a gradient and a vmapped
// function.
#include "transforms/make_graph.h"

#include "core/ops.h"
#include "gtest/gtest.h"
#include "transforms/autodiff.h"
#include "transforms/control_flow.h"
#include "transforms/vmap.h"

namespace graft {
namespace {

TEST(MakeGraphTest, SimpleProgram) {
  auto f = [](const Array& x, const Array& y) { return sum(exp(x) * y, {0}); };
  std::string g = make_graph(f)(zeros({3}), zeros({3})).str();
  EXPECT_EQ(g,
            "{ lambda ; a:f32[3] b:f32[3]. let\n"
            "    c:f32[3] = exp a\n"
            "    d:f32[3] = mul c b\n"
            "    e:f32[] = reduce_sum[axes=(0,)] d\n"
            "  in (e) }");
}

TEST(MakeGraphTest, ConstantsAndLiterals) {
  Array w = ones({2, 2});
  auto f = [&](const Array& x) { return matmul(x, w) * 2.0; };
  std::string g = make_graph(f)(zeros({1, 2})).str();
  EXPECT_EQ(g,
            "{ lambda a:f32[2,2] b:f32[1,2] ; c:f32[1,2]. let\n"
            "    d:f32[1,2] = dot_general[dimension_numbers=(((1), (0)), ((), ()))] c a\n"
            "    e:f32[1,2] = mul d b\n"
            "  in (e) }");
}

TEST(MakeGraphTest, GradientOfASquare) {
  auto loss = [](const Array& x) { return sum(x * x); };
  std::string g = make_graph(grad(loss))(zeros({2})).str();
  // The forward pass is not needed for the gradient, so it is not in the graph; `a` is the
  // cotangent of the sum (ones), a constant.
  EXPECT_EQ(g,
            "{ lambda a:f32[2] ; b:f32[2]. let\n"
            "    c:f32[2] = mul a b\n"
            "    d:f32[2] = mul a b\n"
            "    e:f32[2] = add c d\n"
            "  in (e) }");
}

TEST(MakeGraphTest, VmappedFunction) {
  auto f = [](const Array& x) { return sum(x); };
  std::string g = make_graph(vmap(f))(zeros({4, 3})).str();
  EXPECT_EQ(g,
            "{ lambda ; a:f32[4,3]. let\n"
            "    b:f32[4] = reduce_sum[axes=(1,)] a\n"
            "  in (b) }");
}

TEST(MakeGraphTest, ScanBodyPrintsNested) {
  auto f = [](const Array& init, const Array& xs) {
    return scan([](const Array& c, const Array& x) { return std::pair{c * 0.9 + x, c}; }, init,
                xs);
  };
  std::string g = make_graph(f)(zeros({3}), zeros({4, 3})).str();
  // The broadcast of 0.9 depends on no tracer: computed once at trace time, a body constant.
  EXPECT_EQ(g,
            "{ lambda ; a:f32[3] b:f32[4,3]. let\n"
            "    c:f32[3] d:f32[4,3] = scan[length=4 reverse=false num_consts=0 num_carry=1\n"
            "      body={ lambda e:f32[3] ; f:f32[3] g:f32[3]. let\n"
            "          h:f32[3] = mul f e\n"
            "          i:f32[3] = add h g\n"
            "        in (i, f) }\n"
            "    ] a b\n"
            "  in (c, d) }");
}

}  // namespace
}  // namespace graft
