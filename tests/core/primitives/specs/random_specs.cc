// Spec of the random family: threefry2x32. The reference is a plain Threefry-2x32 loop
// (20 rounds, Random123's rotation constants), checked first against the known-answer
// vectors of the Threefry paper / Random123 (kat_vectors: threefry2x32_20).
#include <array>
#include <cstdint>

#include "core/random/random.h"
#include "tests/core/primitives/specs/spec.h"

namespace graft::spec {
namespace {

std::array<uint32_t, 2> threefry_ref(uint32_t k0, uint32_t k1, uint32_t x0, uint32_t x1) {
  static constexpr int kRot[8] = {13, 15, 26, 6, 17, 29, 16, 24};
  const uint32_t ks[3] = {k0, k1, k0 ^ k1 ^ 0x1BD11BDAu};
  x0 += ks[0];
  x1 += ks[1];
  for (int r = 0; r < 20; ++r) {
    x0 += x1;
    int s = kRot[r % 8];
    x1 = (x1 << s) | (x1 >> (32 - s));
    x1 ^= x0;
    if (r % 4 == 3) {  // key injection after every 4 rounds
      int i = r / 4 + 1;
      x0 += ks[i % 3];
      x1 += ks[(i + 1) % 3] + static_cast<uint32_t>(i);
    }
  }
  return {x0, x1};
}

Array u32s(const std::vector<uint32_t>& v, const Shape& shape) { return array<uint32_t>(v, shape); }

std::vector<uint32_t> u32_values(int64_t n, uint32_t seed) {
  std::mt19937 gen(seed);
  std::vector<uint32_t> v(n);
  for (auto& x : v) x = gen();
  return v;
}

// Expected stack({y1, y2}, -1) for keys (k1, k2: one value, or one per element) and
// counters (x1, x2) in row-major order of `shape`.
Expected ref_stacked(const std::vector<uint32_t>& k1, const std::vector<uint32_t>& k2,
                     const std::vector<uint32_t>& x1, const std::vector<uint32_t>& x2,
                     Shape shape) {
  Expected e{shape, DType::kU32, {}};
  e.shape.push_back(2);
  for (size_t i = 0; i < x1.size(); ++i) {
    auto y = threefry_ref(k1[k1.size() == 1 ? 0 : i], k2[k2.size() == 1 ? 0 : i], x1[i], x2[i]);
    e.values.push_back(y[0]);
    e.values.push_back(y[1]);
  }
  return e;
}

Array stacked(const Array& k1, const Array& k2, const Array& x1, const Array& x2) {
  auto [y1, y2] = random::threefry2x32(k1, k2, x1, x2);
  return stack({y1, y2}, -1);
}

}  // namespace

GRAFT_SPEC(Threefry2x32) {
  Spec s{PrimitiveId::kThreefry2x32};
  // The reference loop must reproduce the published known answers before it is trusted.
  const std::vector<std::array<uint32_t, 6>> kat = {
      {0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x6b200159, 0x99ba4efe},
      {0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0x1cb996fc, 0xbb002be7},
      {0x13198a2e, 0x03707344, 0x243f6a88, 0x85a308d3, 0xc4923a9c, 0x483df7a0}};
  std::vector<uint32_t> k1, k2, x1, x2;
  Expected kat_expected{{3, 2}, DType::kU32, {}};
  for (const auto& v : kat) {
    auto y = threefry_ref(v[0], v[1], v[2], v[3]);
    if (y[0] != v[4] || y[1] != v[5]) fail("threefry2x32 spec", "reference loop fails a KAT");
    k1.push_back(v[0]), k2.push_back(v[1]), x1.push_back(v[2]), x2.push_back(v[3]);
    kat_expected.values.push_back(v[4]);
    kat_expected.values.push_back(v[5]);
  }
  auto fn = [](const std::vector<Array>& in) { return stacked(in[0], in[1], in[2], in[3]); };
  s.cases.push_back({"known answers (per-element keys)",
                     {u32s(k1, {3}), u32s(k2, {3}), u32s(x1, {3}), u32s(x2, {3})},
                     fn,
                     kat_expected});

  // Rank 0: everything scalar.
  s.cases.push_back({"scalars",
                     {u32s({7}, {}), u32s({42}, {}), u32s({1}, {}), u32s({0xdeadbeef}, {})},
                     fn,
                     ref_stacked({7}, {42}, {1}, {0xdeadbeef}, {})});

  // Scalar keys broadcast over rank-2 and rank-3 counters.
  for (Shape shape : {Shape{3, 4}, Shape{2, 3, 5}}) {
    int64_t n = numel(shape);
    auto a = u32_values(n, 11 + n), b = u32_values(n, 12 + n);
    s.cases.push_back(
        {"scalar keys " + shape_str(shape),
         {u32s({0x01234567}, {}), u32s({0x89abcdef}, {}), u32s(a, shape), u32s(b, shape)},
         fn,
         ref_stacked({0x01234567}, {0x89abcdef}, a, b, shape)});
  }

  // Per-element keys, and one scalar / one per-element key word.
  {
    Shape shape{4, 5};
    auto a = u32_values(20, 1), b = u32_values(20, 2), c = u32_values(20, 3), d = u32_values(20, 4);
    s.cases.push_back({"per-element keys",
                       {u32s(a, shape), u32s(b, shape), u32s(c, shape), u32s(d, shape)},
                       fn,
                       ref_stacked(a, b, c, d, shape)});
    s.cases.push_back({"mixed keys",
                       {u32s({5}, {}), u32s(b, shape), u32s(c, shape), u32s(d, shape)},
                       fn,
                       ref_stacked({5}, b, c, d, shape)});
  }

  // Empty counters.
  for (Shape shape : {Shape{0}, Shape{2, 0}}) {
    s.cases.push_back({"empty " + shape_str(shape),
                       {u32s({1}, {}), u32s({2}, {}), u32s({}, shape), u32s({}, shape)},
                       fn,
                       ref_stacked({1}, {2}, {}, {}, shape)});
  }

  // Non-contiguous counters: the transpose of a (4, 3) array, built inside fn; and a
  // large draw that spans several parallel chunks.
  {
    auto a = u32_values(12, 21), b = u32_values(12, 22);
    std::vector<uint32_t> at, bt;
    for (int j = 0; j < 3; ++j) {
      for (int i = 0; i < 4; ++i) {
        at.push_back(a[i * 3 + j]);
        bt.push_back(b[i * 3 + j]);
      }
    }
    s.cases.push_back({"transposed counters",
                       {u32s({9}, {}), u32s({10}, {}), u32s(a, {4, 3}), u32s(b, {4, 3})},
                       [](const std::vector<Array>& in) {
                         return stacked(in[0], in[1], transpose(in[2]), transpose(in[3]));
                       },
                       ref_stacked({9}, {10}, at, bt, {3, 4})});
    int64_t n = 100003;
    auto c = u32_values(n, 31), d = u32_values(n, 32);
    s.cases.push_back({"large",
                       {u32s({3}, {}), u32s({4}, {}), u32s(c, {n}), u32s(d, {n})},
                       fn,
                       ref_stacked({3}, {4}, c, d, {n})});
  }
  return s;
}

}  // namespace graft::spec
