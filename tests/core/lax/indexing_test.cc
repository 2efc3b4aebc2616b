// Op-level tests of the index family: error messages, one_hot, multi-key sort, determinism
// of scatter_add, and edge cases that do not fit the spec table.
#include <cmath>
#include <cstring>
#include <random>
#include <string>

#include "core/ops.h"
#include "core/lax/util.h"
#include "core/primitives/index.h"
#include "gtest/gtest.h"

namespace graft {
namespace {

// Runs f, expecting graft::Error with a message starting with prefix.
template <typename F>
void expect_error(F&& f, const std::string& prefix) {
  try {
    f();
    ADD_FAILURE() << "no error; expected one starting with " << prefix;
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).rfind(prefix, 0), 0u) << e.what();
  }
}

Array f32(std::vector<float> v, Shape s) { return array<float>(v, s); }
Array i32(std::vector<int32_t> v, Shape s) { return array<int32_t>(v, s); }

TEST(IndexOps, TakeErrors) {
  Array x = zeros({3, 4});
  expect_error([&] { take(x, f32({1}, {1})); }, "[take] indices must have an integer dtype");
  expect_error([&] { take(x, i32({1}, {1}), 2); }, "[take] axis 2 is out of range");
  expect_error([&] { take(zeros({}), i32({0}, {1})); }, "[take] axis 0 is out of range");
  expect_error([&] { take(zeros({0, 2}), i32({0}, {1})); }, "[take] cannot take");
  expect_error([&] { take(x, Array()); }, "[take]");
  // Taking nothing from an empty axis is fine.
  EXPECT_EQ(take(zeros({0, 2}), i32({}, {0})).shape(), (Shape{0, 2}));
}

TEST(IndexOps, TakeAlongAxisErrors) {
  Array x = zeros({3, 4});
  expect_error(
      [&] {
        take_along_axis(x, i32({0, 1}, {2}), 1);
      },
      "[take_along_axis] indices and x must have the same rank");
  expect_error([&] { take_along_axis(x, i32({0, 1}, {2, 1}), 1); }, "[take_along_axis] shapes");
  expect_error(
      [&] {
        take_along_axis(x, f32({0}, {1, 1}), 1);
      },
      "[take_along_axis] indices must have an integer dtype");
  expect_error(
      [&] {
        take_along_axis(x, i32({0}, {1, 1}), -3);
      },
      "[take_along_axis] axis -3 is out of range");
}

TEST(IndexOps, TakeAlongEmptyAxisGivesZeros) {
  Array out = take_along_axis(zeros({2, 0}), i32({0, 0, 0, 0}, {2, 2}), 1);
  EXPECT_EQ(out.shape(), (Shape{2, 2}));
  EXPECT_EQ(out.to_vector<float>(), std::vector<float>(4, 0.0f));
}

TEST(IndexOps, ScatterAddErrors) {
  Array x = zeros({3, 4});
  expect_error(
      [&] {
        scatter_add(x, i32({0, 1}, {2}), zeros({3, 4}));
      },
      "[scatter_add] updates f32[3,4] do not broadcast to (2, 4)");
  expect_error([&] { scatter_add(zeros({3}, DType::kBool), i32({0}, {1}), Array(true)); },
               "[scatter_add] x must be numeric");
  expect_error(
      [&] {
        scatter_add(x, f32({0}, {1}), zeros({1, 4}));
      },
      "[scatter_add] indices must have an integer dtype");
  expect_error(
      [&] {
        scatter_add(x, i32({0}, {1}), zeros({1, 4}), 5);
      },
      "[scatter_add] axis 5 is out of range");
}

TEST(IndexOps, ScatterAddCastsUpdatesToTheOperandDtype) {
  Array x = zeros({3}, DType::kI32);
  Array out = scatter_add(x, i32({2, 2, 0}, {3}), f32({1.7f, 2.2f, -1.5f}, {3}));
  EXPECT_EQ(out.dtype(), DType::kI32);
  EXPECT_EQ(out.to_vector<int32_t>(), (std::vector<int32_t>{-1, 0, 3}));
}

