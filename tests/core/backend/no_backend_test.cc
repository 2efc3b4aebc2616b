// A program linked with //core alone (no backend target): anything that computes a value
// (evaluating an array, or tracing a function whose constants must be computed) throws a clear
// graft::Error naming the target to link instead of crashing; pure graph building works.
#include <string>

#include "core/ir/program.h"
#include "core/ops.h"
#include "gtest/gtest.h"

namespace graft {
namespace {

void expect_no_backend_error(const std::function<void()>& f) {
  try {
    f();
    FAIL() << "computed a value without a backend";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("//core/backend/cpu"), std::string::npos) << e.what();
  }
}

TEST(NoBackendTest, ComputingAValueExplains) {
  Array x = Array::placeholder(Aval{{3}, DType::kF32});
  Array y = exp(x);  // graph building needs no backend
  EXPECT_EQ(y.shape(), (Shape{3}));
  expect_no_backend_error([] { (ones({3}) + 1.0).to_vector<float>(); });
  expect_no_backend_error([] {
    trace_closed([](const std::vector<Array>& v) { return std::vector<Array>{v[0] * 2.0}; },
                 {Aval{{3}, DType::kF32}});
  });
}

}  // namespace
}  // namespace graft
