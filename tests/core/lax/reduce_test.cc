// Op-level behaviour of the reductions that the spec table does not cover: error messages,
// jnp dtype rules, scalars, wraparound, identities of empty reductions at the primitive level,
// and the primitives' parameters.
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

#include "core/ops.h"
#include "core/primitives/reduce.h"
#include "gtest/gtest.h"

namespace graft {
namespace {

// Expects fn to throw graft::Error whose message starts with `prefix`.
template <typename Fn>
void expect_error(Fn fn, const std::string& prefix) {
  try {
    fn();
    ADD_FAILURE() << "no error; expected one starting with " << prefix;
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).rfind(prefix, 0), 0u) << e.what();
  }
}

TEST(ReduceOps, ErrorMessagesNameThePublicOp) {
  Array x = zeros({2, 0, 3});
  expect_error([&] { max(x, {1}); }, "[max] zero-size array to reduction operation max");
  expect_error([&] { min(x); }, "[min] zero-size array");
  expect_error([&] { argmax(x); }, "[argmax] attempt to get argmax of an empty sequence");
  expect_error([&] { argmin(x, 1); }, "[argmin] attempt to get argmin of an empty sequence");
  Array y = zeros({2, 3});
  expect_error([&] { sum(y, {2}); }, "[sum] axis 2 is out of range");
  expect_error([&] { mean(y, {0, -2}); }, "[mean] repeated axis");
  expect_error([&] { argmax(y, -3); }, "[argmax] axis -3 is out of range");
  expect_error([&] { cumsum(y, 5); }, "[cumsum] axis 5 is out of range");
  expect_error([&] { softmax(Array(1.0f)); }, "[softmax] axis -1 is out of range");
  expect_error([&] { logsumexp(y, {3}); }, "[logsumexp] axis 3");
  expect_error([&] { sum(Array()); }, "[sum]");
  expect_error([&] { var(Array()); }, "[var]");
}

TEST(ReduceOps, ShapeRulesRejectMisuse) {
  Array b = zeros({2, 3}, DType::kBool);
  Array f = zeros({2, 3});
  expect_error([&] { reduce(PrimitiveId::kReduceSum, b, {0}); }, "[reduce_sum] requires a numeric");
  expect_error([&] { reduce(PrimitiveId::kReduceAnd, f, {0}); }, "[reduce_and] requires a bool");
  expect_error([&] { reduce(PrimitiveId::kReduceMax, f, {}); }, "[reduce_max] needs at least");
  expect_error([&] { reduce(PrimitiveId::kReduceMin, f, {1, 0}); }, "[reduce_min] axes must be");
  expect_error([&] { reduce(PrimitiveId::kReduceProd, f, {2}); }, "[reduce_prod] axis 2");
  expect_error(
      [&] {
        arg_reduce(PrimitiveId::kArgmax, zeros({0, 2}), 0);
      },
      "[argmax] cannot reduce zero-sized axis");
  expect_error([&] { arg_reduce(PrimitiveId::kArgmin, f, 1, DType::kF32); },
               "[argmin] index dtype");
  expect_error([&] { cumsum_along(b, 0, false); }, "[cumsum] requires a numeric");
}

TEST(ReduceOps, DtypesFollowJnp) {
  auto dt = [](DType d) { return zeros({4}, d); };
  EXPECT_EQ(sum(dt(DType::kBool)).dtype(), DType::kI32);
  EXPECT_EQ(sum(dt(DType::kU8)).dtype(), DType::kU32);
  EXPECT_EQ(sum(dt(DType::kU32)).dtype(), DType::kU32);
  EXPECT_EQ(sum(dt(DType::kI64)).dtype(), DType::kI64);
  EXPECT_EQ(sum(dt(DType::kBF16)).dtype(), DType::kBF16);
  EXPECT_EQ(prod(dt(DType::kBool)).dtype(), DType::kI32);
  EXPECT_EQ(prod(dt(DType::kU8)).dtype(), DType::kU32);
  EXPECT_EQ(max(dt(DType::kU8)).dtype(), DType::kU8);
  EXPECT_EQ(min(dt(DType::kBool)).dtype(), DType::kBool);
  EXPECT_EQ(mean(dt(DType::kI32)).dtype(), DType::kF32);
  EXPECT_EQ(mean(dt(DType::kBool)).dtype(), DType::kF32);
  EXPECT_EQ(mean(dt(DType::kF16)).dtype(), DType::kF16);
  EXPECT_EQ(var(dt(DType::kU8)).dtype(), DType::kF32);
  EXPECT_EQ(var(dt(DType::kF64)).dtype(), DType::kF64);
  EXPECT_EQ(all(dt(DType::kF32)).dtype(), DType::kBool);
  EXPECT_EQ(any(dt(DType::kI64)).dtype(), DType::kBool);
  EXPECT_EQ(argmax(dt(DType::kF64)).dtype(), DType::kI32);
  EXPECT_EQ(cumsum(dt(DType::kBool)).dtype(), DType::kI32);
  // jnp (JAX 0.10.2): cumsum keeps every numeric dtype, u8 included (sum makes u8 u32).
  for (DType d : {DType::kU8, DType::kU32, DType::kI32, DType::kI64, DType::kF16, DType::kBF16,
                  DType::kF32, DType::kF64}) {
    EXPECT_EQ(cumsum(dt(d)).dtype(), d) << d;
  }
  EXPECT_EQ(logsumexp(dt(DType::kI32)).dtype(), DType::kF32);
  EXPECT_EQ(softmax(dt(DType::kU8)).dtype(), DType::kF32);
  EXPECT_EQ(log_softmax(dt(DType::kBF16)).dtype(), DType::kBF16);
}

