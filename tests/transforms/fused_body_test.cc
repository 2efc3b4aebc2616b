// fused_elementwise's body Program: it means what the kernels compute (run_program of the
// body against the compiled loop and the tile interpreter), bodies compare structurally,
// the builder rejects what the kernels cannot run, and grad / vmap replay the body.
#include <cmath>
#include <string>

#include "core/backend/cpu/fusion_codegen.h"
#include "core/backend/eager.h"
#include "core/error.h"
#include "core/ops.h"
#include "core/primitives/fusion.h"
#include "core/random/random.h"
#include "gtest/gtest.h"
#include "transforms/autodiff.h"
#include "transforms/fusion.h"
#include "transforms/passes/passes.h"
#include "transforms/vmap.h"

namespace graft {
namespace {

using cpu::fusion::Codegen;

// tanh(x * 1.5 + 0.5) * y - exp(-x): two scalar broadcasts absorbed into the group.
std::vector<Array> chain(const std::vector<Array>& in) {
  Array a = tanh(in[0] * 1.5f + 0.5f) * in[1];
  return {a - exp(-in[0]), a};
}

Program program_of(const FlatFn& fn, const std::vector<Aval>& avals) {
  std::optional<Program> p = lower(trace_avals(fn, avals));
  EXPECT_TRUE(p.has_value());
  return p ? *p : Program();
}

Program fused_program_of(const FlatFn& fn, const std::vector<Aval>& avals) {
  return eliminate_dead_code(fuse_elementwise(program_of(fn, avals)));
}

// The one fused group the fusion pass makes of fn.
std::shared_ptr<const FusedElementwise> group_of(const FlatFn& fn,
                                                 const std::vector<Aval>& avals) {
  Program p = fused_program_of(fn, avals);
  std::shared_ptr<const FusedElementwise> g;
  for (const Instr& i : p.instrs) {
    if (i.prim->id() != PrimitiveId::kFusedElementwise) continue;
    EXPECT_EQ(g, nullptr) << print_program(p);
    g = std::static_pointer_cast<const FusedElementwise>(i.prim);
  }
  EXPECT_NE(g, nullptr) << print_program(p);
  return g;
}

void expect_close(const Array& got, const Array& want, const std::string& what) {
  ASSERT_EQ(got.shape(), want.shape()) << what;
  auto g = got.to_vector<double>(), w = want.to_vector<double>();
  for (size_t i = 0; i < g.size(); ++i) {
    ASSERT_NEAR(g[i], w[i], 1e-6 * (1 + std::abs(w[i]))) << what << " element " << i;
  }
}

Program body_with(const FlatFn& fn, const std::vector<Aval>& avals) {
  return program_of(fn, avals);
}

TEST(FusedBodyTest, BodyIsAProgramThatMeansTheKernelsResult) {
  const int64_t n = 70001;  // several blocks and a tail the interpreter runs
  const Aval a{{n}, DType::kF32, false};
  auto g = group_of(chain, {a, a});
  ASSERT_NE(g, nullptr);
  // The scalars are rank-0 inputs, broadcast inside the body.
  int scalars = 0, broadcasts = 0;
  for (const Aval& in : g->in_avals()) scalars += in.shape.empty();
  for (const Instr& i : g->body().instrs) {
    broadcasts += i.prim->id() == PrimitiveId::kBroadcastInDim;
  }
  EXPECT_EQ(scalars, 2) << print_program(g->body());
  EXPECT_EQ(broadcasts, 2) << print_program(g->body());
  EXPECT_EQ(g->steps().size(), g->body().instrs.size() - 2);
  ASSERT_EQ(g->outputs().size(), 2u);

  std::vector<Array> args;
  for (const Aval& in : g->in_avals()) {
    args.push_back(in.shape.empty() ? full({}, 0.75f) : random::normal(random::key(7), {n}));
  }
  std::vector<Array> want = run_program(g->body(), args);
  ASSERT_EQ(want.size(), 2u);
  for (Codegen mode : {Codegen::kAlways, Codegen::kOff}) {
    cpu::fusion::set_codegen(mode);
    std::vector<Array> got = graft::bind(g, args);
    const std::string what = mode == Codegen::kOff ? "interpreted" : "compiled";
    for (size_t k = 0; k < got.size(); ++k) {
      EXPECT_EQ(got[k].node()->primitive->id(), PrimitiveId::kFusedElementwise);
      expect_close(got[k], want[k], what + " output " + std::to_string(k));
    }
  }
  cpu::fusion::set_codegen(Codegen::kAuto);
  // An f32 group compiles, so the kAlways run above went through the loop.
  EXPECT_NE(cpu::fusion::compiled_group(*g), nullptr);
}

TEST(FusedBodyTest, SameParamsComparesBodies) {
  const Aval a{{16}, DType::kF32, false};
  auto g1 = group_of(chain, {a, a});
  auto g2 = group_of(chain, {a, a});
  auto sin_chain = [](const std::vector<Array>& in) {
    Array b = sin(in[0] * 1.5f + 0.5f) * in[1];  // sin for tanh
    return std::vector<Array>{b - exp(-in[0]), b};
  };
  auto other = group_of(sin_chain, {a, a});
  ASSERT_TRUE(g1 && g2 && other);
  EXPECT_NE(&g1->body(), &g2->body());
  EXPECT_TRUE(g1->same_params(*g2));
  EXPECT_TRUE(g2->same_params(*g1));
  EXPECT_FALSE(g1->same_params(*other));
  EXPECT_FALSE(other->same_params(*g1));
  EXPECT_EQ(hash_program(g1->body()), hash_program(g2->body()));
  // Programs that differ only inside a fused body: equal shapes and wiring outside.
  Program p1 = fused_program_of(chain, {a, a}), p2 = fused_program_of(sin_chain, {a, a});
  EXPECT_FALSE(same_program(p1, p2));
  EXPECT_NE(hash_program(p1), hash_program(p2));
  EXPECT_EQ(hash_program(p1), hash_program(fused_program_of(chain, {a, a})));
}

// jit's passes do not rewrite a fused body (map_bodies skips it): optimizing an optimized
// program leaves its groups as they are, rather than fusing inside them again.
TEST(FusedBodyTest, PassesLeaveFusedBodiesAlone) {
  const Aval a{{64}, DType::kF32, false};
  Program once = optimize(program_of(chain, {a, a}));
  int groups = 0;
  for (const Instr& i : once.instrs) groups += i.prim->id() == PrimitiveId::kFusedElementwise;
  ASSERT_EQ(groups, 1) << print_program(once);
  Program twice = optimize(once);
  EXPECT_EQ(print_program(twice), print_program(once));
}

void expect_rejected(const FlatFn& fn, const std::vector<Aval>& avals, const Shape& shape,
                     const std::string& what) {
  auto body = std::make_shared<const Program>(body_with(fn, avals));
  try {
    make_fused_elementwise(body, shape);
    ADD_FAILURE() << what << " was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("[fused_elementwise] ", 0), 0u) << e.what();
  }
}

TEST(FusedBodyTest, BuilderRejectsWhatIsNotElementwise) {
  const Aval m{{4, 4}, DType::kF32, false};
  expect_rejected(
      [](const std::vector<Array>& in) { return std::vector<Array>{matmul(in[0], in[1])}; },
      {m, m}, {4, 4}, "a dot");
  expect_rejected(
      [](const std::vector<Array>& in) { return std::vector<Array>{exp(sum(in[0] * in[1]))}; },
      {m, m}, {4, 4}, "a reduce");
  // Integer ops stay unfused.
  const Aval i32{{4, 4}, DType::kI32, false};
  expect_rejected([](const std::vector<Array>& in) { return std::vector<Array>{in[0] + in[1]}; },
                  {i32, i32}, {4, 4}, "an integer add");
  // An input returned as it is: no step computes it.
  expect_rejected([](const std::vector<Array>& in) { return std::vector<Array>{in[0]}; }, {m},
                  {4, 4}, "an input as output");
  // The accepted form, for contrast.
  auto ok = std::make_shared<const Program>(body_with(
      [](const std::vector<Array>& in) { return std::vector<Array>{exp(in[0] * in[1])}; },
      {m, m}));
  EXPECT_EQ(make_fused_elementwise(ok, {4, 4})->steps().size(), 2u);
}

FlatFn fused(const FlatFn& fn) {
  return [fn](const std::vector<Array>& in) { return fuse_elementwise_call(fn, in); };
}

// A group applied eagerly is compiled once per structure: a second fusion of the same
// function (a new primitive, an equal body) reuses the kept executable, a different one not.
TEST(FusedBodyTest, EagerGroupsAreCachedByStructure) {
  Array x = random::normal(random::key(5), {33}), y = random::normal(random::key(6), {33});
  std::vector<Array> first = fused(chain)({x, y});
  first[0].to_vector<float>();
  const size_t after_first = eager_cache_size();
  std::vector<Array> again = fused(chain)({x, y});
  EXPECT_EQ(again[0].to_vector<float>(), first[0].to_vector<float>());
  EXPECT_EQ(eager_cache_size(), after_first);
  fused([](const std::vector<Array>& in) { return std::vector<Array>{sin(in[0]) * in[1]}; })(
      {x, y})[0]
      .to_vector<float>();
  EXPECT_EQ(eager_cache_size(), after_first + 1);
}

TEST(FusedBodyTest, GradAndVmapThroughFuseElementwiseCall) {
  Array x = random::normal(random::key(1), {3, 40});
  Array y = random::normal(random::key(2), {3, 40});
  std::vector<Array> eager = fused(chain)({x, y});
  ASSERT_EQ(eager[0].node()->primitive->id(), PrimitiveId::kFusedElementwise);
  auto loss = [](const FlatFn& f) {
    return [f](const Array& a, const Array& b) {
      std::vector<Array> o = f({a, b});
      return sum(o[0] * o[1]);
    };
  };
  auto [gx, gy] = grad(loss(fused(chain)), argnums<0, 1>)(x, y);
  auto [wx, wy] = grad(loss(chain), argnums<0, 1>)(x, y);
  expect_close(gx, wx, "grad x");
  expect_close(gy, wy, "grad y");
  auto per_row = [](const FlatFn& f) {
    return [f](const Array& a, const Array& b) { return f({a, b})[0]; };
  };
  expect_close(vmap(per_row(fused(chain)))(x, y), chain({x, y})[0], "vmap");
  expect_close(vmap(per_row(fused(chain)), {1, 1})(x, y),
               transpose(chain({x, y})[0], std::vector<int>{1, 0}), "vmap over axis 1");
}

}  // namespace
}  // namespace graft
