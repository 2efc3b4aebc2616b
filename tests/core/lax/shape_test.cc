// Op-level tests of the shape family: error messages, jnp-semantics edge cases, shapes and
// dtypes of results, aliasing. Values are checked against closed forms.
#include <string>
#include <vector>

#include "core/ops.h"
#include "core/ir/primitive.h"
#include "core/primitives/shape.h"
#include "gtest/gtest.h"

namespace graft {
namespace {

// Runs f, which must throw graft::Error with a message starting with "[op] ".
template <typename F>
void expect_error(const std::string& op, F f) {
  try {
    f();
    ADD_FAILURE() << "expected an error from [" << op << "]";
  } catch (const Error& e) {
    std::string msg = e.what();
    EXPECT_EQ(msg.rfind("[" + op + "] ", 0), 0u) << msg;
  }
}

Array iota_f32(const Shape& s) {
  return reshape(arange(0, static_cast<double>(numel(s)), 1, DType::kF32), s);
}

std::vector<int> ints(const Array& a) { return a.to_vector<int>(); }

TEST(ShapeOps, ReshapeErrors) {
  Array x = zeros({2, 3});
  expect_error("reshape", [&] { reshape(x, {4}); });
  expect_error("reshape", [&] { reshape(x, {-1, -1}); });
  expect_error("reshape", [&] { reshape(x, {4, -1}); });
  expect_error("reshape", [&] { reshape(x, {-2, -3}); });
  expect_error("reshape", [&] { reshape(zeros({0, 3}), {0, -1}); });  // ambiguous, like numpy
  expect_error("reshape", [&] { reshape(Array(), {1}); });
}

TEST(ShapeOps, ReshapeInfersAndAliases) {
  Array x = iota_f32({2, 3, 4});
  eval(x);
  Array y = reshape(x, {-1, 4});
  EXPECT_EQ(y.shape(), (Shape{6, 4}));
  EXPECT_EQ(y.primitive()->id(), PrimitiveId::kReshape);
  EXPECT_EQ(y.raw_data(), x.raw_data());  // the kernel shares the input's buffer
  EXPECT_TRUE(reshape(x, {2, 3, 4}).same(x));
  EXPECT_EQ(reshape(zeros({0, 3}), {3, -1}).shape(), (Shape{3, 0}));
  Array w = reshape(Array(2.0), {1});
  EXPECT_TRUE(w.weak_type());
  EXPECT_EQ(ravel(zeros({2, 0, 3})).shape(), (Shape{0}));
}

TEST(ShapeOps, TransposeAndAxes) {
  Array x = zeros({2, 3, 4});
  expect_error("transpose", [&] { transpose(x, std::vector<int>{0, 1}); });
  expect_error("transpose", [&] { transpose(x, std::vector<int>{0, 0, 1}); });
  expect_error("transpose", [&] { transpose(x, std::vector<int>{0, 1, 3}); });
  EXPECT_TRUE(transpose(x, std::vector<int>{0, 1, 2}).same(x));
  EXPECT_EQ(transpose(x, std::vector<int>{1, 0, 2}).primitive()->params(), "permutation=(1, 0, 2)");
  EXPECT_EQ(moveaxis(x, -1, 0).shape(), (Shape{4, 2, 3}));
  EXPECT_EQ(moveaxis(x, 0, 1).shape(), (Shape{3, 2, 4}));
  EXPECT_EQ(swapaxes(x, 0, 2).shape(), (Shape{4, 3, 2}));
  expect_error("swapaxes", [&] { swapaxes(x, 0, 3); });
  expect_error("moveaxis", [&] { moveaxis(x, -4, 0); });
  Array s = Array(1.0);
  EXPECT_TRUE(transpose(s).same(s));  // nothing to permute
}

TEST(ShapeOps, BroadcastErrorsAndShapes) {
  Array x = zeros({3, 1});
  expect_error("broadcast_to", [&] { broadcast_to(x, {3, 2, 2}); });
  expect_error("broadcast_to", [&] { broadcast_to(x, {3}); });
  expect_error("broadcast_to", [&] { broadcast_to(x, {-1, 3}); });
  expect_error("broadcast_in_dim", [&] { broadcast_in_dim(x, {3, 4}, {0}); });
  expect_error("broadcast_in_dim", [&] { broadcast_in_dim(x, {3, 4}, {1, 0}); });
  expect_error("broadcast_in_dim", [&] { broadcast_in_dim(zeros({2}), {3, 4}, {1}); });
  EXPECT_EQ(broadcast_to(x, {2, 3, 5}).shape(), (Shape{2, 3, 5}));
  EXPECT_TRUE(broadcast_to(x, {3, 1}).same(x));
  Array b = broadcast_to(Array(1.5), {2, 2});
  EXPECT_TRUE(b.weak_type());
  EXPECT_EQ(b.to_vector<double>(), (std::vector<double>{1.5, 1.5, 1.5, 1.5}));
}

TEST(ShapeOps, ExpandDimsSqueeze) {
  Array x = zeros({2, 1, 3, 1});
  EXPECT_EQ(squeeze(x).shape(), (Shape{2, 3}));
  EXPECT_EQ(squeeze(x, {-1}).shape(), (Shape{2, 1, 3}));
  expect_error("squeeze", [&] { squeeze(x, {0}); });
  expect_error("squeeze", [&] { squeeze(x, {4}); });
  EXPECT_EQ(expand_dims(zeros({2, 3}), {0, 3}).shape(), (Shape{1, 2, 3, 1}));
  EXPECT_EQ(expand_dims(zeros({2, 3}), {-1}).shape(), (Shape{2, 3, 1}));
  expect_error("expand_dims", [&] { expand_dims(zeros({2, 3}), {3}); });
  expect_error("expand_dims", [&] { expand_dims(zeros({2, 3}), {0, 0}); });
}

TEST(ShapeOps, SliceErrorsAndPythonSemantics) {
  Array x = arange(10);
  expect_error("slice", [&] { slice(x, {2}, {11}); });
  expect_error("slice", [&] { slice(x, {5}, {4}); });
  expect_error("slice", [&] { slice(x, {0}, {4}, {0}); });
  expect_error("slice", [&] { slice(x, {0, 0}, {1, 1}); });
  expect_error("slice_axis", [&] { slice_axis(x, 0, 0, 5, 0); });
  expect_error("slice_axis", [&] { slice_axis(x, 1, 0, 5, 1); });
  EXPECT_EQ(ints(slice_axis(x, 0, 8, 2, -2)), (std::vector<int>{8, 6, 4}));
  EXPECT_EQ(ints(slice_axis(x, 0, std::nullopt, std::nullopt, -3)), (std::vector<int>{9, 6, 3, 0}));
  EXPECT_EQ(ints(slice_axis(x, 0, -3, std::nullopt, 1)), (std::vector<int>{7, 8, 9}));
  EXPECT_EQ(ints(slice_axis(x, 0, -100, 3, 1)), (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(ints(slice_axis(x, 0, 100, -100, -4)), (std::vector<int>{9, 5, 1}));
  EXPECT_EQ(slice_axis(x, 0, 7, 3, 1).shape(), (Shape{0}));
  EXPECT_EQ(slice_axis(x, 0, 2, 8, -1).shape(), (Shape{0}));
  EXPECT_TRUE(slice(x, {0}, {10}).same(x));
}

TEST(ShapeOps, DynamicSliceErrors) {
  Array x = zeros({4, 5});
  expect_error("dynamic_slice", [&] { dynamic_slice(x, {Array(0)}, {1, 1}); });
  expect_error("dynamic_slice", [&] { dynamic_slice(x, {Array(0), Array(1.0)}, {1, 1}); });
  expect_error("dynamic_slice", [&] { dynamic_slice(x, {Array(0), arange(2)}, {1, 1}); });
  expect_error("dynamic_slice", [&] { dynamic_slice(x, {Array(0), Array(0)}, {5, 1}); });
  expect_error("dynamic_update_slice", [&] {
    dynamic_update_slice(x, zeros({5, 1}), {Array(0), Array(0)});
  });
  expect_error("dynamic_update_slice", [&] {
    dynamic_update_slice(x, zeros({1}), {Array(0), Array(0)});
  });
  expect_error("dynamic_update_slice", [&] {
    dynamic_update_slice(x, zeros({1, 1}, DType::kF64), {Array(0), Array(0)});
  });
  expect_error("dynamic_update_slice", [&] { dynamic_update_slice(x, zeros({1, 1}), {Array(0)}); });
  // A weakly typed update takes the operand's dtype.
  Array y =
      dynamic_update_slice(zeros({3}, DType::kBF16), broadcast_to(Array(2.0), {1}), {Array(-5)});
  EXPECT_EQ(y.dtype(), DType::kBF16);
  EXPECT_EQ(y.to_vector<double>(), (std::vector<double>{2, 0, 0}));
}

TEST(ShapeOps, ConcatenateStackSplit) {
  expect_error("concatenate", [] { concatenate({}); });
  expect_error("concatenate", [] { concatenate({Array(1.0), Array(2.0)}); });
  expect_error("concatenate", [] { concatenate({zeros({2, 3}), zeros({2, 4})}, 0); });
  expect_error("concatenate", [] { concatenate({zeros({2, 3}), zeros({2})}, 0); });
  expect_error("concatenate", [] { concatenate({zeros({2, 3})}, 2); });
  Array c = concatenate({arange(3), zeros({2}, DType::kBF16)});
  EXPECT_EQ(c.dtype(), DType::kBF16);  // i32 with bf16 promotes to bf16, like jnp
  EXPECT_EQ(c.to_vector<double>(), (std::vector<double>{0, 1, 2, 0, 0}));
  Array one = zeros({2});
  EXPECT_TRUE(concatenate({one}).same(one));
  expect_error("stack", [] { stack({zeros({2}), zeros({3})}); });
  expect_error("stack", [] { stack({}); });
  EXPECT_EQ(stack({zeros({2, 3}), zeros({2, 3})}, -1).shape(), (Shape{2, 3, 2}));
  EXPECT_EQ(stack({Array(1), Array(2)}).shape(), (Shape{2}));
  expect_error("split", [] { split(zeros({5}), 2); });
  expect_error("split", [] { split(zeros({5}), 0); });
  auto parts = split(arange(6), 3);
  ASSERT_EQ(parts.size(), 3u);
  EXPECT_EQ(ints(parts[1]), (std::vector<int>{2, 3}));
  // Indices behave like Python slices: out of range clamps, decreasing gives empty pieces.
  auto p2 = split(arange(5), std::vector<int64_t>{2, 10});
  ASSERT_EQ(p2.size(), 3u);
  EXPECT_EQ(p2[1].shape(), (Shape{3}));
  EXPECT_EQ(p2[2].shape(), (Shape{0}));
  auto p3 = split(arange(5), std::vector<int64_t>{-2});
  EXPECT_EQ(ints(p3[1]), (std::vector<int>{3, 4}));
  auto p4 = split(arange(6), std::vector<int64_t>{4, 2});
  EXPECT_EQ(p4[1].shape(), (Shape{0}));
  EXPECT_EQ(ints(p4[2]), (std::vector<int>{2, 3, 4, 5}));
}

TEST(ShapeOps, PadErrorsAndSemantics) {
  Array x = arange(3);
  expect_error("pad", [&] { pad(x, {{-1, 0}}); });
  expect_error("pad", [&] { pad(x, {{1, 0}, {1, 0}}); });
  expect_error("pad", [&] { pad(x, {{1, 0}}, arange(2)); });
  expect_error("pad", [&] { lax_pad(x, scalar(0, DType::kF32), {{1, 0, 0}}); });
  expect_error("pad", [&] { lax_pad(x, Array(0), {{-3, -1, 0}}); });
  expect_error("pad", [&] { lax_pad(x, Array(0), {{0, 0, -1}}); });
  // jnp.pad casts the constant to the array's dtype.
  Array p = pad(x, {{1, 2}}, Array(7.9));
  EXPECT_EQ(p.dtype(), DType::kI32);
  EXPECT_EQ(ints(p), (std::vector<int>{7, 0, 1, 2, 7, 7}));
  EXPECT_EQ(ints(lax_pad(x, Array(-1), {{-1, 1, 2}})),
            (std::vector<int>{-1, -1, 1, -1, -1, 2, -1}));
  EXPECT_EQ(lax_pad(x, Array(0), {{-2, -1, 0}}).shape(), (Shape{0}));
}

TEST(ShapeOps, FlipTileRepeat) {
  expect_error("flip", [] { flip(zeros({2, 2}), {0, -2}); });
  expect_error("flip", [] { flip(zeros({2, 2}), {2}); });
  EXPECT_EQ(ints(flip(arange(4))), (std::vector<int>{3, 2, 1, 0}));
  expect_error("tile", [] { tile(zeros({2}), {-1}); });
  EXPECT_EQ(tile(zeros({2, 3}), {2}).shape(), (Shape{2, 6}));
  EXPECT_EQ(tile(zeros({3}), {2, 2}).shape(), (Shape{2, 6}));
  EXPECT_EQ(tile(zeros({3}), {0}).shape(), (Shape{0}));
  EXPECT_EQ(ints(tile(arange(2), {3})), (std::vector<int>{0, 1, 0, 1, 0, 1}));
  EXPECT_EQ(ints(tile(Array(5), {2})), (std::vector<int>{5, 5}));
  expect_error("repeat", [] { repeat(zeros({2}), -1); });
  expect_error("repeat", [] { repeat(zeros({2}), 2, 1); });
  EXPECT_EQ(ints(repeat(arange(3), 2)), (std::vector<int>{0, 0, 1, 1, 2, 2}));
  EXPECT_EQ(repeat(zeros({2, 3}), 0, 0).shape(), (Shape{0, 3}));
  EXPECT_EQ(repeat(Array(4), 3).shape(), (Shape{3}));
}

TEST(ShapeOps, Iota) {
  expect_error("iota", [] { iota(DType::kBool, {3}); });
  expect_error("iota", [] { iota(DType::kI32, {3}, 1); });
  expect_error("iota", [] { iota(DType::kI32, {}, 0); });
  expect_error("iota", [] { iota(DType::kI32, {-3}); });
  Array a = iota(DType::kI32, {2, 3}, 1);
  EXPECT_EQ(ints(a), (std::vector<int>{0, 1, 2, 0, 1, 2}));
  EXPECT_FALSE(a.weak_type());
  EXPECT_EQ(a.primitive()->params(), "dtype=i32 shape=(2, 3) dimension=1");
}

TEST(ShapeOps, PrimitiveRulesRejectMisuse) {
  // The shape rules check on their own (errors name the primitive), for callers that bind.
  Aval f{{2, 3}, DType::kF32};
  expect_error("slice", [&] { Slice({0, 0}, {3, 3}, {1, 1}).infer({f}); });
  expect_error("pad", [&] { Pad({{0, 0, 0}, {0, 0, 0}}).infer({f, Aval{{}, DType::kI32}}); });
  expect_error("concatenate", [&] { Concatenate(0).infer({f, Aval{{2, 4}, DType::kF32}}); });
  expect_error("dynamic_slice", [&] {
    DynamicSlice({1, 1}).infer({f, Aval{{}, DType::kF32}, Aval{{}, DType::kI32}});
  });
  expect_error("rev", [&] { Rev({0, 0}).infer({f}); });
  expect_error("reshape", [&] { Reshape({5}).infer({f}); });
  EXPECT_EQ(Concatenate(0).infer({f, Aval{{4, 3}, DType::kF32}})[0].shape, (Shape{6, 3}));
}

TEST(ShapeOps, CostIsBytesOnly) {
  Aval in{{2, 3}, DType::kF32}, out{{3, 2}, DType::kF32};
  Cost c = Transpose({1, 0}).cost({in}, {out});
  EXPECT_EQ(c.flops, 0);
  EXPECT_EQ(c.bytes, 48);
  EXPECT_EQ(Reshape({6}).cost({in}, {Aval{{6}, DType::kF32}}).bytes, 0);  // aliases its input
}

}  // namespace
}  // namespace graft
