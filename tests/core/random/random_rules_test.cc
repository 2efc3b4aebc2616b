// Tests of threefry2x32's transform rules: no derivative, batching against a loop over the
// batch for every in_axes mix (scalar and full key words), and vmap of jax.random draws over a
// batch of keys against the loop over the keys, bit for bit.
#include <cmath>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "core/ops.h"
#include "core/ir/primitive.h"
#include "core/primitives/random.h"
#include "core/random/random.h"
#include "gtest/gtest.h"
#include "tests/core/primitives/rule_checks.h"
#include "transforms/vmap.h"

namespace graft {
namespace {

using namespace testing_rules;  // NOLINT(build/namespaces)

constexpr double kU32Range = 4294967296.0;

Array u32(const Shape& s, uint32_t seed) {
  return random_array(s, DType::kU32, seed, 0, kU32Range);
}

TEST(RandomRules, Threefry2x32IsNotDifferentiable) {
  Array k = u32({}, 1), x = u32({3}, 2);
  auto [y1, y2] = random::threefry2x32(k, k, x, x);
  Prim p = prim_of(y1, PrimitiveId::kThreefry2x32);
  Arrays in{k, k, x, x}, outs{y1, y2};
  for (const Array& t : p->jvp(in, Arrays(4), outs)) EXPECT_FALSE(t.valid());
  Arrays cts{zeros({3}, DType::kF32), zeros({3}, DType::kF32)};
  Arrays g = p->vjp(in, outs, cts);
  ASSERT_EQ(g.size(), 4u);
  for (const Array& c : g) EXPECT_FALSE(c.valid());
}

TEST(RandomRules, Threefry2x32Vmap) {
  // Scalar key words with counters of rank 0, 1, 2; key words of the counters' shape.
  for (const Shape& xs : {Shape{}, Shape{4}, Shape{2, 3}}) {
    for (bool full_keys : {false, true}) {
      Shape ks = full_keys ? xs : Shape{};
      Arrays in{u32(ks, 1), u32(ks, 2), u32(xs, 3), u32(xs, 4)};
      auto [y1, y2] = random::threefry2x32(in[0], in[1], in[2], in[3]);
      Prim p = prim_of(y1, PrimitiveId::kThreefry2x32);
      for (const auto& axes : axis_mixes(4)) {
        bool ok = true;  // axis 1 / -1 of a rank-0 arg is axis 0 of the batched one
        for (size_t i = 0; i < 4; ++i) ok = ok && !(axes[i] == 1 && in[i].ndim() == 0);
        if (ok) check_vmap(p, in, axes, {.int_lo = 0, .int_hi = kU32Range});
      }
    }
  }
}

// vmap(f)(keys) equals stacking f(keys[k]) over k, exactly.
template <typename F>
void expect_vmap_matches_loop(const F& f, const Array& keys) {
  Array got = vmap(f)(keys);
  for (int64_t k = 0; k < keys.shape()[0]; ++k) {
    Array want = f(at(keys, 0, k));
    Array g = at(got, 0, k);
    EXPECT_EQ(g.shape(), want.shape());
    EXPECT_EQ(g.dtype(), want.dtype());
    EXPECT_TRUE(same_values(g.to_vector<double>(), want.to_vector<double>())) << "key " << k;
  }
}

TEST(RandomRules, VmapOfDrawsOverKeys) {
  Array keys = random::split(random::key(42), 5);
  expect_vmap_matches_loop([](const Array& k) { return random::uniform(k, {3, 2}); }, keys);
  expect_vmap_matches_loop([](const Array& k) { return random::uniform(k); }, keys);
  expect_vmap_matches_loop(
      [](const Array& k) { return random::uniform(k, {4}, DType::kF64, -2, 3); }, keys);
  expect_vmap_matches_loop([](const Array& k) { return random::normal(k, {7}); }, keys);
  expect_vmap_matches_loop([](const Array& k) { return random::bits(k, {2, 2}); }, keys);
  expect_vmap_matches_loop([](const Array& k) { return random::split(k, 3); }, keys);
  expect_vmap_matches_loop([](const Array& k) { return random::fold_in(k, 7u); }, keys);
}

}  // namespace
}  // namespace graft
