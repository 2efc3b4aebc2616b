// dynamic_slice / dynamic_update_slice start indices as JAX treats them: a negative start is
// wrapped once (plus the dimension) and then clamped into [0, dim - size]; eager, jit, vmap
// with per-example starts, grad, and vmap of grad.
//
// Reference values come from running JAX 0.10.2 on CPU. The operand is
// x = jnp.arange(30.).reshape(5, 6) (element (r, c) holds 6 r + c), so the block JAX read is
// named by its origin, read off JAX's output: for dynamic_slice out[0, 0] = 6 r + c, for
// dynamic_update_slice the first -1 of the result of writing u = -ones((2, 3)), e.g.
//   origin(lax.dynamic_slice(x, (jnp.int32(-1), jnp.int32(-1)), (3, 2))) == (2, 4)
//   origin(lax.dynamic_update_slice(x, u, (jnp.int32(-1), jnp.int32(-4)))) == (3, 2)
//   [origin(o) for o in jax.vmap(lambda s: lax.dynamic_slice(x, (s, s), (3, 2)))(vs)]
// with vs = jnp.array([-1, -4, 0, 3, -7, 9], jnp.int32).
#include <string>
#include <utility>
#include <vector>

#include "core/ops.h"
#include "gtest/gtest.h"
#include "transforms/autodiff.h"
#include "transforms/jit.h"
#include "transforms/vmap.h"

