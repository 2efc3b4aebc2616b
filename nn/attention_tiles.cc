// The tiled (flash-attention) forward and backward passes behind nn::causal_attention.
//
// Everything is written with graft ops, so it traces under jit, vmap, scan and remat like any
// other code: the loops over tiles run at trace time and unroll into a graph whose largest
// intermediate is one [B, KV, block_q * G, block_k] score tile. Key tiles past the causal
// diagonal are skipped; only tiles that straddle it are masked.
#include "nn/attention_tiles.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "core/error.h"
#include "core/ops.h"

namespace graft::nn::detail {
namespace {

struct Range {
  int64_t begin, end;
  int64_t size() const { return end - begin; }
};

std::vector<Range> tiles(int64_t n, int64_t block) {
  std::vector<Range> r;
  for (int64_t b = 0; b < n; b += block) r.push_back({b, std::min(n, b + block)});
  return r;
}

// Query t sits at position S - T + t (causality aligned to the end).
int64_t position(const AttentionGeometry& g, int64_t t) { return g.S - g.T + t; }

// Whether any query of tile qt sees any key of tile kt.
bool visible(const AttentionGeometry& g, Range qt, Range kt) {
  return kt.begin <= position(g, qt.end - 1);
}

// Whether some key of kt lies after the first query of qt (the tile straddles the diagonal).
bool needs_mask(const AttentionGeometry& g, Range qt, Range kt) {
  return kt.end - 1 > position(g, qt.begin);
}

// [rows, keys] bool: row r of the tile (query qt.begin + r / G) sees key kt.begin + c.
Array tile_mask(const AttentionGeometry& g, Range qt, Range kt) {
  Shape shape{qt.size() * g.G, kt.size()};
  Array row = iota(DType::kI32, shape, 0), col = iota(DType::kI32, shape, 1);
  Array query_pos = floor_divide(row, Array(g.G)) + Array(position(g, qt.begin));
  return less_equal(col + Array(kt.begin), query_pos);
}

Array masked(const AttentionGeometry& g, Range qt, Range kt, const Array& s) {
  if (!needs_mask(g, qt, kt)) return s;
  return where(tile_mask(g, qt, kt), s, Array(-std::numeric_limits<double>::infinity()));
}

// The tile GEMMs, batched over [B, KV]. a [.., M, D] x b [.., N, D] -> [.., M, N].
Array dot_nt(const Array& a, const Array& b) {
  return dot_general(a, b, {{3}, {3}, {0, 1}, {0, 1}});
}
// a [.., M, N] x b [.., N, D] -> [.., M, D].
Array dot_nn(const Array& a, const Array& b) {
  return dot_general(a, b, {{3}, {2}, {0, 1}, {0, 1}});
}
// a [.., M, N] x b [.., M, D] -> [.., N, D] (a transposed).
Array dot_tn(const Array& a, const Array& b) {
  return dot_general(a, b, {{2}, {2}, {0, 1}, {0, 1}});
}

Array query_tile(const AttentionGeometry& g, const Array& rows, Range qt) {
  return slice_axis(rows, 2, qt.begin * g.G, qt.end * g.G);
}

Array join(const std::vector<Array>& parts) {
  return parts.size() == 1 ? parts[0] : concatenate(parts, 2);
}

Array accumulate(const Array& acc, const Array& x) { return acc.valid() ? acc + x : x; }

}  // namespace

AttentionGeometry attention_geometry(const char* op, const Array& q, const Array& k, const Array& v,
                                     const AttentionOptions& options) {
  if (q.ndim() != 4 || k.ndim() != 4 || v.ndim() != 4) {
    fail(op, "q, k, v must be [batch, seq, heads, head_dim], got ", shape_str(q.shape()), ", ",
         shape_str(k.shape()), ", ", shape_str(v.shape()));
  }
  if (k.shape() != v.shape())
    fail(op, "k and v shapes differ: ", shape_str(k.shape()), " vs ", shape_str(v.shape()));
  if (q.shape()[0] != k.shape()[0] || q.shape()[3] != k.shape()[3]) {
    fail(op, "batch or head_dim differ: q ", shape_str(q.shape()), " vs k ", shape_str(k.shape()));
  }
  if (k.shape()[2] == 0 || q.shape()[2] % k.shape()[2] != 0) {
    fail(op, "heads (", q.shape()[2], ") must be a multiple of kv heads (", k.shape()[2], ")");
  }
  if (q.shape()[1] > k.shape()[1]) {
    fail(op, "more queries (", q.shape()[1], ") than keys (", k.shape()[1], ")");
  }
  if (options.block_q < 1 || options.block_k < 1) {
    fail(op, "block sizes must be positive, got block_q ", options.block_q, ", block_k ",
         options.block_k);
  }
  for (const Array* x : {&q, &k, &v}) {
    if (!is_floating(x->dtype()))
      fail(op, "q, k, v must be floating, got ", dtype_name(x->dtype()));
  }
  AttentionGeometry g;
  g.B = q.shape()[0];
  g.T = q.shape()[1];
  g.H = q.shape()[2];
  g.D = q.shape()[3];
  g.S = k.shape()[1];
  g.KV = k.shape()[2];
  g.G = g.H / g.KV;
  g.scale = options.scale != 0 ? options.scale : 1.0 / std::sqrt(double(g.D));
  g.block_q = options.block_q;
  g.block_k = options.block_k;
  bool f64 = q.dtype() == DType::kF64 || k.dtype() == DType::kF64 || v.dtype() == DType::kF64;
  g.compute = f64 ? DType::kF64 : DType::kF32;
  return g;
}

Array to_rows(const Array& x, const AttentionGeometry& g) {
  Array r = reshape(astype(x, g.compute), {g.B, g.T, g.KV, g.G, g.D});
  return reshape(transpose(r, std::vector<int>{0, 2, 1, 3, 4}), {g.B, g.KV, g.T * g.G, g.D});
}

Array from_rows(const Array& x, const AttentionGeometry& g) {
  Array r = transpose(reshape(x, {g.B, g.KV, g.T, g.G, g.D}), std::vector<int>{0, 2, 1, 3, 4});
  return reshape(r, {g.B, g.T, g.H, g.D});
}

Array kv_to_heads(const Array& x, const AttentionGeometry& g) {
  return transpose(astype(x, g.compute), std::vector<int>{0, 2, 1, 3});
}

Array kv_from_heads(const Array& x, const AttentionGeometry&) {
  return transpose(x, std::vector<int>{0, 2, 1, 3});
}

// Online softmax per query tile: running row max m, denominator l and unnormalized output
// acc, rescaled by exp(m_old - m_new) whenever a key tile raises the max. Key tile 0 holds
// key 0, which every query sees, so m is finite from the first tile on.
FlashForward flash_forward(const Array& q, const Array& k, const Array& v,
                           const AttentionGeometry& g) {
  const Array qs = q * g.scale;
  const std::vector<Range> qtiles = tiles(g.T, g.block_q), ktiles = tiles(g.S, g.block_k);
  std::vector<Array> ks, vs;
  for (Range kt : ktiles) {
    ks.push_back(slice_axis(k, 2, kt.begin, kt.end));
    vs.push_back(slice_axis(v, 2, kt.begin, kt.end));
  }
  std::vector<Array> os, lses;
  for (Range qt : qtiles) {
    Array qi = query_tile(g, qs, qt), m, l, acc;
    for (size_t j = 0; j < ktiles.size() && visible(g, qt, ktiles[j]); ++j) {
      Array s = masked(g, qt, ktiles[j], dot_nt(qi, ks[j]));
      Array m_new = max(s, {-1}, true);
      if (j > 0) m_new = maximum(m, m_new);
      Array p = exp(s - m_new), row_sum = sum(p, {-1}, true), pv = dot_nn(p, vs[j]);
      if (j == 0) {
        l = row_sum;
        acc = pv;
      } else {
        Array alpha = exp(m - m_new);
        l = l * alpha + row_sum;
        acc = acc * alpha + pv;
      }
      m = m_new;
    }
    os.push_back(acc / l);
    lses.push_back(m + log(l));
  }
  return {join(os), join(lses)};
}

// For each (key tile, query tile) pair on or below the diagonal: p = exp(s - lse) is the
// forward's probability tile, dv += p^T do, ds = p * (do v^T - rowsum(do * o)), dq += ds k,
// dk += ds^T q. dk and dv contract over the tile's rows, which include all G query heads of
// a kv head: that is the GQA sum.
FlashGrads flash_backward(const Array& q, const Array& k, const Array& v, const Array& o,
                          const Array& lse, const Array& do_, const AttentionGeometry& g) {
  const Array qs = q * g.scale;
  const Array delta = sum(do_ * o, {-1}, true);
  const std::vector<Range> qtiles = tiles(g.T, g.block_q), ktiles = tiles(g.S, g.block_k);
  std::vector<Array> qi, doi, lsei, deltai, dq(qtiles.size());
  for (Range qt : qtiles) {
    qi.push_back(query_tile(g, qs, qt));
    doi.push_back(query_tile(g, do_, qt));
    lsei.push_back(query_tile(g, lse, qt));
    deltai.push_back(query_tile(g, delta, qt));
  }
  std::vector<Array> dk, dv;
  for (Range kt : ktiles) {
    Array kj = slice_axis(k, 2, kt.begin, kt.end), vj = slice_axis(v, 2, kt.begin, kt.end);
    Array dkj, dvj;
    for (size_t i = 0; i < qtiles.size(); ++i) {
      if (!visible(g, qtiles[i], kt)) continue;
      Array p = exp(masked(g, qtiles[i], kt, dot_nt(qi[i], kj)) - lsei[i]);
      dvj = accumulate(dvj, dot_tn(p, doi[i]));
      Array ds = p * (dot_nt(doi[i], vj) - deltai[i]);
      dq[i] = accumulate(dq[i], dot_nn(ds, kj));
      dkj = accumulate(dkj, dot_tn(ds, qi[i]));
    }
    dk.push_back(dkj);  // the last query tile sees every key: never empty
    dv.push_back(dvj);
  }
  return {join(dq) * g.scale, join(dk), join(dv)};
}

}  // namespace graft::nn::detail
