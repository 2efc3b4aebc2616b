// graft's own FlashAttention-2 style kernels for flash_attention / flash_attention_grad
// (core/primitives/attention.h), for what cuDNN's fused attention does not take: f32 and f64
// (graft's primitive dtypes), and f16 / bf16 cases cuDNN refuses (odd head_dim, ...).
//
//   forward    one block per (query tile, head, batch): online softmax over key tiles up to
//              the causal diagonal (query t at position S - T + t), o and lse written once.
//   backward   delta = rowsum(do * o) - dlse (a small kernel), then two passes that
//              recompute p = exp(scale q.k - lse) tile by tile: per key tile, dk and dv summed
//              over the G = H / KV query heads of its kv head and every query tile that sees
//              it; per query tile, dq. No atomics: results are deterministic (a second score
//              product per pass is the price).
//
// Tiles live in shared memory with any head_dim D up to what fits (D <= 256 always fits on
// sm_90 for every dtype; tile sizes shrink for large D), accumulation in f32 (f64 for f64).
// Arithmetic matches the CPU kernel (core/backend/cpu/attention_kernels.cc): q is scaled
// first, dq = scale * ds k, dk = ds^T (scale q).
//
// Launchers enqueue on `stream` and return the launch's status (no synchronization); the
// graft-level wrappers turn it into graft::Error "[cuda] ...". Built only with --config=cuda.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace graft::cuda::attention {

enum class Elem : int { kF16, kBF16, kF32, kF64 };

struct FlashGeometry {
  int64_t B, T, H, S, KV, D;  // q [B, T, H, D], k / v [B, S, KV, D], lse [B, T, H]
  double scale;
};

// Query / key tile sizes and the dynamic shared memory of one pass. bq == 0: nothing fits.
struct FlashTiles {
  int bq = 0, bk = 0;
  size_t smem = 0;
};

enum class FlashPass : int { kForward, kBackwardKV, kBackwardQ };

// The largest tiles of `pass` whose shared memory fits in `smem_limit` bytes.
FlashTiles flash_tiles(FlashPass pass, Elem e, int64_t D, size_t smem_limit);

// Scratch (bytes) the backward pass needs: delta, [B, T, H] in the accumulation type.
size_t flash_backward_scratch(Elem e, const FlashGeometry& g);

// Raw launchers (flash_forward.cu, flash_backward.cu). Pointers are device memory in graft's
// layouts, of element type `e` (lse and dlse in its accumulation type: f32 for f16 / bf16). T, S, B * H may be 0 (nothing is launched).
cudaError_t launch_flash_forward(Elem e, const FlashGeometry& g, const FlashTiles& t, const void* q,
                                 const void* k, const void* v, void* o, void* lse,
                                 cudaStream_t stream);
struct FlashGradPointers {
  const void *q, *k, *v, *o, *lse, *d_o, *d_lse;
  void *dq, *dk, *dv;
  void* scratch;  // flash_backward_scratch bytes
};
cudaError_t launch_flash_backward(Elem e, const FlashGeometry& g, const FlashTiles& kv_tiles,
                                  const FlashTiles& q_tiles, const FlashGradPointers& p,
                                  cudaStream_t stream);

// graft-level entry points (flash_attention.cc): pick tiles for `device`, launch, check.
// Throw graft::Error "[cuda] ..." when D needs more shared memory than the device has or a
// launch fails.
void flash_forward(int device, cudaStream_t stream, Elem e, const FlashGeometry& g, const void* q,
                   const void* k, const void* v, void* o, void* lse);
void flash_backward(int device, cudaStream_t stream, Elem e, const FlashGeometry& g,
                    const FlashGradPointers& p);

}  // namespace graft::cuda::attention
