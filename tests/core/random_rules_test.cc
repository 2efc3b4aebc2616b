// Tests of threefry2x32's transform rules: no derivative, batching against a loop over the
// batch for every in_axes mix (scalar and full key words), and vmap of jax.random draws over a
// batch of keys against the loop over the keys, bit for bit.
#include <cmath>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "core/ops.h"
#include "core/primitive.h"
#include "core/primitives/random.h"
#include "core/random.h"
#include "gtest/gtest.h"
#include "transforms/vmap.h"

namespace graft {
namespace {

using Prim = std::shared_ptr<const Primitive>;
using Arrays = std::vector<Array>;

constexpr int kUnbatched = 1000;  // an in_axes entry meaning "not batched"

Prim prim_of(const Array& y, PrimitiveId id) {
  EXPECT_NE(y.primitive(), nullptr);
  EXPECT_EQ(y.primitive()->id(), id) << y.primitive()->name();
  return y.node()->primitive;
}

// Values in [lo, hi) of the given dtype (integers: floor of a uniform draw).
Array random_array(const Shape& s, DType dtype, uint32_t seed, double lo = -1, double hi = 1) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> u(lo, hi);
  std::vector<double> v(numel(s));
  for (double& x : v) x = is_integral(dtype) ? std::floor(u(gen)) : u(gen);
  return astype(array<double>(v, s), dtype);
}

Array at(const Array& x, int a, int64_t k) { return squeeze(slice_axis(x, a, k, k + 1), {a}); }

bool same_values(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (!(a[i] == b[i] || (std::isnan(a[i]) && std::isnan(b[i])))) return false;
  }
  return true;
}

// vmap of p with in_axes (kUnbatched, or an axis; negative counts from the end) against a
// loop over the batch. Batched args stack `b` variants of in[i]: floats random, integers in
// [lo, hi) (so indices can also miss), exactly equal results expected.
void check_vmap(const Prim& p, const Arrays& in, const std::vector<int>& in_axes, double lo = -3,
                double hi = 8, uint32_t seed = 7, int64_t b = 3) {
  SCOPED_TRACE(std::string(p->name()) + " " + p->params());
  Arrays args(in.size());
  std::vector<int> dims(in.size(), -1);
  std::vector<Arrays> variants(in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    SCOPED_TRACE("in_axes[" + std::to_string(i) + "]=" + std::to_string(in_axes[i]));
    if (in_axes[i] == kUnbatched) {
      args[i] = in[i];
      continue;
    }
    int r = in[i].ndim() + 1;
    dims[i] = in_axes[i] < 0 ? in_axes[i] + r : in_axes[i];
    bool integer = is_integral(in[i].dtype());
    double l = integer ? (is_unsigned(in[i].dtype()) ? 0 : lo) : -1, u = integer ? hi : 1;
    for (int64_t k = 0; k < b; ++k) {
      uint32_t s = seed + static_cast<uint32_t>(10 * i + k);
      variants[i].push_back(random_array(in[i].shape(), in[i].dtype(), s, l, u));
    }
    args[i] = stack(variants[i], dims[i]);
  }
  Batched out = p->vmap(args, dims);
  Arrays want0 = bind(p, in);
  ASSERT_EQ(out.outputs.size(), want0.size());
  ASSERT_EQ(out.dims.size(), want0.size());
  for (int64_t k = 0; k < b; ++k) {
    Arrays slice_in = in;
    for (size_t i = 0; i < in.size(); ++i) {
      if (dims[i] >= 0) slice_in[i] = variants[i][k];
    }
    Arrays want = bind(p, slice_in);
    for (size_t o = 0; o < want.size(); ++o) {
      ASSERT_GE(out.dims[o], 0);
      Array got = at(out.outputs[o], out.dims[o], k);
      EXPECT_EQ(got.shape(), want[o].shape()) << "batch " << k << " output " << o;
      EXPECT_EQ(got.dtype(), want[o].dtype());
      EXPECT_TRUE(same_values(got.to_vector<double>(), want[o].to_vector<double>()))
          << "batch " << k << " output " << o;
    }
  }
}

// Every in_axes combination of {unbatched, 0, 1, -1} per argument (at least one batched).
std::vector<std::vector<int>> axis_mixes(size_t n) {
  const int choices[] = {kUnbatched, 0, 1, -1};
  std::vector<std::vector<int>> out;
  size_t total = 1;
  for (size_t i = 0; i < n; ++i) total *= 4;
  for (size_t c = 1; c < total; ++c) {
    std::vector<int> axes;
    for (size_t i = 0, r = c; i < n; ++i, r /= 4) axes.push_back(choices[r % 4]);
    out.push_back(axes);
  }
  return out;
}

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
        if (ok) check_vmap(p, in, axes, 0, kU32Range);
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