TEST(ReduceOps, ScalarsAndKeepdims) {
  Array s = scalar(3.5, DType::kF32);
  EXPECT_EQ(sum(s).item<float>(), 3.5f);
  EXPECT_EQ(sum(s).ndim(), 0);
  EXPECT_EQ(max(s, {}, true).item<float>(), 3.5f);
  EXPECT_EQ(mean(scalar(3, DType::kI32)).item<float>(), 3.0f);
  EXPECT_EQ(var(s).item<float>(), 0.0f);
  EXPECT_EQ(argmax(s).item<int32_t>(), 0);
  EXPECT_EQ(shape_str(cumsum(s).shape()), "(1,)");
  Array x = ones({2, 3, 4});
  EXPECT_EQ(shape_str(sum(x, {0, 2}, true).shape()), "(1, 3, 1)");
  EXPECT_EQ(shape_str(logsumexp(x, {-1}, true).shape()), "(2, 3, 1)");
  EXPECT_EQ(shape_str(var(x, {}, true).shape()), "(1, 1, 1)");
  EXPECT_EQ(shape_str(argmax(x, std::nullopt, true).shape()), "(1, 1, 1)");
  EXPECT_EQ(shape_str(argmin(x, 1, true).shape()), "(2, 1, 4)");
  EXPECT_EQ(sum(x, {0, 2}, true).to_vector<float>(), std::vector<float>(3, 8.0f));
}

TEST(ReduceOps, IntegerSumsAndProductsWrapLikeXla) {
  Array a = array<int32_t>({std::numeric_limits<int32_t>::max(), 1});
  EXPECT_EQ(sum(a).item<int32_t>(), std::numeric_limits<int32_t>::min());
  Array b = array<int32_t>({65536, 65536, 3});
  EXPECT_EQ(prod(b).item<int32_t>(), 0);
  Array c = array<int64_t>({int64_t{1} << 40, 1 << 24});
  EXPECT_EQ(prod(c).item<int64_t>(), 0);
}

TEST(ReduceOps, HalfSumsAccumulateInF32) {
  // An f16 running sum of ones stops at 2048 (2049 is not representable); f32 does not.
  EXPECT_EQ(sum(ones({4096}, DType::kF16)).item<float>(), 4096.0f);
  EXPECT_EQ(mean(ones({4096}, DType::kBF16)).item<float>(), 1.0f);
  EXPECT_EQ(cumsum(ones({3000}, DType::kF16)).to_vector<float>()[2999], 3000.0f);
}

TEST(ReduceOps, EmptyReductionsGiveIdentities) {
  Array e = zeros({0, 2});
  EXPECT_EQ(sum(e, {0}).to_vector<float>(), std::vector<float>(2, 0.0f));
  EXPECT_EQ(prod(e, {0}).to_vector<float>(), std::vector<float>(2, 1.0f));
  EXPECT_EQ(all(e, {0}).to_vector<int32_t>(), std::vector<int32_t>(2, 1));
  EXPECT_EQ(any(e).item<bool>(), false);
  EXPECT_TRUE(std::isnan(mean(e).item<float>()));
  // The primitives (not the public max/min, which reject this) give lax's identities.
  float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(reduce(PrimitiveId::kReduceMax, e, {0}).to_vector<float>(),
            std::vector<float>(2, -inf));
  EXPECT_EQ(reduce(PrimitiveId::kReduceMin, zeros({2, 0}, DType::kF16), {1}).to_vector<float>(),
            std::vector<float>(2, inf));
  EXPECT_EQ(reduce(PrimitiveId::kReduceMax, zeros({0}, DType::kI32), {0}).item<int32_t>(),
            std::numeric_limits<int32_t>::min());
  EXPECT_EQ(reduce(PrimitiveId::kReduceMin, zeros({0}, DType::kU8), {0}).item<int32_t>(), 255);
  EXPECT_EQ(reduce(PrimitiveId::kReduceAnd, zeros({0}, DType::kU8), {0}).item<int32_t>(), 255);
  EXPECT_EQ(reduce(PrimitiveId::kReduceOr, zeros({0}, DType::kI64), {0}).item<int64_t>(), 0);
  EXPECT_EQ(logsumexp(e, {0}).to_vector<float>(), std::vector<float>(2, -inf));
}

