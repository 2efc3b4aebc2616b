// The call primitives (custom_jvp_call, custom_vjp_call, remat) hold their functions as
// closed programs: make_graph prints them nested, two traces of one function give equal
// primitives (structural same_params), passes may replace bodies of the same signature, and
// values of outer traces the functions close over become inputs of the call.
#include <cmath>

#include "core/ops.h"
#include "core/primitives/call.h"
#include "gtest/gtest.h"
#include "transforms/autodiff.h"
#include "transforms/custom_derivatives.h"
#include "transforms/jit.h"
#include "transforms/make_graph.h"
#include "transforms/remat.h"
#include "transforms/vmap.h"

namespace graft {
namespace {

std::vector<double> vals(const Array& a) { return a.to_vector<double>(); }

auto twice =
    custom_vjp([](const Array& x) { return x * 2.0; },
               [](const Array& x) {
                 return std::pair{x * 2.0, exp(x)};
               },
               [](const Array& r, const Array& ct) { return std::tuple{ct * r}; }, "twice");

auto softplus = custom_jvp([](const Array& x) { return log1p(exp(x)); },
                           [](const std::tuple<Array>& p, const std::tuple<Array>& t) {
                             const Array& x = std::get<0>(p);
                             return std::pair{log1p(exp(x)), std::get<0>(t) * sigmoid(x)};
                           },
                           "softplus");

TEST(CallProgramsTest, MakeGraphPrintsTheBodiesNested) {
  EXPECT_EQ(make_graph([](const Array& x) { return twice(x); })(zeros({3})).str(),
            "{ lambda ; a:f32[3]. let\n"
            "    b:f32[3] = custom_vjp_call[name=twice num_consts=0 num_res=1\n"
            "      fun={ lambda c:f32[3] ; d:f32[3]. let\n"
            "          e:f32[3] = mul d c\n"
            "        in (e) }\n"
            "      fwd={ lambda f:f32[3] ; g:f32[3]. let\n"
            "          h:f32[3] = mul g f\n"
            "          i:f32[3] = exp g\n"
            "        in (h, i) }\n"
            "      bwd={ lambda ; j:f32[3] k:f32[3]. let\n"
            "          l:f32[3] = mul k j\n"
            "        in (l) }\n"
            "    ] a\n"
            "  in (b) }");
  // Under grad the forward pass outputs fwd's residual (d) and bwd's equations follow inline.
  std::string g = make_graph(grad([](const Array& x) { return sum(twice(x)); }))(zeros({3})).str();
  EXPECT_NE(g.find("    c:f32[3] d:f32[3] = custom_vjp_call[name=twice num_consts=0 num_res=1 "
                   "residual_outputs=True\n"),
            std::string::npos)
      << g;
  EXPECT_NE(g.find("    o:f32[3] = mul a d\n  in (o) }"), std::string::npos) << g;
  EXPECT_EQ(make_graph(checkpoint([](const Array& x) { return sin(matmul(x, x)); },
                                  dots_saveable()))(zeros({2, 2}))
                .str(),
            "{ lambda ; a:f32[2,2]. let\n"
            "    b:f32[2,2] c:f32[2,2] = remat[name=checkpoint policy=dots_saveable saved=1\n"
            "      body={ lambda ; d:f32[2,2]. let\n"
            "          e:f32[2,2] = dot_general[dimension_numbers=(((1), (0)), ((), ()))] d d\n"
            "          f:f32[2,2] = sin e\n"
            "        in (f, e) }\n"
            "    ] a\n"
            "  in (b) }");
  std::string j = make_graph([](const Array& x) { return softplus(x); })(zeros({3})).str();
  EXPECT_NE(j.find("      jvp={ lambda ; f:f32[3] g:f32[3]. let\n"), std::string::npos) << j;
  EXPECT_NE(j.find("          k:f32[3] = mul g j\n        in (i, k) }"), std::string::npos) << j;
}

const Primitive& prim(const Array& a) { return *a.node()->primitive; }

TEST(CallProgramsTest, TwoTracesOfOneFunctionAreEqualPrimitives) {
  Array x = array<float>({1, 2, 3});
  auto ck = [](const Array& v) { return sin(v) * v; };
  auto other = [](const Array& v) { return cos(v) * v; };
  EXPECT_TRUE(prim(twice(x)).same_params(prim(twice(x))));
  EXPECT_TRUE(prim(softplus(x)).same_params(prim(softplus(x))));
  EXPECT_TRUE(prim(checkpoint(ck)(x)).same_params(prim(checkpoint(ck)(x))));
  EXPECT_FALSE(prim(checkpoint(ck)(x)).same_params(prim(checkpoint(other)(x))));
  EXPECT_FALSE(prim(checkpoint(ck)(x)).same_params(prim(checkpoint(ck, dots_saveable())(x))));
  auto thrice =
      custom_vjp([](const Array& v) { return v * 2.0; },
                 [](const Array& v) {
                   return std::pair{v * 2.0, exp(v)};
                 },
                 [](const Array& r, const Array& ct) { return std::tuple{ct * r * 3.0}; }, "twice");
  EXPECT_FALSE(prim(twice(x)).same_params(prim(thrice(x)))) << "bwd differs";
  EXPECT_FALSE(prim(twice(x)).same_params(prim(twice(array<float>({1, 2}))))) << "avals differ";
}

TEST(CallProgramsTest, BodiesCanBeReplacedBySameSignaturePrograms) {
  Array x = array<float>({1, 2, 3});
  for (Array y : {twice(x), softplus(x), checkpoint([](const Array& v) { return exp(v); })(x)}) {
    const Primitive& p = prim(y);
    std::vector<std::shared_ptr<const Program>> bodies;
    for (const SubProgram& s : p.sub_programs()) bodies.push_back(s.program);
    ASSERT_FALSE(bodies.empty());
    auto q = p.with_sub_programs(bodies);
    EXPECT_TRUE(q->same_params(p)) << p.name();
    // A body of another signature is refused.
    auto wrong =
        trace_closed([](const std::vector<Array>& v) { return v; }, {Aval{{4}, DType::kF32}})
            .program;
    bodies[0] = wrong;
    EXPECT_THROW(p.with_sub_programs(bodies), Error) << p.name();
  }
}

TEST(CallProgramsTest, ValuesOfOuterTracesTheFunctionsCloseOverBecomeInputs) {
  Array x = array<double>({0.5, -1.0, 2.0}), y = array<double>({3.0, 4.0, -2.0});
  // f, fwd and bwd close over different values of jit's trace (tracers there).
  auto h = [](const Array& a, const Array& b) {
    Array c = b * 2.0, d = b + 1.0;
    auto f = custom_vjp([b](const Array& v) { return v * b; },
                        [b, c](const Array& v) {
                          return std::pair{v * b, v * c};
                        },
                        [d](const Array& r, const Array& ct) { return std::tuple{ct * d + r}; });
    return sum(f(a));
  };
  EXPECT_NEAR(jit(h)(x, y).item<double>(), h(x, y).item<double>(), 1e-12);
  Array g = grad(h)(x, y), jg = jit(grad(h))(x, y);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_NEAR(vals(g)[i], vals(y)[i] + 1 + 2 * vals(x)[i] * vals(y)[i], 1e-12);
    EXPECT_NEAR(vals(jg)[i], vals(g)[i], 1e-12);
  }
  // The same for custom_jvp (jvp rule closes over b) under jit, grad and vmap.
  auto k = [](const Array& a, const Array& b) {
    auto f = custom_jvp([b](const Array& v) { return sin(v) * b; },
                        [b](const std::tuple<Array>& p, const std::tuple<Array>& t) {
                          const Array& v = std::get<0>(p);
                          return std::pair{sin(v) * b, std::get<0>(t) * cos(v) * b * 10.0};
                        });
    return sum(f(a));
  };
  Array gk = jit(grad(k))(x, y);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_NEAR(vals(gk)[i], 10 * std::cos(vals(x)[i]) * vals(y)[i], 1e-12);
  }
  Array xs = array<double>({0.5, -1.0, 2.0, 1.0, 0.0, -0.5}, Shape{2, 3});
  Array per = vmap([&](const Array& a) { return grad(k)(a, y); })(xs);
  for (size_t i = 0; i < 6; ++i) {
    EXPECT_NEAR(vals(per)[i], 10 * std::cos(vals(xs)[i]) * vals(y)[i % 3], 1e-12);
  }
}

}  // namespace
}  // namespace graft
