#include "core/backend/cpu/strided_copy.h"

#include <algorithm>
#include <cstring>

#include "core/backend/cpu/parallel.h"

namespace graft::cpu {
namespace {

struct Dim {
  int64_t n, s, d;  // size, source stride, destination stride (elements)
};

constexpr int64_t kTile = 32;        // transpose tile edge: two 32x32 tiles fit in L1
constexpr int64_t kPiece = 1 << 15;  // longest row piece one work item copies
constexpr int64_t kGrain = 1 << 15;  // elements per parallel chunk, at least

// Calls item(src_off, dst_off, last_counter) for every position of `outer` (row-major), on
// the thread pool in chunks of about kGrain elements (`per_item` elements per call).
template <typename Item>
void for_each_outer(const std::vector<Dim>& outer, int64_t per_item, const Item& item) {
  int64_t total = 1;
  for (const Dim& o : outer) total *= o.n;
  int64_t grain = std::max<int64_t>(1, kGrain / std::max<int64_t>(1, per_item));
  int r = static_cast<int>(outer.size());
  parallel_for(total, grain, [&](int64_t b, int64_t e) {
    std::vector<int64_t> c(r);
    int64_t so = 0, dof = 0, rest = b;
    for (int t = r - 1; t >= 0; --t) {
      c[t] = rest % outer[t].n;
      rest /= outer[t].n;
      so += c[t] * outer[t].s;
      dof += c[t] * outer[t].d;
    }
    for (int64_t i = b; i < e; ++i) {
      item(so, dof, r ? c[r - 1] : 0);
      for (int t = r - 1; t >= 0; --t) {
        so += outer[t].s;
        dof += outer[t].d;
        if (++c[t] < outer[t].n) break;
        so -= outer[t].s * outer[t].n;
        dof -= outer[t].d * outer[t].n;
        c[t] = 0;
      }
    }
  });
}

template <typename U>
void copy_dims(const std::vector<Dim>& dims, const U* src, U* dst) {
  if (dims.empty()) {
    *dst = *src;
    return;
  }
  int k = static_cast<int>(dims.size()) - 1;
  const Dim in = dims[k];

  // Transpose-like: the destination's unit-stride dim is not the source's. Copy tiles of
  // kTile rows of source dim j (unit stride) by kTile columns of k, so both sides stay in L1.
  int j = -1;
  if (in.d == 1 && in.s != 1 && in.s != 0) {
    for (int t = k - 1; t >= 0; --t) {
      if (dims[t].s == 1) {
        j = t;
        break;
      }
    }
  }
  if (j >= 0) {
    const Dim dj = dims[j];
    std::vector<Dim> outer;
    for (int t = 0; t < k; ++t) {
      if (t != j) outer.push_back(dims[t]);
    }
    outer.push_back({(dj.n + kTile - 1) / kTile, dj.s * kTile, dj.d * kTile});
    for_each_outer(outer, kTile * in.n, [&](int64_t so, int64_t dof, int64_t jb) {
      const U* s = src + so;
      U* d = dst + dof;
      int64_t rows = std::min(kTile, dj.n - jb * kTile);
      for (int64_t kb = 0; kb < in.n; kb += kTile) {
        int64_t cols = std::min(kTile, in.n - kb);
        for (int64_t jj = 0; jj < rows; ++jj) {
          U* drow = d + jj * dj.d + kb;
          const U* scol = s + jj + kb * in.s;
          for (int64_t kk = 0; kk < cols; ++kk) drow[kk] = scol[kk * in.s];
        }
      }
    });
    return;
  }

  // Rows along the innermost dim, split into pieces so long rows still use all threads.
  std::vector<Dim> outer(dims.begin(), dims.begin() + k);
  int64_t piece = in.n;
  if (in.n > kPiece) {
    piece = kPiece;
    outer.push_back({(in.n + kPiece - 1) / kPiece, in.s * kPiece, in.d * kPiece});
  }
  const bool split = piece != in.n;
  for_each_outer(outer, piece, [&](int64_t so, int64_t dof, int64_t p) {
    const U* s = src + so;
    U* d = dst + dof;
    int64_t len = split ? std::min(piece, in.n - p * piece) : in.n;
    if (in.s == 1 && in.d == 1) {
      std::memcpy(d, s, static_cast<size_t>(len) * sizeof(U));
    } else if (in.s == 0) {
      const U v = *s;
      if (in.d == 1) {
        std::fill(d, d + len, v);
      } else {
        for (int64_t i = 0; i < len; ++i) d[i * in.d] = v;
      }
    } else if (in.d == 1) {
      for (int64_t i = 0; i < len; ++i) d[i] = s[i * in.s];
    } else {
      for (int64_t i = 0; i < len; ++i) d[i * in.d] = s[i * in.s];
    }
  });
}

template <typename U>
void fill_typed(U* dst, int64_t n, U v) {
  parallel_for(n, kGrain, [&](int64_t b, int64_t e) { std::fill(dst + b, dst + e, v); });
}

}  // namespace

void strided_copy(int64_t esize, const Shape& dims, const void* src,
                  const std::vector<int64_t>& src_strides, void* dst,
                  const std::vector<int64_t>& dst_strides) {
  // Drop size-1 dims, then merge neighbours that are contiguous in both layouts.
  std::vector<Dim> merged;
  for (size_t t = 0; t < dims.size(); ++t) {
    if (dims[t] == 0) return;
    if (dims[t] == 1) continue;
    Dim cur{dims[t], src_strides[t], dst_strides[t]};
    if (!merged.empty() && merged.back().s == cur.s * cur.n && merged.back().d == cur.d * cur.n) {
      merged.back() = {merged.back().n * cur.n, cur.s, cur.d};
    } else {
      merged.push_back(cur);
    }
  }
  switch (esize) {
    case 1:
      copy_dims(merged, static_cast<const uint8_t*>(src), static_cast<uint8_t*>(dst));
      break;
    case 2:
      copy_dims(merged, static_cast<const uint16_t*>(src), static_cast<uint16_t*>(dst));
      break;
    case 4:
      copy_dims(merged, static_cast<const uint32_t*>(src), static_cast<uint32_t*>(dst));
      break;
    default:
      copy_dims(merged, static_cast<const uint64_t*>(src), static_cast<uint64_t*>(dst));
      break;
  }
}

void fill(int64_t esize, void* dst, int64_t n, const void* value) {
  switch (esize) {
    case 1:
      fill_typed(static_cast<uint8_t*>(dst), n, *static_cast<const uint8_t*>(value));
      break;
    case 2:
      fill_typed(static_cast<uint16_t*>(dst), n, *static_cast<const uint16_t*>(value));
      break;
    case 4:
      fill_typed(static_cast<uint32_t*>(dst), n, *static_cast<const uint32_t*>(value));
      break;
    default:
      fill_typed(static_cast<uint64_t*>(dst), n, *static_cast<const uint64_t*>(value));
      break;
  }
}

}  // namespace graft::cpu
