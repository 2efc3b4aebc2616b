// Direct tests of the shape family's transform rules (jvp, vjp, vmap), called on concrete
// arrays. jvp and vjp are checked against a Jacobian built column by column from central
// finite differences in f64; vmap against a loop of the primitive over the batch slices.
#include <cmath>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "core/ops.h"
#include "core/ir/primitive.h"
#include "core/primitives/shape.h"
#include "gtest/gtest.h"
#include "tests/core/primitives/rule_checks.h"

namespace graft {
namespace {

using namespace testing_rules;  // NOLINT(build/namespaces)

Array index(int64_t v) { return array<int32_t>({static_cast<int32_t>(v)}, Shape{}); }

// The column-by-column FD Jacobian (no NaN masking), plus one input at a time:
// <ct, jvp(t_i)> == <vjp(ct)_i, t_i>.
void check_ad(const Prim& p, const Arrays& in) {
  testing_rules::check_ad(p, in,
                          {.tangent_offset = 0,
                           .cotangent_offset = 100,
                           .fd_zero_nan = false,
                           .check_zero_cotangents = false,
                           .check_each_input = true});
}

// Float variants in [-3, 1); results bitwise equal (data movement), NaN never expected.
void check_vmap(const Prim& p, const Arrays& in, const std::vector<int>& in_axes) {
  testing_rules::check_vmap(p, in, in_axes, {.float_lo = -3, .nan_equal = false});
}

// ---- reshape, transpose, broadcast_in_dim, slice, rev ----

TEST(ShapeRules, Reshape) {
  Array x = f64({2, 3, 4});
  Prim p = prim_of(reshape(x, {6, 4}), PrimitiveId::kReshape);
  check_ad(p, {x});
  for (int a : {0, 1, -1}) check_vmap(p, {x}, {a});
  Prim q = prim_of(reshape(Array(1.5), {1, 1}), PrimitiveId::kReshape);
  check_ad(q, {scalar(1.5, DType::kF64)});
  check_vmap(q, {scalar(1.5, DType::kF64)}, {0});
  Prim e = prim_of(reshape(zeros({0, 3}, DType::kF64), {3, 0}), PrimitiveId::kReshape);
  check_ad(e, {zeros({0, 3}, DType::kF64)});
  check_vmap(e, {zeros({0, 3}, DType::kF64)}, {1});
}

TEST(ShapeRules, Transpose) {
  Array x = f64({2, 3, 4});
  for (std::vector<int> perm : {std::vector<int>{2, 0, 1}, {1, 0, 2}, {2, 1, 0}}) {
    Prim p = prim_of(transpose(x, perm), PrimitiveId::kTranspose);
    check_ad(p, {x});
    for (int a : {0, 1, 2, -1}) check_vmap(p, {x}, {a});
  }
}

TEST(ShapeRules, BroadcastInDim) {
  struct C {
    Shape in, out;
    std::vector<int> dims;
  };
  for (const C& c :
       {C{{3, 1}, {2, 3, 4}, {1, 2}}, C{{}, {2, 3}, {}}, C{{3}, {3, 2}, {0}}, C{{1}, {4}, {0}},
        C{{2, 1, 3}, {2, 5, 4, 3}, {0, 2, 3}}, C{{2, 1}, {2, 1, 3}, {0, 1}}}) {
    Array x = f64(c.in);
    Prim p = prim_of(broadcast_in_dim(x, c.out, c.dims), PrimitiveId::kBroadcastInDim);
    check_ad(p, {x});
    for (int a = 0; a <= x.ndim(); ++a) check_vmap(p, {x}, {a});
    check_vmap(p, {x}, {-1});
  }
}

TEST(ShapeRules, Slice) {
  Array x = f64({5, 7});
  Prim p = prim_of(slice(x, {1, 0}, {5, 7}, {2, 3}), PrimitiveId::kSlice);
  check_ad(p, {x});
  for (int a : {0, 1, -1}) check_vmap(p, {x}, {a});
  Prim q = prim_of(slice(x, {2, 1}, {4, 6}), PrimitiveId::kSlice);  // unit strides
  check_ad(q, {x});
  Prim e = prim_of(slice(x, {1, 3}, {1, 7}, {1, 2}), PrimitiveId::kSlice);  // empty result
  check_ad(e, {x});
  check_vmap(e, {x}, {1});
  Array y = f64({3, 4, 5});
  Prim r = prim_of(slice(y, {0, 1, 1}, {3, 4, 4}, {2, 2, 3}), PrimitiveId::kSlice);
  check_ad(r, {y});
  for (int a : {0, 2, -1}) check_vmap(r, {y}, {a});
}

TEST(ShapeRules, Rev) {
  Array x = f64({3, 4, 2});
  Prim p = prim_of(flip(x, {0, 2}), PrimitiveId::kRev);
  check_ad(p, {x});
  for (int a : {0, 1, 2, -1}) check_vmap(p, {x}, {a});
}

// ---- concatenate ----

TEST(ShapeRules, Concatenate) {
  Array a = f64({2, 3}, 1), b = f64({4, 3}, 2), c = f64({1, 3}, 3);
  Prim p = prim_of(concatenate({a, b, c}, 0), PrimitiveId::kConcatenate);
  check_ad(p, {a, b, c});
  check_vmap(p, {a, b, c}, {0, 0, 0});
  check_vmap(p, {a, b, c}, {1, kUnbatched, -1});
  check_vmap(p, {a, b, c}, {kUnbatched, 2, kUnbatched});
  Array d = f64({2, 1}, 4), e = f64({2, 0}, 5);
  Prim q = prim_of(concatenate({a, d, e}, 1), PrimitiveId::kConcatenate);
  check_ad(q, {a, d, e});
  check_vmap(q, {a, d, e}, {-1, 0, kUnbatched});
  // Some tangents symbolic zeros: the others still come through, zeros in their place.
  std::vector<Array> t{Array(), f64({4, 3}, 9), Array()};
  Array out = bind1(p, {a, b, c});
  Array g = p->jvp({a, b, c}, t, {out})[0];
  std::vector<double> got = vals(g), tb = vals(t[1]);
  for (int64_t k = 0; k < 21; ++k) {
    double want = k >= 6 && k < 18 ? tb[k - 6] : 0.0;
    EXPECT_EQ(got[k], want) << k;
  }
}

// ---- pad ----

TEST(ShapeRules, Pad) {
  Array x = f64({3, 4}), v = scalar(0.25, DType::kF64);
  using Cfg = std::vector<std::array<int64_t, 3>>;
  for (const Cfg& cfg :
       {Cfg{{1, 2, 0}, {0, 1, 0}}, Cfg{{1, 0, 2}, {2, 1, 1}}, Cfg{{-1, 1, 1}, {1, -2, 0}},
        Cfg{{-2, -1, 1}, {-3, 0, 2}}, Cfg{{-5, 0, 1}, {0, 0, 0}}}) {
    Prim p = prim_of(lax_pad(x, v, cfg), PrimitiveId::kPad);
    check_ad(p, {x, v});
    check_vmap(p, {x, v}, {0, kUnbatched});
    check_vmap(p, {x, v}, {-1, kUnbatched});
    check_vmap(p, {x, v}, {1, 0});
    check_vmap(p, {x, v}, {kUnbatched, 0});
  }
  // Rank 0 and empty operands.
  Prim s = prim_of(lax_pad(scalar(2.0, DType::kF64), v, {}), PrimitiveId::kPad);
  check_ad(s, {scalar(2.0, DType::kF64), v});
  Array e = zeros({0, 2}, DType::kF64);
  Prim q = prim_of(lax_pad(e, v, {{1, 1, 3}, {0, 1, 0}}), PrimitiveId::kPad);
  check_ad(q, {e, v});
  check_vmap(q, {e, v}, {1, 0});
}

// ---- dynamic_slice ----

TEST(ShapeRules, DynamicSlice) {
  Array x = f64({5, 6});
  // In range, clamped from above, clamped from below (negative).
  for (auto [s0, s1] : {std::pair{1, 2}, {4, 5}, {-2, 3}}) {
    Prim p = prim_of(dynamic_slice(x, {index(s0), index(s1)}, {2, 3}), PrimitiveId::kDynamicSlice);
    std::vector<Array> in{x, index(s0), index(s1)};
    check_ad(p, in);
    check_vmap(p, in, {0, kUnbatched, kUnbatched});
    check_vmap(p, in, {-1, kUnbatched, kUnbatched});
    // Batched start indices, with a batched or unbatched operand.
    check_vmap(p, in, {1, 0, 0});
    check_vmap(p, in, {0, kUnbatched, 0});
    check_vmap(p, in, {-1, 0, kUnbatched});
    check_vmap(p, in, {kUnbatched, 0, 0});
    check_vmap(p, in, {kUnbatched, kUnbatched, 0});
    check_vmap(p, in, {kUnbatched, 0, kUnbatched});
  }
  // A full-size dim (its start clamps to 0 whatever it is), rank 3, i64/u8 starts.
  Array y = f64({3, 4, 5});
  std::vector<Array> in{y, array<int64_t>({1}, Shape{}), array<uint8_t>({7}, Shape{}), index(-1)};
  Prim p = prim_of(dynamic_slice(y, {in[1], in[2], in[3]}, {2, 4, 1}), PrimitiveId::kDynamicSlice);
  check_ad(p, in);
  check_vmap(p, in, {2, 0, 0, 0});
  check_vmap(p, in, {kUnbatched, kUnbatched, 0, kUnbatched});
  check_vmap(p, in, {kUnbatched, 0, kUnbatched, 0});
  check_vmap(p, in, {1, kUnbatched, 0, 0});
  // Integer and bool operands batch too.
  for (DType dt : {DType::kI32, DType::kBool}) {
    Array z = random_array({4, 5}, dt, 11, -5, 5);
    Prim q = prim_of(dynamic_slice(z, {index(1), index(2)}, {3, 2}), PrimitiveId::kDynamicSlice);
    check_vmap(q, {z, index(1), index(2)}, {0, 0, 0});
    check_vmap(q, {z, index(1), index(2)}, {kUnbatched, 0, kUnbatched});
  }
}

// ---- dynamic_update_slice ----

TEST(ShapeRules, DynamicUpdateSlice) {
  Array x = f64({5, 6}, 1), u = f64({2, 3}, 2);
  for (auto [s0, s1] : {std::pair{1, 2}, {4, 5}, {-2, 3}}) {
    std::vector<Array> in{x, u, index(s0), index(s1)};
    Prim p = prim_of(dynamic_update_slice(x, u, {in[2], in[3]}), PrimitiveId::kDynamicUpdateSlice);
    check_ad(p, in);
    check_vmap(p, in, {0, 0, kUnbatched, kUnbatched});
    check_vmap(p, in, {-1, kUnbatched, kUnbatched, kUnbatched});
    check_vmap(p, in, {kUnbatched, 1, kUnbatched, kUnbatched});
    // Batched start indices.
    check_vmap(p, in, {0, 0, 0, 0});
    check_vmap(p, in, {1, -1, 0, kUnbatched});
    check_vmap(p, in, {kUnbatched, kUnbatched, kUnbatched, 0});
    check_vmap(p, in, {kUnbatched, 0, 0, kUnbatched});
    check_vmap(p, in, {0, kUnbatched, 0, 0});
  }
  // Full-size dims, rank 3, an empty update.
  Array y = f64({3, 4, 2}, 3), w = f64({2, 4, 1}, 4);
  std::vector<Array> in{y, w, index(2), index(1), array<int64_t>({-1}, Shape{})};
  Prim p =
      prim_of(dynamic_update_slice(y, w, {in[2], in[3], in[4]}), PrimitiveId::kDynamicUpdateSlice);
  check_ad(p, in);
  check_vmap(p, in, {2, 0, 0, 0, 0});
  check_vmap(p, in, {kUnbatched, kUnbatched, kUnbatched, 0, kUnbatched});
  check_vmap(p, in, {kUnbatched, 1, 0, kUnbatched, 0});
  Array ue = zeros({0, 3}, DType::kF64);
  std::vector<Array> ine{x, ue, index(1), index(1)};
  Prim pe =
      prim_of(dynamic_update_slice(x, ue, {ine[2], ine[3]}), PrimitiveId::kDynamicUpdateSlice);
  check_ad(pe, ine);
  check_vmap(pe, ine, {kUnbatched, 0, 0, 0});
  // Only the update's tangent: zeros around it.
  std::vector<Array> t{Array(), f64({2, 3}, 5), Array(), Array()};
  std::vector<Array> in2{x, u, index(1), index(2)};
  Prim q = prim_of(dynamic_update_slice(x, u, {in2[2], in2[3]}), PrimitiveId::kDynamicUpdateSlice);
  std::vector<double> g = vals(q->jvp(in2, t, {bind1(q, in2)})[0]), tu = vals(t[1]);
  for (int i = 0; i < 5; ++i) {
    for (int j = 0; j < 6; ++j) {
      bool inside = i >= 1 && i < 3 && j >= 2 && j < 5;
      EXPECT_EQ(g[i * 6 + j], inside ? tu[(i - 1) * 3 + (j - 2)] : 0.0) << i << "," << j;
    }
  }
  // Bool operands batch with batched starts too.
  Array bx = random_array({4, 5}, DType::kBool, 3, 0, 1),
        bu = random_array({2, 2}, DType::kBool, 4, 0, 1);
  Prim bp =
      prim_of(dynamic_update_slice(bx, bu, {index(1), index(3)}), PrimitiveId::kDynamicUpdateSlice);
  check_vmap(bp, {bx, bu, index(1), index(3)}, {0, kUnbatched, 0, 0});
}

// ---- iota ----

TEST(ShapeRules, IotaHasNothingToDifferentiate) {
  Array y = iota(DType::kF32, {2, 3}, 1);
  Prim p = prim_of(y, PrimitiveId::kIota);
  std::vector<Array> t = p->jvp({}, {}, {y});
  ASSERT_EQ(t.size(), 1u);
  EXPECT_FALSE(t[0].valid());
  EXPECT_TRUE(p->vjp({}, {y}, {ones({2, 3})}).empty());
  Batched b = p->vmap({}, {});
  ASSERT_EQ(b.outputs.size(), 1u);
  EXPECT_EQ(b.dims[0], -1);
  EXPECT_EQ(vals(b.outputs[0]), (std::vector<double>{0, 1, 2, 0, 1, 2}));
}

// ---- dtypes: rules keep f16/bf16/f32 (data movement is exact in any dtype) ----

TEST(ShapeRules, LowPrecisionDtypes) {
  for (DType dt : {DType::kF32, DType::kBF16, DType::kF16}) {
    Array x = random_array({4, 6}, dt, 5), v = scalar(0.5, dt);
    std::vector<Array> ys{reshape(x, {6, 4}),
                          transpose(x),
                          broadcast_in_dim(x, {2, 4, 6}, {1, 2}),
                          slice(x, {1, 0}, {4, 6}, {2, 2}),
                          flip(x, {1}),
                          dynamic_slice(x, {index(1), index(2)}, {2, 2}),
                          concatenate({x, x}, 1),
                          lax_pad(x, v, {{1, -1, 1}, {0, 2, 0}})};
    for (const Array& y : ys) {
      const Primitive* p = y.primitive();
      SCOPED_TRACE(std::string(p->name()) + " " + dtype_name(dt));
      std::vector<Array> in = y.inputs(), t(in.size());
      for (size_t i = 0; i < in.size(); ++i) {
        if (is_floating(in[i].dtype())) t[i] = in[i];  // the op is linear in these
      }
      Array g = p->jvp(in, t, {y})[0];
      EXPECT_EQ(g.dtype(), dt);
      EXPECT_EQ(vals(g), vals(y)) << "linear in its operand";
      std::vector<Array> ct = p->vjp(in, {y}, {ones_like(y)});
      EXPECT_EQ(ct[0].dtype(), dt);
      EXPECT_EQ(ct[0].shape(), x.shape());
    }
  }
}

// ---- second order: the rules' graphs are made of ops whose rules exist ----

TEST(ShapeRules, RulesOfRules) {
  // The vjp of slice is a pad; the vjp of that pad is the slice again.
  Array x = f64({5, 7});
  Array y = slice(x, {1, 0}, {5, 7}, {2, 3});
  Prim p = prim_of(y, PrimitiveId::kSlice);
  Array ct = f64(y.shape(), 8);
  Array back = p->vjp({x}, {y}, {ct})[0];
  ASSERT_EQ(back.primitive()->id(), PrimitiveId::kPad);
  const Primitive* pad = back.primitive();
  std::vector<Array> again = pad->vjp(back.inputs(), {back}, {x});
  EXPECT_EQ(vals(again[0]), vals(bind1(p, {x})));
}

}  // namespace
}  // namespace graft
