// Direct tests of the index family's transform rules (gather, scatter_add, sort), called on
// concrete arrays. jvp and vjp are checked against Jacobians from central finite differences
// in f64; second order differentiates the rules themselves (through the jvp / vjp drivers)
// against finite differences of the rules; vmap against a loop over the batch.
#include <cmath>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "core/ops.h"
#include "core/ir/primitive.h"
#include "core/primitives/index.h"
#include "gtest/gtest.h"
#include "tests/core/primitives/rule_checks.h"
#include "core/interpreters/ad.h"
#include "transforms/vmap.h"

namespace graft {
namespace {

using namespace testing_rules;  // NOLINT(build/namespaces)

Prim gather_prim(const Array& x, const Array& idx, int axis, int bd, GatherMode mode) {
  return prim_of(apply<Gather>({x, idx}, axis, bd, mode), PrimitiveId::kGather);
}

// ---- gather ----

TEST(IndexRules, GatherAd) {
  // In-range, wrapped (negative) and missing indices; a duplicate; several layouts.
  Array x = f64({4, 5});
  Array idx = ints({0, 3, -1, 7, 3, -6}, {2, 3});
  for (GatherMode mode : {GatherMode::kFill, GatherMode::kClip}) {
    for (int axis : {0, 1}) {
      Prim p = gather_prim(x, idx, axis, 0, mode);
      check_ad(p, {x, idx});
      check_ad2(p, {x, idx});
    }
    // batch_dims: per-row indices.
    Array y = f64({3, 4, 5, 2});
    Array bidx = ints({0, 4, -2, 9, 1, 1, 2, 3, -9}, {3, 3});
    Prim q = gather_prim(y, bidx, 2, 1, mode);
    check_ad(q, {y, bidx});
    check_ad2(q, {y, bidx});
    // Scalar index, rank-1 operand; u8 indices.
    check_ad(gather_prim(f64({6}), ints({-2}, {}), 0, 0, mode), {f64({6}), ints({-2}, {})});
    Array u = astype(ints({5, 0, 200}, {3}), DType::kU8);
    check_ad(gather_prim(f64({6, 2}), u, 0, 0, mode), {f64({6, 2}), u});
  }
}

TEST(IndexRules, GatherFillTangentIsZeroWhereIndexMisses) {
  Array x = f64({3});
  Array idx = ints({5, 1, -4}, {3});
  Prim p = gather_prim(x, idx, 0, 0, GatherMode::kFill);
  Array t = array<double>({1, 2, 3});
  Arrays out = graft::bind(p, {x, idx});
  EXPECT_EQ(p->jvp({x, idx}, {t, Array()}, out)[0].to_vector<double>(),
            (std::vector<double>{0, 2, 0}));
  // kClip: the cotangent goes to the clamped element (5 -> 2, -4 -> 0).
  Prim c = gather_prim(x, idx, 0, 0, GatherMode::kClip);
  Array ct = array<double>({1, 10, 100});
  EXPECT_EQ(c->vjp({x, idx}, graft::bind(c, {x, idx}), {ct})[0].to_vector<double>(),
            (std::vector<double>{100, 10, 1}));
}

TEST(IndexRules, GatherEmpty) {
  Array x = f64({0, 3});
  Array idx = zeros({0}, DType::kI32);
  check_ad(gather_prim(x, idx, 0, 0, GatherMode::kFill), {x, idx});
  Array y = f64({2, 3});
  check_ad(gather_prim(y, idx, 1, 0, GatherMode::kClip), {y, idx});
  check_vmap(gather_prim(y, idx, 1, 0, GatherMode::kClip), {y, idx}, {0, 0});
}

TEST(IndexRules, GatherVmap) {
  Array x = f64({4, 5, 2});
  Array idx = ints({0, 3, -1, 7, 3, 2}, {2, 3});
  for (GatherMode mode : {GatherMode::kFill, GatherMode::kClip}) {
    for (int axis : {0, 1, 2}) {
      Prim p = gather_prim(x, idx, axis, 0, mode);
      for (const auto& axes : axis_mixes(2)) check_vmap(p, {x, idx}, axes);
    }
    // With batch dims (operand and indices share the leading dims).
    Array y = f64({3, 4, 5});
    Array bidx = ints({0, 4, -2, 9, 1, 1}, {3, 2});
    for (int axis : {1, 2}) {
      Prim q = gather_prim(y, bidx, axis, 1, mode);
      for (const auto& axes : axis_mixes(2)) check_vmap(q, {y, bidx}, axes);
      for (int a : {2, 3}) {
        check_vmap(q, {y, bidx}, {a, kUnbatched});
        check_vmap(q, {y, bidx}, {a, 2});
      }
    }
    Prim r = gather_prim(y, ints({1, 0, 2}, {3}), 1, 1, mode);  // rank-1 indices, batch_dims 1
    for (const auto& axes : axis_mixes(2)) check_vmap(r, {y, ints({1, 0, 2}, {3})}, axes);
  }
}

// ---- scatter_add ----

Prim scatter_prim(const Array& x, const Array& idx, const Array& u, int axis, int bd) {
  return prim_of(apply<ScatterAdd>({x, idx, u}, axis, bd), PrimitiveId::kScatterAdd);
}

TEST(IndexRules, ScatterAddAd) {
  Array x = f64({4, 5});
  Array idx = ints({0, 3, -1, 7, 3, -6}, {2, 3});
  Prim p0 = scatter_prim(x, idx, f64({2, 3, 5}), 0, 0);
  check_ad(p0, {x, idx, f64({2, 3, 5})});
  check_ad2(p0, {x, idx, f64({2, 3, 5})});
  Prim p1 = scatter_prim(x, idx, f64({4, 2, 3}), 1, 0);
  check_ad(p1, {x, idx, f64({4, 2, 3})});
  check_ad2(p1, {x, idx, f64({4, 2, 3})});
  Array y = f64({3, 4, 2});
  Array bidx = ints({0, 4, -2, 9, 1, 1}, {3, 2});
  Prim q = scatter_prim(y, bidx, f64({3, 2, 2}), 1, 1);
  check_ad(q, {y, bidx, f64({3, 2, 2})});
  check_ad2(q, {y, bidx, f64({3, 2, 2})});
  // Only one of operand / updates differentiated.
  Arrays in{x, idx, f64({2, 3, 5})};
  Arrays outs = graft::bind(p0, in), t{f64({4, 5}, 9), Array(), Array()};
  EXPECT_EQ(p0->jvp(in, t, outs)[0].to_vector<double>(), t[0].to_vector<double>());
}

TEST(IndexRules, ScatterAddDroppedUpdatesGetZero) {
  Array x = f64({3});
  Array idx = ints({5, 1, -4, -3}, {4});
  Prim p = scatter_prim(x, idx, f64({4}), 0, 0);
  Array ct = array<double>({1, 10, 100});
  Arrays g = p->vjp({x, idx, f64({4})}, graft::bind(p, {x, idx, f64({4})}), {ct});
  EXPECT_EQ(g[0].to_vector<double>(), ct.to_vector<double>());
  EXPECT_FALSE(g[1].valid());
  EXPECT_EQ(g[2].to_vector<double>(), (std::vector<double>{0, 10, 0, 1}));
  // Unsigned indices, an axis longer than u8 can address: nothing is dropped.
  Array u = astype(ints({255, 3}, {2}), DType::kU8);
  Array big = f64({300});
  Prim b = scatter_prim(big, u, f64({2}), 0, 0);
  Array ct2 = f64({300}, 5);
  std::vector<double> c = ct2.to_vector<double>();
  EXPECT_EQ(
      b->vjp({big, u, f64({2})}, graft::bind(b, {big, u, f64({2})}), {ct2})[2].to_vector<double>(),
      (std::vector<double>{c[255], c[3]}));
}

TEST(IndexRules, ScatterAddVmap) {
  Array x = f64({4, 5});
  Array idx = ints({0, 3, -1, 7, 3, 2}, {2, 3});
  Prim p0 = scatter_prim(x, idx, f64({2, 3, 5}), 0, 0);
  Prim p1 = scatter_prim(x, idx, f64({4, 2, 3}), 1, 0);
  for (const auto& axes : axis_mixes(3)) {
    check_vmap(p0, {x, idx, f64({2, 3, 5})}, axes);
    check_vmap(p1, {x, idx, f64({4, 2, 3})}, axes);
  }
  Array y = f64({3, 4, 2});
  Array bidx = ints({0, 4, -2, 9, 1, 1}, {3, 2});
  Prim q = scatter_prim(y, bidx, f64({3, 2, 2}), 1, 1);
  for (const auto& axes : axis_mixes(3)) check_vmap(q, {y, bidx, f64({3, 2, 2})}, axes);
  // Integer operands batch too.
  Array xi = astype(f64({4, 5}), DType::kI32);
  Prim pi = scatter_prim(xi, idx, astype(f64({2, 3, 5}), DType::kI32), 0, 0);
  check_vmap(pi, {xi, idx, astype(f64({2, 3, 5}), DType::kI32)}, {0, 1, -1});
}

// ---- sort ----

TEST(IndexRules, SortAd) {
  Array x = f64({3, 5});
  for (int axis : {0, 1}) {
    Prim p = prim_of(sort(x, axis), PrimitiveId::kSort);
    check_ad(p, {x});
    check_ad2(p, {x});
  }
  // Keys and values: both float; int keys with float values; float keys with int values.
  Array k = f64({4, 3}, 11), v = f64({4, 3}, 12);
  Prim kv = prim_of(sort_key_val(k, v, 0).first, PrimitiveId::kSort);
  check_ad(kv, {k, v});
  check_ad2(kv, {k, v});
  Array ik = astype(random_array({4, 3}, DType::kF64, 5, -3, 3), DType::kI32);
  check_ad(kv, {ik, v});
  check_ad2(kv, {ik, v});
  Array iv = astype(random_array({4, 3}, DType::kF64, 6, -9, 9), DType::kI32);
  check_ad(kv, {k, iv});
  // One output's cotangent zero: only the other flows back.
  Arrays outs = graft::bind(kv, {k, v});
  Arrays g = kv->vjp({k, v}, outs, {Array(), f64({4, 3}, 13)});
  EXPECT_FALSE(g[0].valid());
  ASSERT_TRUE(g[1].valid());
  // Empty and single-element axes.
  Prim e = prim_of(sort(f64({0, 3}), 0), PrimitiveId::kSort);
  check_ad(e, {f64({0, 3})});
  Prim one = prim_of(sort(f64({3, 1}), 1), PrimitiveId::kSort);
  check_ad(one, {f64({3, 1})});
}

TEST(IndexRules, SortVmap) {
  Array x = f64({3, 5});
  for (int axis : {0, 1}) {
    Prim p = prim_of(sort(x, axis), PrimitiveId::kSort);
    for (int a : {0, 1, 2, -1}) check_vmap(p, {x}, {a});
  }
  Array k = f64({4, 3}, 11), v = f64({4, 3}, 12);
  for (int axis : {0, 1}) {
    Prim kv = prim_of(sort_key_val(k, v, axis).first, PrimitiveId::kSort);
    for (const auto& axes : axis_mixes(2)) check_vmap(kv, {k, v}, axes);
    Array ik = astype(random_array({4, 3}, DType::kF64, 5, -3, 3), DType::kI32);
    for (const auto& axes : axis_mixes(2))
      check_vmap(kv, {ik, v}, axes, {.int_lo = -3, .int_hi = 3});  // ties
  }
  Prim one = prim_of(sort(f64({4}), 0), PrimitiveId::kSort);
  check_vmap(one, {f64({4})}, {1});
}

// ---- through the drivers ----

TEST(IndexRules, DriversComposeGatherScatterSort) {
  // vmap of a function mixing the three, batched indices with an unbatched operand.
  Array table = f64({6, 3});
  Array idx = ints({0, 5, 2, 1, 1, 4, 3, 0}, {4, 2});
  auto f = [&](const Array& i) {
    Array g = take(table, i, 0);  // (2, 3)
    return sort(scatter_add(zeros({6, 3}, DType::kF64), i, g, 0), 0);
  };
  Array got = vmap(f)(idx);
  for (int64_t k = 0; k < 4; ++k) {
    EXPECT_TRUE(
        same_values(at(got, 0, k).to_vector<double>(), f(at(idx, 0, k)).to_vector<double>()))
        << "batch " << k;
  }
}

}  // namespace
}  // namespace graft