TEST(IndexOps, PrimitiveShapeRuleErrors) {
  Array x = zeros({2, 3, 4});
  expect_error(
      [&] {
        apply<Gather>({x, i32({0, 1, 0}, {3, 1})}, 1, 1, GatherMode::kFill);
      },
      "[gather] batch dims differ");
  expect_error(
      [&] {
        apply<Gather>({x, i32({0}, {1})}, 0, 1, GatherMode::kFill);
      },
      "[gather] needs 0 <= batch_dims <= axis < rank");
  expect_error(
      [&] {
        apply<Gather>({x, zeros({1}, DType::kI64) > 0.0}, 0, 0, GatherMode::kFill);
      },
      "[gather] indices must be i32, i64, u8 or u32");
  expect_error(
      [&] {
        apply<ScatterAdd>({x, i32({0}, {1}), zeros({2, 3})}, 0, 0);
      },
      "[scatter_add] updates must be f32[1,3,4]");
  expect_error([&] { graft::bind(std::make_shared<const Sort>(0, 2, true), {x}); },
               "[sort] num_keys=2 must be in [1, 1]");
  expect_error(
      [&] {
        graft::bind(std::make_shared<const Sort>(0, 1, true), {x, zeros({2})});
      },
      "[sort] operands must have equal shapes");
}

TEST(IndexOps, SortErrors) {
  expect_error([&] { sort(zeros({})); }, "[sort] axis -1 is out of range");
  expect_error([&] { argsort(zeros({3}), 1); }, "[argsort] axis 1 is out of range");
  expect_error([&] { sort_key_val(zeros({3}), zeros({4})); },
               "[sort_key_val] keys and values must have equal shapes");
}

TEST(IndexOps, GatherPrintsItsParams) {
  Array out = take(zeros({3, 4}), i32({0}, {1}), 1, GatherMode::kClip);
  const Primitive* p = out.primitive();
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->name(), "gather");
  EXPECT_EQ(p->params(), "axis=1 batch_dims=0 mode=clip");
}

TEST(IndexOps, OneHot) {
  // Out-of-range and negative indices give all-zero rows, like jax.nn.one_hot.
  Array h = one_hot(i32({0, 2, -1, 3, 1}, {5}), 3);
  EXPECT_EQ(h.shape(), (Shape{5, 3}));
  EXPECT_EQ(h.dtype(), DType::kF32);
  EXPECT_EQ(h.to_vector<float>(),
            (std::vector<float>{1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1, 0}));
  // axis=0 puts the classes first; dtype is honoured.
  Array t = one_hot(i32({1, 0}, {2}), 3, DType::kI32, 0);
  EXPECT_EQ(t.shape(), (Shape{3, 2}));
  EXPECT_EQ(t.dtype(), DType::kI32);
  EXPECT_EQ(t.to_vector<int32_t>(), (std::vector<int32_t>{0, 1, 1, 0, 0, 0}));
  // Middle axis of a 2-D input.
  Array m = one_hot(i32({1, 0, 1, 1}, {2, 2}), 2, DType::kBF16, 1);
  EXPECT_EQ(m.shape(), (Shape{2, 2, 2}));
  EXPECT_EQ(m.to_vector<float>(), (std::vector<float>{0, 1, 1, 0, 0, 0, 1, 1}));
  // u8 indices with more classes than u8 holds: 255 is class 255, nothing wraps.
  Array u = one_hot(array<uint8_t>({255, 0}, Shape{2}), 300, DType::kU8);
  std::vector<uint8_t> uv = u.to_vector<uint8_t>();
  ASSERT_EQ(uv.size(), 600u);
  for (int c = 0; c < 300; ++c) {
    EXPECT_EQ(uv[c], c == 255 ? 1 : 0) << c;
    EXPECT_EQ(uv[300 + c], c == 0 ? 1 : 0) << c;
  }
  // Float indices compare as floats (2.5 matches nothing); scalar input gives a vector.
  EXPECT_EQ(one_hot(f32({2.0f, 2.5f}, {2}), 3).to_vector<float>(),
            (std::vector<float>{0, 0, 1, 0, 0, 0}));
  EXPECT_EQ(one_hot(Array(1), 2).to_vector<float>(), (std::vector<float>{0, 1}));
  expect_error([&] { one_hot(zeros({2}, DType::kBool), 3); }, "[one_hot] indices must be");
  expect_error([&] { one_hot(i32({1}, {1}), -1); }, "[one_hot] num_classes must be >= 0");
  expect_error([&] { one_hot(i32({1}, {1}), 3, DType::kF32, 2); }, "[one_hot] axis 2 is out");
}

