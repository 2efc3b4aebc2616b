// named_scope: operations bound inside carry the scope path, which make_graph prints before
// the primitive; nesting, the end of a scope, and jit's tracing keep it right.
#include "transforms/named_scope.h"

#include <string>

#include "core/ops.h"
#include "gtest/gtest.h"
#include "transforms/jit.h"
#include "transforms/make_graph.h"

namespace graft {
namespace {

Array block(const Array& x) {
  named_scope outer("block");
  Array h;
  {
    named_scope s("attn");
    h = exp(x);
  }
  return tanh(h) + 1.0;
}

TEST(NamedScopeTest, MakeGraphPrintsTheScopePath) {
  std::string g = make_graph([](const Array& x) { return sin(block(x)); })(ones({3})).str();
  EXPECT_NE(g.find("= block/attn/exp "), std::string::npos) << g;
  EXPECT_NE(g.find("= block/tanh"), std::string::npos) << g;
  EXPECT_NE(g.find("= block/add"), std::string::npos) << g;
  // Outside every scope: no prefix.
  EXPECT_NE(g.find("= sin "), std::string::npos) << g;
  EXPECT_EQ(g.find("/sin"), std::string::npos) << g;
}

TEST(NamedScopeTest, SurvivesJitTracing) {
  auto f = [](const Array& x) {
    named_scope s("mlp");
    return matmul(x, x);
  };
  auto j = jit(f);
  Array x = ones({2, 2});
  EXPECT_NE(j.as_text(x).find("mlp/"), std::string::npos) << j.as_text(x);
  EXPECT_EQ(j(x).to_vector<float>(), (std::vector<float>{2, 2, 2, 2}));
}

}  // namespace
}  // namespace graft
