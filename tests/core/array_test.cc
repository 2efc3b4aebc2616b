// Array semantics: laziness, evaluation, memory release, deep graphs, reading, errors.
#include "core/array.h"

#include <cmath>
#include <memory>

#include "core/error.h"
#include "core/eval.h"
#include "core/ops.h"
#include "core/primitive.h"
#include "gtest/gtest.h"

namespace graft {
namespace {

TEST(ArrayTest, OpsBuildNodesAndEvalComputes) {
  Array x = array<float>({1, 2, 3});
  Array y = exp(x) * 2.0 + 1.0;
  EXPECT_FALSE(y.is_evaluated());
  EXPECT_EQ(shape_str(y.shape()), "(3,)");
  EXPECT_EQ(y.dtype(), DType::kF32);
  eval(y);
  EXPECT_TRUE(y.is_evaluated());
  EXPECT_TRUE(y.inputs().empty()) << "an evaluated node drops its inputs";
  std::vector<float> v = y.to_vector<float>();
  for (int i = 0; i < 3; ++i) EXPECT_FLOAT_EQ(v[i], std::exp(float(i + 1)) * 2 + 1);
}

TEST(ArrayTest, ReadingEvaluates) {
  Array s = sum(array<int32_t>({1, 2, 3, 4}));
  EXPECT_FALSE(s.is_evaluated());
  EXPECT_EQ(s.item<int>(), 10);
  EXPECT_TRUE(s.is_evaluated());
}

TEST(ArrayTest, IntermediateBuffersAreFreedAfterTheirLastConsumer) {
  Array x = ones({1024});
  Array a = exp(x);
  std::weak_ptr<Node> a_node = a.node();
  Array b = a + 1.0;
  Array c = b * 3.0;
  a = Array();
  b = Array();
  EXPECT_FALSE(a_node.expired()) << "still needed by the pending graph";
  eval(c);
  EXPECT_TRUE(a_node.expired()) << "freed once its consumer ran";
  EXPECT_FLOAT_EQ(c.to_vector<float>()[5], (std::exp(1.0f) + 1) * 3);
}

TEST(ArrayTest, SharedSubgraphIsComputedOnceAndKeptWhileHeld) {
  Array x = array<float>({1, 2});
  Array a = exp(x);
  Array b = a + a;
  Array c = a * a;
  eval(b, c);
  EXPECT_TRUE(a.is_evaluated()) << "a is held by the user, so it stays evaluated";
  EXPECT_FLOAT_EQ(b.to_vector<float>()[1], 2 * std::exp(2.0f));
  EXPECT_FLOAT_EQ(c.to_vector<float>()[1], std::exp(2.0f) * std::exp(2.0f));
}

TEST(ArrayTest, MillionOpChainBuildsEvaluatesAndIsDestroyedWithoutRecursion) {
  constexpr int kN = 1000000;
  Array one = scalar(1, DType::kI32);
  Array x = scalar(0, DType::kI32);
  Array unevaluated;
  {
    Array y = x;
    for (int i = 0; i < kN; ++i) y = y + one;
    unevaluated = y;  // destroyed below without ever evaluating
  }
  unevaluated = Array();  // iterative destruction of a 1M-node chain
  Array y = x;
  for (int i = 0; i < kN; ++i) y = y + one;
  EXPECT_EQ(pending_nodes({y}).size(), static_cast<size_t>(kN));
  EXPECT_EQ(y.item<int32_t>(), kN);
}

TEST(ArrayTest, WeakScalarsKeepTheArraysDtype) {
  Array h = astype(array<float>({1.5f}), DType::kBF16);
  EXPECT_EQ((h * 2.0).dtype(), DType::kBF16);
  EXPECT_EQ((h + 1).dtype(), DType::kBF16);
  Array u = array<uint8_t>({250});
  EXPECT_EQ((u + 10).dtype(), DType::kU8);
  EXPECT_EQ((u + 10).item<int>(), 4) << "u8 arithmetic wraps";
  Array i = array<int32_t>({3});
  EXPECT_EQ((i * 0.5).dtype(), DType::kF32);
  EXPECT_FLOAT_EQ((i * 0.5).item<float>(), 1.5f);
  Array d = array<double>({0.1});
  EXPECT_EQ((d + 0.2).item<double>(), 0.1 + 0.2) << "weak doubles keep full precision";
  EXPECT_TRUE((Array(2.0) * Array(3.0)).weak_type());
  EXPECT_FALSE((h * 2.0).weak_type());
}

TEST(ArrayTest, ErrorsNameTheOpAndShapes) {
  Array a = zeros({2, 3}), b = zeros({4});
  try {
    add(a, b);
    FAIL() << "expected graft::Error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "[add] shapes (2, 3) and (4,) cannot be broadcast together");
  }
  EXPECT_THROW(a.item<float>(), Error);
  EXPECT_THROW(add(Array(), a), Error);
  EXPECT_THROW(log(Array()), Error);
  try {
    bitwise_and(zeros({2}), zeros({2}));
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("[bitwise_and]", 0), 0u) << e.what();
  }
  EXPECT_THROW(array<float>({1, 2, 3}, Shape{2, 2}), Error);
  EXPECT_THROW(zeros({-1}), Error);
  EXPECT_THROW(bitcast_convert_type(zeros({2}), DType::kI64), Error);
}

TEST(ArrayTest, TracersCannotBeRead) {
  Array p = Array::placeholder(Aval{{3}, DType::kF32});
  Array q = exp(p) + 1.0;
  EXPECT_TRUE(q.is_tracer());
  try {
    q.to_vector<float>();
    FAIL() << "expected graft::Error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("[read] cannot read the value of a traced array", 0), 0u)
        << e.what();
  }
}

TEST(ArrayTest, PrintsLikeNumPy) {
  EXPECT_EQ(to_string(array<float>({1, 2.5, -3}, Shape{3})),
            "Array([1., 2.5, -3.], dtype=f32, shape=(3,))");
  EXPECT_EQ(to_string(array<int32_t>({1, 2, 3, 4}, Shape{2, 2})),
            "Array([[1, 2],\n [3, 4]], dtype=i32, shape=(2, 2))");
  EXPECT_EQ(to_string(scalar(1, DType::kBool)), "Array(True, dtype=bool, shape=())");
  EXPECT_EQ(to_string(zeros({0})), "Array([], dtype=f32, shape=(0,))");
}

TEST(ArrayTest, CreationOps) {
  EXPECT_EQ(arange(5).to_vector<int>(), (std::vector<int>{0, 1, 2, 3, 4}));
  EXPECT_EQ(arange(1, 2, 0.25).to_vector<float>(), (std::vector<float>{1, 1.25, 1.5, 1.75}));
  EXPECT_EQ(arange(5, 0, -2).to_vector<int>(), (std::vector<int>{5, 3, 1}));
  EXPECT_EQ(linspace(0, 1, 5).to_vector<float>(), (std::vector<float>{0, 0.25, 0.5, 0.75, 1}));
  EXPECT_EQ(eye(2, 3, 1).to_vector<int>(), (std::vector<int>{0, 1, 0, 0, 0, 1}));
  EXPECT_EQ(full({2}, 7, DType::kU8).to_vector<int>(), (std::vector<int>{7, 7}));
  EXPECT_EQ(ones_like(zeros({2}, DType::kBF16)).dtype(), DType::kBF16);
  EXPECT_THROW(arange(0, 1, 0), Error);
}

}  // namespace
}  // namespace graft