TEST(IndexOps, MultiKeySortIsLexicographicAndStable) {
  Array k1 = i32({1, 0, 1, 0, 1, 0}, {6});
  Array k2 = f32({2, 5, 1, 5, NAN, -1}, {6});
  Array v = i32({0, 1, 2, 3, 4, 5}, {6});
  auto out = graft::bind(std::make_shared<const Sort>(0, 2, true), {k1, k2, v});
  ASSERT_EQ(out.size(), 3u);
  // (0,-1)5 (0,5)1 (0,5)3 (1,1)2 (1,2)0 (1,nan)4
  EXPECT_EQ(out[2].to_vector<int32_t>(), (std::vector<int32_t>{5, 1, 3, 2, 0, 4}));
  EXPECT_EQ(out[0].to_vector<int32_t>(), (std::vector<int32_t>{0, 0, 0, 1, 1, 1}));
}

TEST(IndexOps, ArgsortMatchesSortViaTakeAlongAxis) {
  std::mt19937 gen(7);
  std::vector<float> v(6 * 50);
  for (auto& e : v) e = static_cast<float>(gen() % 13) - 6.0f;
  Array x = f32(v, {6, 50});
  Array a = argsort(x, 1);
  EXPECT_EQ(a.dtype(), DType::kI32);
  EXPECT_EQ(take_along_axis(x, a, 1).to_vector<float>(), sort(x, 1).to_vector<float>());
}

// scatter_add must be deterministic and sum each element's updates in index order,
// whichever way the kernel splits the work: the result equals a sequential f32 loop bit
// for bit.
TEST(IndexOps, ScatterAddIsDeterministicAndInIndexOrder) {
  const int64_t v = 37, d = 257, n = 3000;
  std::mt19937 gen(3);
  std::vector<int32_t> idx(n);
  for (auto& i : idx) i = static_cast<int32_t>(gen() % (v + 8)) - 4;
  std::vector<float> upd(n * d);
  std::uniform_real_distribution<float> dist(-1, 1);
  for (auto& u : upd) u = dist(gen);
  std::vector<float> want(v * d, 0.5f);
  for (int64_t i = 0; i < n; ++i) {
    int64_t k = idx[i] < 0 ? idx[i] + v : idx[i];
    if (k < 0 || k >= v) continue;
    for (int64_t j = 0; j < d; ++j) want[k * d + j] += upd[i * d + j];
  }
  for (int rep = 0; rep < 2; ++rep) {
    Array out = scatter_add(full({v, d}, 0.5), i32(idx, {n}), f32(upd, {n, d}));
    std::vector<float> got = out.to_vector<float>();
    ASSERT_EQ(got.size(), want.size());
    EXPECT_EQ(std::memcmp(got.data(), want.data(), got.size() * sizeof(float)), 0);
  }
  // Same for a 1-D target, where the kernel splits over target ranges.
  std::vector<float> w1(v, 0.0f);
  std::vector<float> u1(upd.begin(), upd.begin() + n);
  for (int64_t i = 0; i < n; ++i) {
    int64_t k = idx[i] < 0 ? idx[i] + v : idx[i];
    if (k >= 0 && k < v) w1[k] += u1[i];
  }
  std::vector<float> g1 = scatter_add(zeros({v}), i32(idx, {n}), f32(u1, {n})).to_vector<float>();
  EXPECT_EQ(std::memcmp(g1.data(), w1.data(), w1.size() * sizeof(float)), 0);
}

