// CPU kernel of sort (index family). Each row along the axis is sorted on its own: keys
// become order-preserving uint64 words (floats as lax.sort orders them: -0 == +0, every NaN
// last and equal to the others), a row
// permutation is sorted by (keys..., position), which makes it stable, and every operand is
// permuted by it.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <vector>

#include "core/backend/cpu/kernel.h"
#include "core/backend/cpu/parallel.h"
#include "core/primitives/index.h"

namespace graft::cpu {
namespace {

// Order-preserving maps to uint64: x < y (in sort order) iff ord(x) < ord(y). Types of up to
// 32 bits map into [0, 2^32), so a word and a position pack into one uint64.
inline uint64_t ord_float(float f) {
  if (std::isnan(f)) return 0xffffffffu;
  if (f == 0.0f) f = 0.0f;  // -0 and +0 tie (the position keeps their order), as in JAX
  uint32_t u = float_bits(f);
  return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
}
inline uint64_t ord_double(double d) {
  if (std::isnan(d)) return ~uint64_t{0};
  if (d == 0.0) d = 0.0;
  uint64_t u;
  std::memcpy(&u, &d, 8);
  return (u >> 63) ? ~u : (u | (uint64_t{1} << 63));
}

template <typename T>
inline uint64_t ord(T v) {
  if constexpr (std::is_same_v<T, double>) {
    return ord_double(v);
  } else if constexpr (std::is_same_v<T, float> || std::is_same_v<T, f16> ||
                       std::is_same_v<T, bf16>) {
    return ord_float(static_cast<float>(v));
  } else if constexpr (std::is_integral_v<T> && std::is_signed_v<T>) {
    using U = std::make_unsigned_t<T>;  // flipping the sign bit orders two's complement
    return static_cast<U>(static_cast<U>(v) ^ (U{1} << (8 * sizeof(T) - 1)));
  } else {
    return static_cast<uint64_t>(v);
  }
}

struct RowLayout {
  int64_t n = 1, inner = 1;  // axis length, and the stride of the axis in elements
};

// Writes the sort words of row `row` of a key operand to keys[0..n).
void row_keys(DType dtype, const void* data, const RowLayout& l, int64_t row, uint64_t* keys) {
  const int64_t base = (row / l.inner) * l.n * l.inner + row % l.inner;
  dispatch_dtype(dtype, [&]<typename T>() {
    const T* p = static_cast<const T*>(data) + base;
    for (int64_t j = 0; j < l.n; ++j) keys[j] = ord(p[j * l.inner]);
  });
}

// out row = in row permuted by perm, for any element width.
void permute_row(int64_t width, const void* in, void* out, const RowLayout& l, int64_t row,
                 const uint32_t* perm) {
  const int64_t base = (row / l.inner) * l.n * l.inner + row % l.inner;
  auto go = [&]<typename W>() {
    const W* src = static_cast<const W*>(in) + base;
    W* dst = static_cast<W*>(out) + base;
    for (int64_t j = 0; j < l.n; ++j) dst[j * l.inner] = src[perm[j] * l.inner];
  };
  switch (width) {
    case 1:
      return go.template operator()<uint8_t>();
    case 2:
      return go.template operator()<uint16_t>();
    case 4:
      return go.template operator()<uint32_t>();
    default:
      return go.template operator()<uint64_t>();
  }
}

}  // namespace

void sort_kernel(Call& call) {
  const auto& s = call.params<Sort>();
  const Shape& shape = call.in_aval(0).shape;
  RowLayout l;
  l.n = shape[s.axis()];
  for (size_t d = s.axis() + 1; d < shape.size(); ++d) l.inner *= shape[d];
  const int64_t total = numel(shape);
  if (total == 0) return;
  if (l.n > int64_t{0xffffffff}) fail("sort", "axis of length ", l.n, " is too long");
  const int64_t rows = total / l.n;
  const int ops = call.num_inputs();
  const int keys = s.num_keys();
  std::vector<void*> outs(ops);
  for (int o = 0; o < ops; ++o) outs[o] = call.out_raw(o);

  const bool narrow = dtype_size(call.in_aval(0).dtype) <= 4;
  parallel_for(rows, std::max<int64_t>(1, 16384 / l.n), [&](int64_t r0, int64_t r1) {
    std::vector<uint64_t> words(static_cast<size_t>(l.n * keys));
    std::vector<std::pair<uint64_t, uint32_t>> pairs;
    std::vector<uint64_t> packed;
    std::vector<uint32_t> perm(static_cast<size_t>(l.n));
    for (int64_t row = r0; row < r1; ++row) {
      for (int k = 0; k < keys; ++k) {
        row_keys(call.in_aval(k).dtype, call.in_raw(k), l, row, words.data() + k * l.n);
      }
      if (keys == 1 && narrow) {
        // (word << 32 | position): the position breaks ties, so std::sort is stable here.
        packed.resize(l.n);
        for (int64_t j = 0; j < l.n; ++j) packed[j] = words[j] << 32 | static_cast<uint64_t>(j);
        std::sort(packed.begin(), packed.end());
        for (int64_t j = 0; j < l.n; ++j) perm[j] = static_cast<uint32_t>(packed[j]);
      } else if (keys == 1) {
        pairs.resize(l.n);
        for (int64_t j = 0; j < l.n; ++j) pairs[j] = {words[j], static_cast<uint32_t>(j)};
        std::sort(pairs.begin(), pairs.end());
        for (int64_t j = 0; j < l.n; ++j) perm[j] = pairs[j].second;
      } else {
        std::iota(perm.begin(), perm.end(), 0u);
        const uint64_t* w = words.data();
        const int64_t n = l.n;
        std::sort(perm.begin(), perm.end(), [&](uint32_t a, uint32_t b) {
          for (int k = 0; k < keys; ++k) {
            uint64_t x = w[k * n + a], y = w[k * n + b];
            if (x != y) return x < y;
          }
          return a < b;
        });
      }
      for (int o = 0; o < ops; ++o) {
        permute_row(dtype_size(call.in_aval(o).dtype), call.in_raw(o), outs[o], l, row,
                    perm.data());
      }
    }
  });
}

}  // namespace graft::cpu
