// flash_attention_grad's kernels (flash_attention.h): delta, then dk / dv per key tile and dq
// per query tile, each recomputing the probabilities from lse.
#include "core/backend/cuda/attention/flash_common.cuh"

namespace graft::cuda::attention {
namespace {

// delta[row] = rowsum(do * o) - dlse[row], one warp per (b, t, h) row.
template <typename T, typename A>
__global__ void __launch_bounds__(kThreads)
    delta_kernel(Geo g, const T* o, const T* d_o, const A* d_lse, A* delta) {
  const int64_t row = static_cast<int64_t>(blockIdx.x) * kWarps + threadIdx.x / 32;
  if (row >= g.B * g.T * g.H) return;
  A acc = 0;
  for (int64_t d = threadIdx.x % 32; d < g.D; d += 32) {
    acc += load<A>(d_o + row * g.D + d) * load<A>(o + row * g.D + d);
  }
  acc = warp_sum(acc);
  if (threadIdx.x % 32 == 0) delta[row] = acc - load<A>(d_lse + row);
}

// p and ds of rows [0, rows) x keys [0, bk) of a tile pair (0 outside the causal band).
template <typename A>
__device__ void probabilities(const Geo& g, const A* qs, const A* dos, const A* ks, const A* vs,
                              const A* lse_s, const A* delta_s, int rows, int ns, int64_t t0,
                              int64_t s0, A* ps, A* dss) {
  const int64_t offset = g.S - g.T;
  const int D = static_cast<int>(g.D);
  for (int i = threadIdx.x; i < rows * g.bk; i += kThreads) {
    const int r = i / g.bk, c = i - r * g.bk;
    A p = 0, ds = 0;
    if (c < ns && s0 + c <= offset + t0 + r) {
      p = exp_acc(dot(qs + r * g.dp, ks + c * g.dp, D) - lse_s[r]);
      ds = p * (dot(dos + r * g.dp, vs + c * g.dp, D) - delta_s[r]);
    }
    if (ps != nullptr) ps[i] = p;
    dss[i] = ds;
  }
}

template <typename T, typename A>
__device__ void load_rows(const Geo& g, const A* lse, const A* delta, int64_t b, int64_t t0,
                          int64_t h, int rows, A* lse_s, A* delta_s) {
  for (int r = threadIdx.x; r < rows; r += kThreads) {
    const int64_t at = (b * g.T + t0 + r) * g.H + h;
    lse_s[r] = load<A>(lse + at);
    delta_s[r] = delta[at];
  }
}

// One (key tile, kv head, batch): dk, dv over the G query heads and the query tiles that see
// the tile.
template <typename T, typename A>
__global__ void __launch_bounds__(kThreads)
    backward_kv_kernel(Geo g, const T* q, const T* k, const T* v, const A* lse, const T* d_o,
                       const A* delta, T* dk, T* dv) {
  extern __shared__ unsigned char smem_raw[];
  A* ks = reinterpret_cast<A*>(smem_raw);
  A* vs = ks + g.bk * g.dp;
  A* dks = vs + g.bk * g.dp;
  A* dvs = dks + g.bk * g.dp;
  A* qs = dvs + g.bk * g.dp;
  A* dos = qs + g.bq * g.dp;
  A* ps = dos + g.bq * g.dp;
  A* dss = ps + g.bq * g.bk;
  A* lse_s = dss + g.bq * g.bk;
  A* delta_s = lse_s + g.bq;

  const int64_t tiles = (g.S + g.bk - 1) / g.bk;
  const int64_t blk = blockIdx.x;
  const int64_t s0 = (blk % tiles) * g.bk, j = (blk / tiles) % g.KV, b = blk / tiles / g.KV;
  const int ns = static_cast<int>(imin(g.bk, g.S - s0));
  const int D = static_cast<int>(g.D);
  const int64_t q_row = g.H * g.D, k_row = g.KV * g.D;

  load_tile<T, A>(ks, k + ((b * g.S + s0) * g.KV + j) * g.D, k_row, ns, g, A(1));
  load_tile<T, A>(vs, v + ((b * g.S + s0) * g.KV + j) * g.D, k_row, ns, g, A(1));
  for (int i = threadIdx.x; i < ns * D; i += kThreads) {
    dks[(i / D) * g.dp + i % D] = 0;
    dvs[(i / D) * g.dp + i % D] = 0;
  }
  const int64_t first_t = imax(0, s0 - (g.S - g.T));  // the first query seeing s0
  for (int64_t gi = 0; gi < g.G; ++gi) {
    const int64_t h = j * g.G + gi;
    for (int64_t t0 = first_t; t0 < g.T; t0 += g.bq) {
      const int rows = static_cast<int>(imin(g.bq, g.T - t0));
      __syncthreads();
      load_tile<T, A>(qs, q + ((b * g.T + t0) * g.H + h) * g.D, q_row, rows, g,
                      static_cast<A>(g.scale));
      load_tile<T, A>(dos, d_o + ((b * g.T + t0) * g.H + h) * g.D, q_row, rows, g, A(1));
      load_rows<T, A>(g, lse, delta, b, t0, h, rows, lse_s, delta_s);
      __syncthreads();
      probabilities(g, qs, dos, ks, vs, lse_s, delta_s, rows, ns, t0, s0, ps, dss);
      __syncthreads();
      for (int i = threadIdx.x; i < ns * D; i += kThreads) {
        const int c = i / D, d = i - c * D;
        A acc_v = 0, acc_k = 0;
        for (int r = 0; r < rows; ++r) {
          acc_v += ps[r * g.bk + c] * dos[r * g.dp + d];
          acc_k += dss[r * g.bk + c] * qs[r * g.dp + d];
        }
        dvs[c * g.dp + d] += acc_v;
        dks[c * g.dp + d] += acc_k;
      }
    }
  }
  __syncthreads();
  for (int i = threadIdx.x; i < ns * D; i += kThreads) {
    const int c = i / D, d = i - c * D;
    const int64_t at = ((b * g.S + s0 + c) * g.KV + j) * g.D + d;
    store(dk + at, dks[c * g.dp + d]);
    store(dv + at, dvs[c * g.dp + d]);
  }
}

// One (query tile, head, batch): dq over the visible key tiles.
template <typename T, typename A>
__global__ void __launch_bounds__(kThreads)
    backward_q_kernel(Geo g, const T* q, const T* k, const T* v, const A* lse, const T* d_o,
                      const A* delta, T* dq) {
  extern __shared__ unsigned char smem_raw[];
  A* qs = reinterpret_cast<A*>(smem_raw);
  A* dos = qs + g.bq * g.dp;
  A* dqs = dos + g.bq * g.dp;
  A* ks = dqs + g.bq * g.dp;
  A* vs = ks + g.bk * g.dp;
  A* dss = vs + g.bk * g.dp;
  A* lse_s = dss + g.bq * g.bk;
  A* delta_s = lse_s + g.bq;

  const int64_t tiles = (g.T + g.bq - 1) / g.bq;
  const int64_t blk = blockIdx.x;
  const int64_t t0 = (blk % tiles) * g.bq, h = (blk / tiles) % g.H, b = blk / tiles / g.H;
  const int64_t j = h / g.G;
  const int rows = static_cast<int>(imin(g.bq, g.T - t0));
  const int D = static_cast<int>(g.D);
  const int64_t q_row = g.H * g.D, k_row = g.KV * g.D;

  load_tile<T, A>(qs, q + ((b * g.T + t0) * g.H + h) * g.D, q_row, rows, g,
                  static_cast<A>(g.scale));
  load_tile<T, A>(dos, d_o + ((b * g.T + t0) * g.H + h) * g.D, q_row, rows, g, A(1));
  load_rows<T, A>(g, lse, delta, b, t0, h, rows, lse_s, delta_s);
  for (int i = threadIdx.x; i < rows * D; i += kThreads) dqs[(i / D) * g.dp + i % D] = 0;
  const int64_t last = g.S - g.T + t0 + rows - 1;
  for (int64_t s0 = 0; s0 <= last; s0 += g.bk) {
    const int ns = static_cast<int>(imin(g.bk, g.S - s0));
    __syncthreads();
    load_tile<T, A>(ks, k + ((b * g.S + s0) * g.KV + j) * g.D, k_row, ns, g, A(1));
    load_tile<T, A>(vs, v + ((b * g.S + s0) * g.KV + j) * g.D, k_row, ns, g, A(1));
    __syncthreads();
    probabilities<A>(g, qs, dos, ks, vs, lse_s, delta_s, rows, ns, t0, s0, nullptr, dss);
    __syncthreads();
    for (int i = threadIdx.x; i < rows * D; i += kThreads) {
      const int r = i / D, d = i - r * D;
      A acc = 0;
      for (int c = 0; c < ns; ++c) acc += dss[r * g.bk + c] * ks[c * g.dp + d];
      dqs[r * g.dp + d] += acc;
    }
  }
  __syncthreads();
  const A scale = static_cast<A>(g.scale);
  for (int i = threadIdx.x; i < rows * D; i += kThreads) {
    const int r = i / D, d = i - r * D;
    store(dq + ((b * g.T + t0 + r) * g.H + h) * g.D + d, dqs[r * g.dp + d] * scale);
  }
}

template <typename T, typename A>
cudaError_t backward(const FlashGeometry& f, const FlashTiles& tkv, const FlashTiles& tq,
                     const FlashGradPointers& p, cudaStream_t stream) {
  const T *q = static_cast<const T*>(p.q), *k = static_cast<const T*>(p.k),
          *v = static_cast<const T*>(p.v), *o = static_cast<const T*>(p.o),
          *d_o = static_cast<const T*>(p.d_o);
  // lse and dlse are in the accumulation type (f32 for half-precision operands).
  const A *lse = static_cast<const A*>(p.lse), *d_lse = static_cast<const A*>(p.d_lse);
  A* delta = static_cast<A*>(p.scratch);
  const int64_t rows = f.B * f.T * f.H;
  delta_kernel<T, A><<<static_cast<unsigned>(blocks(rows, kWarps)), kThreads, 0, stream>>>(
      geo(f, tq), o, d_o, d_lse, delta);
  if (cudaError_t e = cudaGetLastError(); e != cudaSuccess) return e;

  const int64_t grid_kv = blocks(f.S, tkv.bk) * f.KV * f.B;
  auto* kv = &backward_kv_kernel<T, A>;
  if (cudaError_t e = prepare(kv, grid_kv, tkv.smem); e != cudaSuccess) return e;
  kv<<<static_cast<unsigned>(grid_kv), kThreads, tkv.smem, stream>>>(
      geo(f, tkv), q, k, v, lse, d_o, delta, static_cast<T*>(p.dk), static_cast<T*>(p.dv));
  if (cudaError_t e = cudaGetLastError(); e != cudaSuccess) return e;

  const int64_t grid_q = blocks(f.T, tq.bq) * f.H * f.B;
  auto* qk = &backward_q_kernel<T, A>;
  if (cudaError_t e = prepare(qk, grid_q, tq.smem); e != cudaSuccess) return e;
  qk<<<static_cast<unsigned>(grid_q), kThreads, tq.smem, stream>>>(geo(f, tq), q, k, v, lse, d_o,
                                                                   delta, static_cast<T*>(p.dq));
  return cudaGetLastError();
}

}  // namespace

cudaError_t launch_flash_backward(Elem e, const FlashGeometry& g, const FlashTiles& kv_tiles,
                                  const FlashTiles& q_tiles, const FlashGradPointers& p,
                                  cudaStream_t stream) {
  // No query: no key gets a gradient (dk = dv = 0, the caller's memset); dq is empty.
  if (g.B * g.T * g.H == 0) return cudaSuccess;
  switch (e) {
    case Elem::kF16:
      return backward<__half, float>(g, kv_tiles, q_tiles, p, stream);
    case Elem::kBF16:
      return backward<__nv_bfloat16, float>(g, kv_tiles, q_tiles, p, stream);
    case Elem::kF32:
      return backward<float, float>(g, kv_tiles, q_tiles, p, stream);
    case Elem::kF64:
      return backward<double, double>(g, kv_tiles, q_tiles, p, stream);
  }
  return cudaErrorInvalidValue;
}

}  // namespace graft::cuda::attention
