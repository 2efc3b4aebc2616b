// Array semantics: laziness, evaluation, memory release, deep graphs, reading, errors.
#include "core/array.h"

#include <cmath>
#include <cstring>
#include <memory>

#include "core/error.h"
#include "core/backend/eval.h"
#include "core/ops.h"
#include "core/ir/primitive.h"
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

// jnp.arange (JAX 0.10.2 on CPU, x64 off): the dtype comes from the arguments (any float ->
// f32), and float values are f32(start) + f32(f32(step) * i). The bit patterns below are
// np.asarray(jnp.arange(...)).view(np.uint32 / np.uint16) as JAX printed them.
TEST(ArrayTest, ArangeDtypeAndValuesMatchJax) {
  EXPECT_EQ(arange(0.0, 3.0).dtype(), DType::kF32);
  EXPECT_EQ(arange(0.0, 3.0).to_vector<float>(), (std::vector<float>{0, 1, 2}));
  EXPECT_EQ(arange(0, 3, 0.5).dtype(), DType::kF32);
  EXPECT_EQ(arange(0, 3, 0.5).to_vector<float>(), (std::vector<float>{0, 0.5, 1, 1.5, 2, 2.5}));
  EXPECT_EQ(arange(3.0).dtype(), DType::kF32);
  EXPECT_EQ(arange(2.5).to_vector<float>(), (std::vector<float>{0, 1, 2}));
  EXPECT_EQ(arange(0.5, 3).to_vector<float>(), (std::vector<float>{0.5, 1.5, 2.5}));
  EXPECT_EQ(arange(3).dtype(), DType::kI32);
  EXPECT_EQ(arange(0, 3).dtype(), DType::kI32);
  EXPECT_EQ(arange(int64_t{4}, DType::kF32).dtype(), DType::kF32);
  // An integer dtype takes start and step converted to it, as jnp does: step 0.5 becomes 0.
  EXPECT_EQ(arange(0, 3, 0.5, DType::kI32).to_vector<int>(), (std::vector<int>(6, 0)));
  EXPECT_EQ(arange(-2.5, 3, 1.5, DType::kI32).to_vector<int>(), (std::vector<int>{-2, -1, 0, 1}));
  auto bits32 = [](const Array& a) {
    std::vector<uint32_t> b;
    for (float f : a.to_vector<float>()) b.push_back(float_bits(f));
    return b;
  };
  EXPECT_EQ(bits32(arange(0, 1, 0.1)),
            (std::vector<uint32_t>{0, 1036831949, 1045220557, 1050253722, 1053609165, 1056964608,
                                   1058642330, 1060320051, 1061997773, 1063675495}));
  EXPECT_EQ(bits32(arange(-1.5, 2.2, 0.3)),
            (std::vector<uint32_t>{3217031168, 3214514586, 3211159142, 3206125977, 3197737368, 0,
                                   1050253724, 1058642332, 1063675496, 1067030938, 1069547520,
                                   1072064104, 1074161255}));
  auto bits16 = [](const Array& a) {
    Array u = bitcast_convert_type(astype(a, DType::kF32), DType::kU32);
    return astype(shift_right_logical(u, 16), DType::kI32).to_vector<int>();
  };
  // bf16: computed in f32, then rounded (the top 16 bits of the f32 pattern).
  EXPECT_EQ(bits16(arange(-1.5, 2.2, 0.3, DType::kBF16)),
            (std::vector<int>{49088, 49050, 48998, 48922, 48794, 0, 16026, 16154, 16230, 16282,
                              16320, 16358, 16390}));
  // f64 (JAX_ENABLE_X64=1): start + step * i in f64.
  std::vector<double> d = arange(-1.5, 2.2, 0.3, DType::kF64).to_vector<double>();
  std::vector<uint64_t> want = {
      13832806255468478464ull, 13831455175580267315ull, 13829653735729319117ull,
      13826951575952896820ull, 13822447976325526324ull, 0ull,
      4599075939470750512ull,  4603579539098121012ull,  4606281698874543308ull,
      4608083138725491506ull,  4609434218613702656ull,  4610785298501913804ull,
      4611911198408756428ull};
  ASSERT_EQ(d.size(), want.size());
  for (size_t i = 0; i < d.size(); ++i) {
    uint64_t b;
    std::memcpy(&b, &d[i], 8);
    EXPECT_EQ(b, want[i]) << i;
  }
}

}  // namespace
}  // namespace graft