TEST(ReduceOps, IntegerAndOrAreBitwise) {
  Array x = array<int32_t>({12, 10, 14, 13, 2, 1}, Shape{2, 3});
  EXPECT_EQ(reduce(PrimitiveId::kReduceAnd, x, {1}).to_vector<int32_t>(),
            (std::vector<int32_t>{8, 0}));
  EXPECT_EQ(reduce(PrimitiveId::kReduceOr, x, {0}).to_vector<int32_t>(),
            (std::vector<int32_t>{13, 10, 15}));
  EXPECT_EQ(reduce(PrimitiveId::kReduceOr, astype(x, DType::kU8), {0, 1}).item<int32_t>(), 15);
}

TEST(ReduceOps, SpecialValues) {
  float inf = std::numeric_limits<float>::infinity();
  Array x = array<float>({-inf, -inf, inf, 1, NAN, 1}, Shape{3, 2});
  std::vector<float> lse = logsumexp(x, {1}).to_vector<float>();
  EXPECT_EQ(lse[0], -inf);
  EXPECT_EQ(lse[1], inf);
  EXPECT_TRUE(std::isnan(lse[2]));
  // jax.nn.softmax does not guard an all -inf row: (-inf) - (-inf) is NaN.
  EXPECT_TRUE(std::isnan(softmax(x, 1).to_vector<float>()[0]));
  EXPECT_EQ(var(array<float>({1, 2}), {}, false, 2).item<float>(), inf);  // 0.5 / 0
  EXPECT_EQ(argmax(x, 1).to_vector<int32_t>(), (std::vector<int32_t>{0, 0, 0}));
  EXPECT_EQ(argmin(x, 0).to_vector<int32_t>(), (std::vector<int32_t>{2, 0}));
  EXPECT_TRUE(std::isnan(max(x).item<float>()));
  EXPECT_TRUE(all(array<float>({NAN, 2})).item<bool>());  // NaN converts to true
}

TEST(ReduceOps, I64IndexDtype) {
  Array x = array<float>({1, 7, 7, 2});
  Array r = arg_reduce(PrimitiveId::kArgmax, x, 0, DType::kI64);
  EXPECT_EQ(r.dtype(), DType::kI64);
  EXPECT_EQ(r.item<int64_t>(), 1);
}

TEST(ReduceOps, TracersOnlyInferShapes) {
  Array p = Array::placeholder(Aval{{2, 3, 4}, DType::kBF16});
  EXPECT_EQ(shape_str(sum(p, {1}).shape()), "(2, 4)");
  EXPECT_EQ(shape_str(softmax(p).shape()), "(2, 3, 4)");
  EXPECT_EQ(shape_str(cumsum(p).shape()), "(24,)");
  EXPECT_TRUE(var(p, {0, 2}).is_tracer());
}

TEST(ReduceOps, PrimitiveParameters) {
  Reduce r(PrimitiveId::kReduceSum, {0, 2});
  EXPECT_EQ(r.params(), "axes=(0, 2)");
  EXPECT_EQ(Reduce(PrimitiveId::kReduceMax, {1}).params(), "axes=(1,)");
  EXPECT_TRUE(r.same_params(Reduce(PrimitiveId::kReduceSum, {0, 2})));
  EXPECT_FALSE(r.same_params(Reduce(PrimitiveId::kReduceSum, {0})));
  EXPECT_FALSE(r.same_params(Reduce(PrimitiveId::kReduceProd, {0, 2})));
  ArgReduce a(PrimitiveId::kArgmax, 1);
  EXPECT_EQ(a.params(), "axes=(1,) index_dtype=i32");
  EXPECT_FALSE(a.same_params(ArgReduce(PrimitiveId::kArgmax, 0)));
  Cumsum c(0, true);
  EXPECT_EQ(c.params(), "axis=0 reverse=True");
  EXPECT_FALSE(c.same_params(Cumsum(0, false)));
  Cost cost = r.cost({Aval{{4, 5, 6}, DType::kF32}}, {Aval{{5}, DType::kF32}});
  EXPECT_EQ(cost.flops, 120);
  EXPECT_EQ(cost.bytes, 4 * (120 + 5));
}

}  // namespace
}  // namespace graft