namespace graft {
namespace {

using Origin = std::pair<int64_t, int64_t>;

Array x56() { return reshape(arange(0.0, 30.0, 1.0, DType::kF32), {5, 6}); }
Array i32(int64_t v) { return scalar(static_cast<double>(v), DType::kI32); }

// The starts tried (the first is in range) and the origins JAX gave for each.
const std::vector<Origin> kStarts = {{1, 2},   {4, -3},   {-1, -1}, {-5, -6},
                                     {-6, -7}, {-100, 2}, {9, -1},  {2, 100}};
const std::vector<Origin> kSliceOrigins = {{1, 2}, {2, 3}, {2, 4}, {0, 0},
                                           {0, 0}, {0, 2}, {2, 4}, {2, 4}};  // sizes (3, 2)
const std::vector<Origin> kUpdateOrigins = {{1, 2}, {3, 3}, {3, 3}, {0, 0},
                                            {0, 0}, {0, 2}, {3, 3}, {2, 3}};  // update (2, 3)

// The [5, 6] operand with a (2, 3) block of -1 at `o` (a plain loop).
std::vector<float> updated_at(Origin o) {
  std::vector<float> v(30);
  for (int r = 0; r < 5; ++r) {
    for (int c = 0; c < 6; ++c) {
      bool in = r >= o.first && r < o.first + 2 && c >= o.second && c < o.second + 3;
      v[r * 6 + c] = in ? -1.0f : static_cast<float>(6 * r + c);
    }
  }
  return v;
}

// x's (3, 2) block at `o`.
std::vector<float> block_at(Origin o) {
  std::vector<float> v;
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 2; ++c) v.push_back(static_cast<float>(6 * (o.first + r) + o.second + c));
  return v;
}

std::string name(Origin s) {
  return "starts (" + std::to_string(s.first) + ", " + std::to_string(s.second) + ")";
}

TEST(DynamicSliceJax, NegativeStartsWrapThenClampEagerAndJit) {
  Array x = x56();
  auto ds = [](const Array& x, const Array& a, const Array& b) {
    return dynamic_slice(x, {a, b}, {3, 2});
  };
  auto jds = jit(ds);
  for (size_t i = 0; i < kStarts.size(); ++i) {
    auto [a, b] = kStarts[i];
    std::vector<float> want = block_at(kSliceOrigins[i]);
    EXPECT_EQ(ds(x, i32(a), i32(b)).to_vector<float>(), want) << name(kStarts[i]);
    EXPECT_EQ(jds(x, i32(a), i32(b)).to_vector<float>(), want) << "jit " << name(kStarts[i]);
    Array a64 = scalar(static_cast<double>(a), DType::kI64);
    EXPECT_EQ(ds(x, a64, i32(b)).to_vector<float>(), want) << "i64 " << name(kStarts[i]);
  }
  // Unsigned starts are never negative: 200 clamps to the last row.
  Array u = dynamic_slice(x, {scalar(200, DType::kU8), scalar(0, DType::kU8)}, {1, 6});
  EXPECT_EQ(u.to_vector<float>(), (std::vector<float>{24, 25, 26, 27, 28, 29}));
}

TEST(DynamicSliceJax, UpdateSliceNegativeStartsEagerAndJit) {
  Array x = x56(), u = full({2, 3}, -1.0, DType::kF32);
  auto dus = [](const Array& x, const Array& u, const Array& a, const Array& b) {
    return dynamic_update_slice(x, u, {a, b});
  };
  auto jdus = jit(dus);
  for (size_t i = 0; i < kStarts.size(); ++i) {
    auto [a, b] = kStarts[i];
    std::vector<float> want = updated_at(kUpdateOrigins[i]);
    EXPECT_EQ(dus(x, u, i32(a), i32(b)).to_vector<float>(), want) << name(kStarts[i]);
    EXPECT_EQ(jdus(x, u, i32(a), i32(b)).to_vector<float>(), want) << "jit " << name(kStarts[i]);
  }
}

const std::vector<int32_t> kBatchStarts = {-1, -4, 0, 3, -7, 9};

TEST(DynamicSliceJax, VmapWithPerExampleStarts) {
  Array x = x56(), u = full({2, 3}, -1.0, DType::kF32);
  Array vs = array<int32_t>(kBatchStarts);
  struct Row {
    std::string what;
    Array got;
    bool update;  // dynamic_update_slice (else dynamic_slice)
    std::vector<Origin> want;
  };
  std::vector<Row> rows;
  rows.push_back({"slice (s, s)",
                  vmap([&](const Array& s) {
                    return dynamic_slice(x, {s, s}, {3, 2});
                  })(vs),
                  false,
                  {{2, 4}, {1, 2}, {0, 0}, {2, 3}, {0, 0}, {2, 4}}});
  rows.push_back({"slice (s, -2)",
                  vmap([&](const Array& s) {
                    return dynamic_slice(x, {s, i32(-2)}, {3, 2});
                  })(vs),
                  false,
                  {{2, 4}, {1, 4}, {0, 4}, {2, 4}, {0, 4}, {2, 4}}});
  Array xb = stack(std::vector<Array>(6, x), 0);  // a batched operand as well
  rows.push_back({"update (s, -s), batched operand",
                  vmap([&](const Array& x, const Array& s) {
                    return dynamic_update_slice(x, u, {s, neg(s)});
                  })(xb, vs),
                  true,
                  {{3, 1}, {1, 3}, {0, 0}, {3, 3}, {0, 3}, {3, 0}}});
  rows.push_back({"update (-1, s)",
                  vmap([&](const Array& s) {
                    return dynamic_update_slice(x, u, {i32(-1), s});
                  })(vs),
                  true,
                  {{3, 3}, {3, 2}, {3, 0}, {3, 3}, {3, 0}, {3, 3}}});
  for (const Row& r : rows) {
    std::vector<float> got = r.got.to_vector<float>();
    const size_t per = r.update ? 30 : 6;
    ASSERT_EQ(got.size(), per * 6) << r.what;
    for (size_t k = 0; k < 6; ++k) {
      std::vector<float> want = r.update ? updated_at(r.want[k]) : block_at(r.want[k]);
      std::vector<float> member(got.begin() + k * per, got.begin() + (k + 1) * per);
      EXPECT_EQ(member, want) << r.what << ", start " << kBatchStarts[k];
    }
  }
}

// The gradients put the cotangent back where the forward read or wrote.
TEST(DynamicSliceJax, GradientsFollowTheWrappedStarts) {
  Array x = x56(), u = full({2, 3}, -1.0, DType::kF32);
  Array w = reshape(arange(1.0, 7.0, 1.0, DType::kF32), {3, 2});
  // jax.grad(lambda x: (lax.dynamic_slice(x, (-2, -1), (3, 2)) * w).sum())(x): w at (2, 4).
  Array g = grad([&](const Array& x) {
    return sum(dynamic_slice(x, {i32(-2), i32(-1)}, {3, 2}) * w);
  })(x);
  std::vector<float> want(30, 0.0f);
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 2; ++c) want[(2 + r) * 6 + 4 + c] = static_cast<float>(r * 2 + c + 1);
  EXPECT_EQ(g.to_vector<float>(), want);
  // jax.grad of sum(lax.dynamic_update_slice(x, u, (-1, -4)) * x) w.r.t. u and x.
  auto f = [](const Array& x, const Array& u) {
    return sum(dynamic_update_slice(x, u, {i32(-1), i32(-4)}) * x);
  };
  auto [gx, gu] = grad(f, argnums<0, 1>)(x, u);
  EXPECT_EQ(gu.to_vector<float>(), (std::vector<float>{20, 21, 22, 26, 27, 28}));
  std::vector<float> want_x(30);
  for (int i = 0; i < 30; ++i) want_x[i] = 2.0f * i;
  for (int i : {20, 21, 22, 26, 27, 28}) want_x[i] = -1.0f;
  EXPECT_EQ(gx.to_vector<float>(), want_x);
  // jax.vmap(jax.grad(lambda x, s: (lax.dynamic_slice(x, (s, -s), (3, 2)) * w).sum()),
  //          in_axes=(None, 0))(x, vs): w at these origins.
  Array gv = vmap(
      [&](const Array& s) {
        return grad([&](const Array& x) {
          return sum(dynamic_slice(x, {s, neg(s)}, {3, 2}) * w);
        })(x);
      },
      {0})(array<int32_t>(kBatchStarts));
  const std::vector<Origin> origins = {{2, 1}, {1, 4}, {0, 0}, {2, 3}, {0, 4}, {2, 0}};
  std::vector<float> got = gv.to_vector<float>();
  ASSERT_EQ(got.size(), 180u);
  for (size_t k = 0; k < 6; ++k) {
    std::vector<float> want_k(30, 0.0f);
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < 2; ++c)
        want_k[(origins[k].first + r) * 6 + origins[k].second + c] = float(r * 2 + c + 1);
    EXPECT_EQ(std::vector<float>(got.begin() + k * 30, got.begin() + (k + 1) * 30), want_k)
        << "start " << kBatchStarts[k];
  }
}

}  // namespace
}  // namespace graft
