// launch_threefry2x32 (random.h): one thread per 4 counters (16-byte loads and stores when
// the buffers allow), the CPU's block function (core/backend/threefry_block.h).
#include "core/backend/cuda/kernels/elementwise_device.h"
#include "core/backend/threefry_block.h"
#include "core/backend/cuda/kernels/random.h"

namespace graft::cuda {
namespace {

constexpr int V = 4;
using Pack4 = ew::Pack<uint32_t, V>;

// s1 / s2: 0 when that key word is a scalar, 1 when it has one word per counter. Packs
// [0, n_vec) use vector accesses (all per-counter buffers 16-byte aligned), the rest scalar.
__global__ void __launch_bounds__(ew::kThreads)
    threefry_kernel(const uint32_t* k1, int64_t s1, const uint32_t* k2, int64_t s2,
                    const uint32_t* x1, const uint32_t* x2, uint32_t* y1, uint32_t* y2, int64_t n,
                    int64_t n_vec) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  const int64_t t = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  for (int64_t p = t; p < n_vec; p += stride) {
    Pack4 a = reinterpret_cast<const Pack4*>(x1)[p];
    Pack4 b = reinterpret_cast<const Pack4*>(x2)[p];
    Pack4 ka, kb;
    if (s1) {
      ka = reinterpret_cast<const Pack4*>(k1)[p];
    } else {
      for (int k = 0; k < V; ++k) ka.v[k] = k1[0];
    }
    if (s2) {
      kb = reinterpret_cast<const Pack4*>(k2)[p];
    } else {
      for (int k = 0; k < V; ++k) kb.v[k] = k2[0];
    }
#pragma unroll
    for (int k = 0; k < V; ++k) threefry2x32_block(ka.v[k], kb.v[k], a.v[k], b.v[k]);
    reinterpret_cast<Pack4*>(y1)[p] = a;
    reinterpret_cast<Pack4*>(y2)[p] = b;
  }
  for (int64_t i = n_vec * V + t; i < n; i += stride) {
    uint32_t a = x1[i], b = x2[i];
    threefry2x32_block(k1[i * s1], k2[i * s2], a, b);
    y1[i] = a;
    y2[i] = b;
  }
}

}  // namespace

void launch_threefry2x32(const uint32_t* k1, bool k1_scalar, const uint32_t* k2, bool k2_scalar,
                         const uint32_t* x1, const uint32_t* x2, uint32_t* y1, uint32_t* y2,
                         int64_t n, cudaStream_t stream) {
  if (n <= 0) return;
  const bool vec = ew::aligned_to(x1, 16) && ew::aligned_to(x2, 16) && ew::aligned_to(y1, 16) &&
                   ew::aligned_to(y2, 16) && (k1_scalar || ew::aligned_to(k1, 16)) &&
                   (k2_scalar || ew::aligned_to(k2, 16));
  const int64_t n_vec = vec ? n / V : 0;
  threefry_kernel<<<ew::blocks_for(vec ? n_vec + n % V : n), ew::kThreads, 0, stream>>>(
      k1, k1_scalar ? 0 : 1, k2, k2_scalar ? 0 : 1, x1, x2, y1, y2, n, n_vec);
  check(cudaGetLastError(), "threefry2x32 kernel launch");
}

}  // namespace graft::cuda
