// Runs the op-spec table (tests/core/primitives/specs/): every primitive in the list must have a spec,
// every case must exercise its primitive, and every case's result must match the reference
// that the spec computed with a plain loop (a floating zero with its sign).
#include <cmath>
#include <unordered_set>

#include "core/ir/program.h"
#include "core/ir/primitive.h"
#include "gtest/gtest.h"
#include "tests/core/primitives/specs/spec.h"

namespace graft::spec {
namespace {

// Whether p, or a body it holds (at any depth), applies `id`.
bool applies(const Primitive& p, PrimitiveId id) {
  if (p.id() == id) return true;
  for (const SubProgram& s : p.sub_programs()) {
    for (const Instr& instr : s.program->instrs) {
      if (applies(*instr.prim, id)) return true;
    }
  }
  return false;
}

// In the graph or inside a body (a collective's case runs it inside pmap).
bool graph_contains(const Array& root, PrimitiveId id) {
  std::vector<const Node*> stack{root.node().get()};
  std::unordered_set<const Node*> seen;
  while (!stack.empty()) {
    const Node* n = stack.back();
    stack.pop_back();
    if (!seen.insert(n).second) continue;
    if (n->primitive && applies(*n->primitive, id)) return true;
    for (const Array& in : n->inputs) stack.push_back(in.node().get());
  }
  return false;
}

TEST(OpSpecTable, EveryPrimitiveHasASpec) {
  std::vector<std::string> missing;
  for (int i = 0; i < kNumPrimitives; ++i) {
    if (!registry().count(static_cast<PrimitiveId>(i))) missing.push_back(kPrimitiveNames[i]);
  }
  EXPECT_TRUE(missing.empty()) << "primitives without a spec: "
                               << ::testing::PrintToString(missing);
}

class OpSpecTest : public ::testing::TestWithParam<int> {};

TEST_P(OpSpecTest, CasesMatchLoopReferences) {
  auto id = static_cast<PrimitiveId>(GetParam());
  auto it = registry().find(id);
  if (it == registry().end()) GTEST_SKIP() << "no spec (reported by EveryPrimitiveHasASpec)";
  Spec spec = it->second();
  ASSERT_EQ(spec.prim, id);
  ASSERT_FALSE(spec.cases.empty()) << kPrimitiveNames[GetParam()] << " has no cases";
  for (const Case& c : spec.cases) {
    SCOPED_TRACE(c.name);
    Array out = c.fn(c.inputs);
    EXPECT_TRUE(graph_contains(out, id))
        << "case does not exercise " << kPrimitiveNames[GetParam()];
    ASSERT_EQ(shape_str(out.shape()), shape_str(c.expected.shape));
    ASSERT_EQ(out.dtype(), c.expected.dtype);
    std::vector<double> got = values_of(out);
    ASSERT_EQ(got.size(), c.expected.values.size());
    const bool floating = is_floating(out.dtype());
    for (size_t i = 0; i < got.size(); ++i) {
      double want = c.expected.values[i];
      if (std::isnan(want)) {
        EXPECT_TRUE(std::isnan(got[i])) << "at flat index " << i << ": got " << got[i];
        continue;
      }
      if (std::isinf(want)) {
        EXPECT_EQ(got[i], want) << "at flat index " << i;
        continue;
      }
      if (floating && want == 0 && got[i] == 0) {  // JAX pins the sign of zero results
        EXPECT_EQ(std::signbit(got[i]), std::signbit(want)) << "sign of zero at flat index " << i;
        continue;
      }
      double tol = c.atol + c.rtol * std::fabs(want);
      EXPECT_LE(std::fabs(got[i] - want), tol)
          << "at flat index " << i << ": got " << got[i] << ", want " << want;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(AllPrimitives, OpSpecTest, ::testing::Range(0, kNumPrimitives),
                         [](const ::testing::TestParamInfo<int>& info) {
                           return std::string(kPrimitiveNames[info.param]);
                         });

}  // namespace
}  // namespace graft::spec
