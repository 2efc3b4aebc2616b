// Direct tests of the shape family's transform rules (jvp, vjp, vmap), called on concrete
// arrays. jvp and vjp are checked against a Jacobian built column by column from central
// finite differences in f64; vmap against a loop of the primitive over the batch slices.
#include <cmath>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "core/ops.h"
#include "core/primitive.h"
#include "core/primitives/shape.h"
#include "gtest/gtest.h"

namespace graft {
namespace {

using Prim = std::shared_ptr<const Primitive>;

constexpr int kUnbatched = 1000;  // an in_axes entry meaning "not batched"

// The primitive of y's node (y must come straight from the op under test).
Prim prim_of(const Array& y, PrimitiveId id) {
  EXPECT_NE(y.primitive(), nullptr);
  EXPECT_EQ(y.primitive()->id(), id) << y.primitive()->name();
  return y.node()->primitive;
}

// Values in [lo, hi) of the given dtype (rounded for integers, > 0.5 for bool).
Array random_array(const Shape& s, DType dtype, uint32_t seed, double lo = -1, double hi = 1) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> u(lo, hi);
  std::vector<double> v(numel(s));
  for (double& x : v) {
    x = u(gen);
    if (is_integral(dtype)) x = std::floor(x);
    if (dtype == DType::kBool) x = x > 0.5 * (lo + hi);
  }
  return astype(array<double>(v, s), dtype);
}

Array index(int64_t v) { return array<int32_t>({static_cast<int32_t>(v)}, Shape{}); }

std::vector<double> vals(const Array& a) { return a.to_vector<double>(); }

double inner(const std::vector<double>& a, const std::vector<double>& b) {
  double s = 0;
  for (size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
  return s;
}

// Column j of input i of the Jacobian of p at `in`, by central differences.
std::vector<double> fd_column(const Prim& p, std::vector<Array> in, size_t i, int64_t j) {
  const double h = 1e-6;
  std::vector<double> x = vals(in[i]);
  auto at = [&](double delta) {
    std::vector<double> xd = x;
    xd[j] += delta;
    in[i] = array<double>(xd, in[i].shape());
    return vals(bind1(p, in));
  };
  std::vector<double> plus = at(h), minus = at(-h);
  for (size_t k = 0; k < plus.size(); ++k) plus[k] = (plus[k] - minus[k]) / (2 * h);
  return plus;
}

void expect_near(const std::vector<double>& got, const std::vector<double>& want,
                 const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t k = 0; k < got.size(); ++k) {
    EXPECT_NEAR(got[k], want[k], 1e-7 * (1 + std::abs(want[k]))) << what << " at " << k;
  }
}

// jvp and vjp of p at `in` (f64 inputs are differentiated, integer ones are not) against the
// finite-difference Jacobian J: jvp(t) == J t and vjp(ct) == J^T ct for random t and ct.
void check_ad(const Prim& p, const std::vector<Array>& in, uint32_t seed = 1) {
  SCOPED_TRACE(std::string(p->name()) + " " + p->params());
  Array out = bind1(p, in);
  std::vector<Array> t(in.size());
  std::vector<double> want_jvp(out.size(), 0.0);
  Array ct = random_array(out.shape(), DType::kF64, seed + 100);
  std::vector<Array> got_vjp = p->vjp(in, {out}, {ct});
  ASSERT_EQ(got_vjp.size(), in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    if (!is_floating(in[i].dtype())) {
      EXPECT_FALSE(got_vjp[i].valid()) << "input " << i << " is an index: no cotangent";
      continue;
    }
    t[i] = random_array(in[i].shape(), DType::kF64, seed + static_cast<uint32_t>(i));
    std::vector<double> ti = vals(t[i]), want_vjp(in[i].size());
    for (int64_t j = 0; j < in[i].size(); ++j) {
      std::vector<double> col = fd_column(p, in, i, j);
      for (size_t k = 0; k < col.size(); ++k) want_jvp[k] += col[k] * ti[j];
      want_vjp[j] = inner(col, vals(ct));
    }
    ASSERT_TRUE(got_vjp[i].valid()) << "input " << i;
    EXPECT_EQ(got_vjp[i].shape(), in[i].shape());
    EXPECT_EQ(got_vjp[i].dtype(), in[i].dtype());
    expect_near(vals(got_vjp[i]), want_vjp, "vjp of input " + std::to_string(i));
  }
  std::vector<Array> got = p->jvp(in, t, {out});
  ASSERT_EQ(got.size(), 1u);
  ASSERT_TRUE(got[0].valid());
  EXPECT_EQ(got[0].shape(), out.shape());
  EXPECT_EQ(got[0].dtype(), out.dtype());
  expect_near(vals(got[0]), want_jvp, "jvp");
  // All tangents symbolic zeros: a zero tangent.
  EXPECT_FALSE(p->jvp(in, std::vector<Array>(in.size()), {out})[0].valid());
  // One differentiable input at a time (the others symbolic zeros): <ct, jvp(t_i)> ==
  // <vjp(ct)_i, t_i>.
  for (size_t i = 0; i < in.size(); ++i) {
    if (!t[i].valid()) continue;
    std::vector<Array> ti(in.size());
    ti[i] = t[i];
    Array g = p->jvp(in, ti, {out})[0];
    ASSERT_TRUE(g.valid());
    EXPECT_NEAR(inner(vals(g), vals(ct)), inner(vals(got_vjp[i]), vals(t[i])), 1e-9)
        << "input " << i;
  }
}

// Slice k of x along axis a.
Array at(const Array& x, int a, int64_t k) { return squeeze(slice_axis(x, a, k, k + 1), {a}); }

// vmap of p with the given in_axes (kUnbatched, or an axis of the batched arg; negative
// counts from its end) against a loop over the batch. Batched args stack B variants of
// in[i] (random, in [lo, hi) for integer args so that start indices also clamp).
void check_vmap(const Prim& p, const std::vector<Array>& in, const std::vector<int>& in_axes,
                uint32_t seed = 7, int64_t b = 3) {
  SCOPED_TRACE(std::string(p->name()) + " " + p->params());
  std::vector<Array> args(in.size());
  std::vector<int> dims(in.size(), -1);
  std::vector<std::vector<Array>> variants(in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    if (in_axes[i] == kUnbatched) {
      args[i] = in[i];
      continue;
    }
    int r = in[i].ndim() + 1;
    dims[i] = in_axes[i] < 0 ? in_axes[i] + r : in_axes[i];
    double hi = is_integral(in[i].dtype()) ? 8 : 1;
    double lo = is_unsigned(in[i].dtype()) ? 0 : -3;
    for (int64_t k = 0; k < b; ++k) {
      uint32_t s = seed + static_cast<uint32_t>(10 * i + k);
      variants[i].push_back(random_array(in[i].shape(), in[i].dtype(), s, lo, hi));
    }
    args[i] = stack(variants[i], dims[i]);
  }
  Batched out = p->vmap(args, dims);
  ASSERT_EQ(out.outputs.size(), 1u);
  ASSERT_EQ(out.dims.size(), 1u);
  int od = out.dims[0];
  ASSERT_GE(od, 0);
  for (int64_t k = 0; k < b; ++k) {
    std::vector<Array> slice_in = in;
    for (size_t i = 0; i < in.size(); ++i) {
      if (dims[i] >= 0) slice_in[i] = variants[i][k];
    }
    Array want = bind1(p, slice_in);
    Array got = at(out.outputs[0], od, k);
    EXPECT_EQ(got.shape(), want.shape()) << "batch " << k;
    EXPECT_EQ(got.dtype(), want.dtype());
    EXPECT_EQ(vals(got), vals(want)) << "batch " << k;
  }
}

Array f64(const Shape& s, uint32_t seed = 3) { return random_array(s, DType::kF64, seed); }

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
