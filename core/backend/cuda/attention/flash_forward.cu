// flash_attention's forward kernel (flash_attention.h).
#include "core/backend/cuda/attention/flash_common.cuh"

namespace graft::cuda::attention {
namespace {

// One (query tile, head, batch): online softmax over the visible key tiles.
template <typename T, typename A>
__global__ void __launch_bounds__(kThreads)
    forward_kernel(Geo g, const T* q, const T* k, const T* v, T* o, A* lse) {
  extern __shared__ unsigned char smem_raw[];
  A* qs = reinterpret_cast<A*>(smem_raw);
  A* os = qs + g.bq * g.dp;
  A* ks = os + g.bq * g.dp;
  A* vs = ks + g.bk * g.dp;
  A* ss = vs + g.bk * g.dp;
  A* m = ss + g.bq * g.bk;
  A* l = m + g.bq;
  A* alpha = l + g.bq;

  const int64_t tiles = (g.T + g.bq - 1) / g.bq;
  const int64_t blk = blockIdx.x;
  const int64_t t0 = (blk % tiles) * g.bq, h = (blk / tiles) % g.H, b = blk / tiles / g.H;
  const int64_t j = h / g.G;
  const int rows = static_cast<int>(imin(g.bq, g.T - t0));
  const int D = static_cast<int>(g.D);
  const int64_t q_row = g.H * g.D, k_row = g.KV * g.D;

  load_tile<T, A>(qs, q + ((b * g.T + t0) * g.H + h) * g.D, q_row, rows, g,
                  static_cast<A>(g.scale));
  for (int i = threadIdx.x; i < rows * D; i += kThreads) os[(i / D) * g.dp + i % D] = 0;
  for (int r = threadIdx.x; r < rows; r += kThreads) {
    m[r] = neg_inf<A>();
    l[r] = 0;
  }
  const int64_t offset = g.S - g.T;  // query t sees keys 0 .. offset + t
  const int64_t last = offset + t0 + rows - 1;
  for (int64_t s0 = 0; s0 <= last; s0 += g.bk) {
    const int ns = static_cast<int>(imin(g.bk, g.S - s0));
    __syncthreads();  // the previous tile's readers are done
    load_tile<T, A>(ks, k + ((b * g.S + s0) * g.KV + j) * g.D, k_row, ns, g, A(1));
    load_tile<T, A>(vs, v + ((b * g.S + s0) * g.KV + j) * g.D, k_row, ns, g, A(1));
    __syncthreads();
    for (int i = threadIdx.x; i < rows * g.bk; i += kThreads) {
      const int r = i / g.bk, c = i - r * g.bk;
      const bool visible = c < ns && s0 + c <= offset + t0 + r;
      ss[i] = visible ? dot(qs + r * g.dp, ks + c * g.dp, D) : neg_inf<A>();
    }
    __syncthreads();
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    for (int r = warp; r < rows; r += kWarps) {
      A* row = ss + r * g.bk;
      A mx = neg_inf<A>();
      for (int c = lane; c < ns; c += 32) mx = max(mx, row[c]);
      // Every row sees key 0 in the first tile, so m_new is finite from then on.
      const A m_new = max(m[r], warp_max(mx));
      A sum = 0;
      for (int c = lane; c < g.bk; c += 32) {
        const A p = c < ns ? exp_acc(row[c] - m_new) : A(0);  // exp(-inf) = 0: masked
        row[c] = p;
        sum += p;
      }
      sum = warp_sum(sum);
      if (lane == 0) {
        const A a = exp_acc(m[r] - m_new);  // 0 on the first tile (m = -inf)
        l[r] = l[r] * a + sum;
        m[r] = m_new;
        alpha[r] = a;
      }
    }
    __syncthreads();
    for (int i = threadIdx.x; i < rows * D; i += kThreads) {
      const int r = i / D, d = i - r * D;
      const A* p = ss + r * g.bk;
      A acc = os[r * g.dp + d] * alpha[r];
      for (int c = 0; c < ns; ++c) acc += p[c] * vs[c * g.dp + d];
      os[r * g.dp + d] = acc;
    }
  }
  __syncthreads();
  for (int i = threadIdx.x; i < rows * D; i += kThreads) {
    const int r = i / D, d = i - r * D;
    store(o + ((b * g.T + t0 + r) * g.H + h) * g.D + d, os[r * g.dp + d] / l[r]);
  }
  for (int r = threadIdx.x; r < rows; r += kThreads) {
    store(lse + (b * g.T + t0 + r) * g.H + h, m[r] + log_acc(l[r]));
  }
}

template <typename T, typename A>
cudaError_t forward(const FlashGeometry& f, const FlashTiles& t, const void* q, const void* k,
                    const void* v, void* o, void* lse, cudaStream_t stream) {
  const Geo g = geo(f, t);
  const int64_t grid = blocks(f.T, t.bq) * f.H * f.B;
  auto* kernel = &forward_kernel<T, A>;
  if (cudaError_t e = prepare(kernel, grid, t.smem); e != cudaSuccess) return e;
  kernel<<<static_cast<unsigned>(grid), kThreads, t.smem, stream>>>(
      g, static_cast<const T*>(q), static_cast<const T*>(k), static_cast<const T*>(v),
      static_cast<T*>(o), static_cast<A*>(lse));
  return cudaGetLastError();
}

}  // namespace

cudaError_t launch_flash_forward(Elem e, const FlashGeometry& g, const FlashTiles& t, const void* q,
                                 const void* k, const void* v, void* o, void* lse,
                                 cudaStream_t stream) {
  if (g.B * g.T * g.H == 0) return cudaSuccess;
  switch (e) {
    case Elem::kF16:
      return forward<__half, float>(g, t, q, k, v, o, lse, stream);
    case Elem::kBF16:
      return forward<__nv_bfloat16, float>(g, t, q, k, v, o, lse, stream);
    case Elem::kF32:
      return forward<float, float>(g, t, q, k, v, o, lse, stream);
    case Elem::kF64:
      return forward<double, double>(g, t, q, k, v, o, lse, stream);
  }
  return cudaErrorInvalidValue;
}

}  // namespace graft::cuda::attention