// The other combiners and a half-precision scatter_add against plain loops, bit for bit, on
// rows of 37 (the kernel combines a row in vector steps of 16 and a tail) split over threads:
// set keeps the last update, mul multiplies in index order, min / max let a NaN win.
TEST(IndexOps, ScatterCombinersEqualPlainLoops) {
  const int64_t v = 13, d = 37, n = 4000;
  std::mt19937 gen(5);
  std::vector<int32_t> idx(n);
  for (auto& i : idx) i = static_cast<int32_t>(gen() % v);
  std::uniform_real_distribution<float> dist(0.5f, 1.5f);
  std::vector<float> x(v * d), upd(n * d);
  for (auto& e : x) e = dist(gen);
  for (auto& u : upd) u = dist(gen);
  upd[5 * d + 3] = std::nanf("");  // row idx[5], element 3: min and max keep the NaN
  const PrimitiveId ids[] = {PrimitiveId::kScatter, PrimitiveId::kScatterMul,
                             PrimitiveId::kScatterMin, PrimitiveId::kScatterMax};
  for (PrimitiveId id : ids) {
    std::vector<float> want = x;
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = 0; j < d; ++j) {
        float& a = want[idx[i] * d + j];
        const float b = upd[i * d + j];
        if (id == PrimitiveId::kScatter) {
          a = b;
        } else if (id == PrimitiveId::kScatterMul) {
          a = a * b;
        } else if (b != b) {
          a = b;
        } else if (id == PrimitiveId::kScatterMin ? b < a : a < b) {
          a = b;
        }
      }
    }
    Array got = detail::scatter_combine(f32(x, {v, d}), i32(idx, {n}), f32(upd, {n, d}), id);
    std::vector<float> g = got.to_vector<float>();
    ASSERT_EQ(g.size(), want.size());
    EXPECT_EQ(std::memcmp(g.data(), want.data(), g.size() * sizeof(float)), 0)
        << static_cast<int>(id);
  }
  // bf16: summed in f32 in index order, rounded once.
  Array xb = astype(f32(x, {v, d}), DType::kBF16), ub = astype(f32(upd, {n, d}), DType::kBF16);
  std::vector<float> xw = astype(xb, DType::kF32).to_vector<float>();
  std::vector<float> uw = astype(ub, DType::kF32).to_vector<float>();
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < d; ++j) xw[idx[i] * d + j] += uw[i * d + j];
  }
  Array want_b = astype(f32(xw, {v, d}), DType::kBF16);
  std::vector<float> got_b =
      astype(scatter_add(xb, i32(idx, {n}), ub), DType::kF32).to_vector<float>();
  std::vector<float> want_bf = astype(want_b, DType::kF32).to_vector<float>();
  ASSERT_EQ(got_b.size(), want_bf.size());
  EXPECT_EQ(std::memcmp(got_b.data(), want_bf.data(), got_b.size() * sizeof(float)),
            0);  // the NaN too
}

// An output over 8 MiB with 32-byte-multiple rows takes the kernel's streaming-store path.
TEST(IndexOps, LargeGatherOfRows) {
  const int64_t v = 64, d = 72, n = 33000;  // rows of 288 bytes; 9.5 MB out
  std::vector<float> table(v * d);
  for (int64_t e = 0; e < v * d; ++e) table[e] = static_cast<float>(e);
  std::vector<int32_t> idx(n);
  std::mt19937 gen(5);
  for (auto& i : idx) i = static_cast<int32_t>(gen() % (v + 10)) - 5;
  std::vector<float> got = take(f32(table, {v, d}), i32(idx, {n})).to_vector<float>();
  ASSERT_EQ(got.size(), static_cast<size_t>(n * d));
  int64_t bad = 0;
  for (int64_t i = 0; i < n; ++i) {
    int64_t k = idx[i] < 0 ? idx[i] + v : idx[i];
    for (int64_t j = 0; j < d; ++j) {
      float g = got[i * d + j];
      bool ok = k >= v ? std::isnan(g) : g == table[k * d + j];
      bad += ok ? 0 : 1;
    }
  }
  EXPECT_EQ(bad, 0);
}

TEST(IndexOps, TakeKeepsWeakTypeAndDtype) {
  Array x = array<double>({1, 2, 3}, Shape{3});
  Array out = take(x, array<int64_t>({2, -3}, Shape{2}));
  EXPECT_EQ(out.dtype(), DType::kF64);
  EXPECT_EQ(out.to_vector<double>(), (std::vector<double>{3, 1}));
}

}  // namespace
}  // namespace graft
